/// CleverTap: a push is CleverTap's when `ct_mediaUrl` or its push marker `wzrk_pn` is present
/// at the top level. The attachment is `ct_mediaUrl` with a class hint `ct_mediaType`
/// (`image`, `gif`, `audio` or `video`), without which its extension attaches nothing.
///
/// Internal: the dashboard's test payloads (`wzrk_inapp`, `wzrk_inbox`, `wzrk_adunit`,
/// `wzrk_inapp_s3_url`), which the SDK handles (`_checkAndHandleTestPushPayload`), and which show
/// nothing unless they carry an `aps.alert`: iOS shows that all the same (a warning says so).
struct CleverTapSchema: VendorSchema {
    var vendor: Vendor { .cleverTap }

    /// The keys of CleverTap's test payloads, on iOS and Android.
    static let testPayloadKeys = ["wzrk_inapp", "wzrk_inbox", "wzrk_adunit", "wzrk_inapp_s3_url"]

    /// The internal push `payload` is when it is one of CleverTap's test payloads.
    static func testPayload(_ payload: JSONObject) -> PayloadRecognition? {
        testPayloadKeys.first { payload[$0] != nil }.map { .internalPush("CleverTap test payload (\($0))") }
    }

    /// The same on iOS, which shows an `aps.alert` whatever the SDK does: a test payload with
    /// one is no internal push.
    static func iOSTestPayload(_ payload: JSONObject) -> PayloadRecognition? {
        payload.hasAPSAlert ? nil : testPayload(payload)
    }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["ct_mediaUrl"] != nil || payload["wzrk_pn"] != nil else { return nil }
        if let test = Self.iOSTestPayload(payload) { return test }
        let type = payload["ct_mediaType"]?.string.flatMap { $0.isEmpty ? nil : ClaimedType.kind($0) }
        let recognition = PayloadRecognition.attachment(payload["ct_mediaUrl"], at: "ct_mediaUrl", claimedType: type)
        // `CTNotificationServiceExtension` stops at `mediaUrl == nil || mediaType == nil`.
        if case .attachments = recognition, payload["ct_mediaType"] == nil || payload["ct_mediaType"] == .null {
            return .notAttached("CleverTap's extension attaches nothing to a push without ct_mediaType")
        }
        // It compares the value with `isEqualToString:`, which a number, an array or an object
        // does not answer: the extension stops there, and iOS shows the push as it came.
        if case .attachments = recognition, payload["ct_mediaType"]?.string == nil {
            return .notAttached("CleverTap's extension attaches nothing to a push whose ct_mediaType is not a string (it stops at comparing it)")
        }
        return recognition
    }
}
