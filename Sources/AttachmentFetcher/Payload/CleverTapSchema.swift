/// CleverTap: a push is CleverTap's when `ct_mediaUrl` or its push marker `wzrk_pn` is present
/// at the top level. The attachment is `ct_mediaUrl` with a class hint `ct_mediaType`
/// (`image`, `gif`, `audio` or `video`).
struct CleverTapSchema: VendorSchema {
    var vendor: Vendor { .cleverTap }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["ct_mediaUrl"] != nil || payload["wzrk_pn"] != nil else { return nil }
        let type = payload["ct_mediaType"]?.string.flatMap { $0.isEmpty ? nil : ClaimedType.kind($0) }
        return .attachment(payload["ct_mediaUrl"], at: "ct_mediaUrl", claimedType: type)
    }
}
