import Foundation

/// OneSignal: a push is OneSignal's when `os_data` is present (its current format), or `att` at
/// the top level, or `custom.i` (the notification id of its original format). The attachments
/// are the values of `os_data.att` in the current format and of the top-level `att` in the
/// original one, as OneSignal's own extension reads them: an object from attachment id to URL,
/// taken in the order of the ids so that the outcome does not depend on how the JSON was parsed.
/// A `filename` query item in the URL (`?filename=f.png`) is OneSignal's type hint.
///
/// OneSignal's own extension also accepts the name of a file bundled with the app instead of a
/// URL; there is no app bundle here, so such a value is an `invalid-url`.
struct OneSignalSchema: VendorSchema {
    var vendor: Vendor { .oneSignal }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        let osData = payload["os_data"]
        let legacyMarker = payload[path: ["custom", "i"]]?.string != nil
        guard osData != nil || payload["att"] != nil || legacyMarker else { return nil }
        let (path, attachments): (String, JSONValue?)
        // The legacy minified form (no `aps.alert`) takes its attachments from `at`, beside `m`
        // (`OSNotification.parseRemoteSlient`).
        let alertless = !payload.hasAPSAlert
        if let osData {
            guard let object = osData.object else { return .malformed("os_data is not an object") }
            if alertless, let buttons = object["buttons"]?.object {
                (path, attachments) = ("os_data.buttons.at", buttons["at"])
            } else {
                (path, attachments) = ("os_data.att", object["att"])
            }
        } else if alertless, payload["m"] != nil {
            (path, attachments) = ("at", payload["at"])
        } else {
            (path, attachments) = ("att", payload["att"])
        }
        guard let attachments else { return .noAttachment }
        guard let byID = attachments.object else { return .malformed("\(path) is not an object") }
        var requests: [RequestedAttachment] = []
        for member in byID.sortedByKey {
            guard let url = member.value.string else { return .malformed("\(path).\(member.key) is not a string") }
            if url.isEmpty { continue }
            requests.append(RequestedAttachment(url: url, claimedType: Self.filenameHint(in: url)))
        }
        return requests.isEmpty ? .noAttachment : .attachments(requests)
    }

    /// The suffix of the URL's `filename` query item ("png" for `?filename=f.png`), if any.
    static func filenameHint(in url: String) -> ClaimedType? {
        guard url.contains("filename="),
            let name = URLComponents(string: url)?.queryItems?.first(where: { $0.name == "filename" })?.value,
            let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex
        else { return nil }
        return .fileExtension(String(name[name.index(after: dot)...]))
    }
}
