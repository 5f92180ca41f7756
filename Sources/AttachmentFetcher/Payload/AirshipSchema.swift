/// Airship: a push is Airship's when `com.urbanairship.media_attachment` is present. The
/// attachments are its `url` (a string or an array of strings) or, when there is no `url`, its
/// `urls` (an array of `{url, url_id}` objects), in the order given: Airship is the one vendor
/// here that sends several attachments per push. No type hint is sent.
///
/// `thumbnail_id`, `options` (crop, time, hidden) and `content` (title, subtitle, body) are for
/// the app's extension to apply; they stay untouched in the payload.
struct AirshipSchema: VendorSchema {
    var vendor: Vendor { .airship }

    static let key = "com.urbanairship.media_attachment"

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload[Self.key] else { return nil }
        guard let media = value.object else { return .malformed("\(Self.key) is not an object") }
        let urls: [String]
        if let url = media["url"] {
            switch url {
            case .string(let single): urls = [single]
            case .array(let list):
                let strings = list.compactMap(\.string)
                guard strings.count == list.count else { return .malformed("\(Self.key).url holds a value that is not a string") }
                urls = strings
            default: return .malformed("\(Self.key).url is neither a string nor an array of strings")
            }
        } else if let entries = media["urls"] {
            guard case .array(let list) = entries else { return .malformed("\(Self.key).urls is not an array") }
            let strings = list.compactMap { $0.object?["url"]?.string }
            guard strings.count == list.count else {
                return .malformed("\(Self.key).urls holds an entry without a string url")
            }
            urls = strings
        } else {
            urls = []
        }
        let present = urls.filter { !$0.isEmpty }
        guard !present.isEmpty else { return .noAttachment }
        return .attachments(present.map { RequestedAttachment(url: $0, claimedType: nil) })
    }
}
