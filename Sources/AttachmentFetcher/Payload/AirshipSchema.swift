/// Airship: a push is Airship's when `com.urbanairship.media_attachment` is present. The
/// attachments are, as its extension's `MediaAttachmentPayload` decodes them, its `urls` (an
/// array of `{url, url_id}` objects of strings; an entry without `url` is dropped) or, when there
/// is no `urls`, its `url` (a string or an array of strings), in the order given: Airship is the
/// one vendor here that sends several attachments per push. No type hint is sent.
///
/// The extension decodes the whole object or nothing: a `thumbnail_id` that is no string, a
/// `crop` without each of `x`, `y`, `width`, `height` in 0…1, a `time` that is no number, a
/// `hidden` that is no boolean, a `content` text that is no string, and it shows the original
/// content, with no attachment and no `content` override (`malformed`, naming the field). Those
/// are for the app's extension to apply; they stay untouched in the payload.
struct AirshipSchema: VendorSchema {
    var vendor: Vendor { .airship }

    static let key = "com.urbanairship.media_attachment"

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload[Self.key] else { return nil }
        guard let media = value.object else { return .malformed("\(Self.key) is not an object") }
        // No URL at all is no attachment (the extension's decoding fails, and the content stands).
        guard media["urls"] != nil || media["url"] != nil else { return .noAttachment }
        switch Self.decode(media) {
        case .failure(let failure): return .malformed("\(failure.problem): Airship's extension decodes no attachment")
        case .success(let urls):
            let present = urls.filter { !$0.isEmpty }
            guard !present.isEmpty else { return .noAttachment }
            return .attachments(present.map { RequestedAttachment(url: $0, claimedType: nil) })
        }
    }

    /// The field `MediaAttachmentPayload` fails to decode.
    struct DecodeFailure: Error {
        var problem: String
    }

    /// The URLs `MediaAttachmentPayload` decodes from `media`, or the field it fails on (none
    /// when neither `urls` nor `url` is there: it throws then too, and the content stands).
    static func decode(_ media: JSONObject) -> Result<[String], DecodeFailure> {
        let urls: [String]
        if let entries = media["urls"] {
            // `[[String: String]]`: every value of every entry a string.
            guard case .array(let list) = entries else { return .failure(DecodeFailure(problem: "\(key).urls is not an array")) }
            var found: [String] = []
            for entry in list {
                guard case .object(let fields) = entry, fields.members.allSatisfy({ $0.value.string != nil }) else {
                    return .failure(DecodeFailure(problem: "\(key).urls holds an entry that is not an object of strings"))
                }
                if let url = fields["url"]?.string { found.append(url) }
            }
            urls = found
        } else if let url = media["url"] {
            switch url {
            case .string(let single): urls = [single]
            case .array(let list):
                let strings = list.compactMap(\.string)
                guard strings.count == list.count else { return .failure(DecodeFailure(problem: "\(key).url holds a value that is not a string")) }
                urls = strings
            default: return .failure(DecodeFailure(problem: "\(key).url is neither a string nor an array of strings"))
            }
        } else {
            return .failure(DecodeFailure(problem: "\(key) has neither urls nor url"))
        }
        if let thumbnail = media["thumbnail_id"], thumbnail.string == nil, thumbnail != .null {
            return .failure(DecodeFailure(problem: "\(key).thumbnail_id is not a string"))
        }
        if let content = media["content"], content != .null {
            guard case .object(let texts) = content else { return .failure(DecodeFailure(problem: "\(key).content is not an object")) }
            for name in ["title", "subtitle", "body"] {
                if let text = texts[name], text.string == nil, text != .null { return .failure(DecodeFailure(problem: "\(key).content.\(name) is not a string")) }
            }
        }
        if let options = media["options"], options != .null {
            guard case .object(let fields) = options else { return .failure(DecodeFailure(problem: "\(key).options is not an object")) }
            if let crop = fields["crop"], crop != .null {
                guard case .object(let box) = crop else { return .failure(DecodeFailure(problem: "\(key).options.crop is not an object")) }
                for side in ["x", "y", "width", "height"] {
                    guard case .number(let value)? = box[side], (0...1).contains(value) else {
                        return .failure(DecodeFailure(problem: "\(key).options.crop.\(side) is not a number from 0 to 1"))
                    }
                }
            }
            switch fields["time"] {
            case nil, .null?, .number?: break
            default: return .failure(DecodeFailure(problem: "\(key).options.time is not a number"))
            }
            switch fields["hidden"] {
            case nil, .null?, .bool?: break
            default: return .failure(DecodeFailure(problem: "\(key).options.hidden is not a boolean"))
            }
        }
        return .success(urls)
    }
}
