@testable import AttachmentFetcher
import Foundation
import Testing

/// A payload pasted in the wrong shape (an iOS payload without its `aps`, an Android data map
/// with JSON values, Android keys beside `aps`) is read as a device would receive it, and a
/// warning says what no device receives, so that a campaign team does not take the verdict for
/// the one its users get.
@Suite("Payloads in a shape no device receives: read as they stand, with a warning")
struct PayloadShapeTests {
    private func prepared(_ text: String, judging platforms: [Platform] = []) -> PreparedPayload {
        PreparedPayload(Data(text.utf8), maximumAttachments: 4, judging: platforms)
    }

    private func reason(_ prepared: PreparedPayload) -> FallbackReason? {
        if case .original(let reason, _) = prepared.next { return reason }
        return nil
    }

    @Test(
        "An iOS vendor's attachment keys without aps: iOS shows nothing and fetches nothing, and a warning says why",
        arguments: [
            (#"{"ab":{"att":{"url":"https://cdn.example/x.jpg","type":"jpg"}},"ab_uri":"myapp://x"}"#, Vendor.braze),
            (#"{"wzrk_id":"w","ct_mediaUrl":"https://cdn.example/a.jpg","ct_mediaType":"image"}"#, .cleverTap),
            (#"{"moengage":{"cid":"c","media-attachment":"https://cdn.example/a.jpg","media-type":"image"}}"#, .moengage),
        ])
    func iOSKeysWithoutAPS(text: String, vendor: Vendor) {
        let payload = prepared(text)
        #expect(payload.vendor == vendor)
        #expect(payload.notification?.platform == .ios)
        #expect(reason(payload) == .internalPush)
        #expect(
            payload.warnings.contains(
                "the payload has no aps: iOS shows no alert for it and runs no service extension, so its attachment is not fetched (an APNs payload carries alert and mutable-content in aps)"),
            "\(payload.warnings)")
    }

    @Test("An iOS push without aps that names no attachment (an internal one) gets no such warning")
    func internalWithoutAPS() {
        let payload = prepared(#"{"ab":{"c":"x"}}"#)
        #expect(payload.vendor == .braze)
        #expect(!payload.warnings.contains { $0.contains("has no aps") }, "\(payload.warnings)")
    }

    @Test(
        "An Android data map whose values are not all strings: FCM delivers only strings, and a warning names the keys",
        arguments: [
            // OneSignal's iOS keys pasted without aps: `custom` and `att` are objects.
            (#"{"custom":{"i":"n","u":"https://x.example"},"att":{"id":"https://cdn.example/a.jpg"},"buttons":[{"i":"y","n":"Yes"}]}"#,
             "custom, att and buttons are not strings: an FCM data map's values are strings only (FCM refuses other values), so no device receives this payload as it stands; an iOS payload has aps"),
            (#"{"wzrk_pn":true,"nt":"T","nm":"B","wzrk_bc":3,"wzrk_acts":[{"l":"Open","id":"o","dl":"myapp://y"}],"pr":"max"}"#,
             "wzrk_pn, wzrk_bc and wzrk_acts are not strings: an FCM data map's values are strings only (FCM refuses other values), so no device receives this payload as it stands; an iOS payload has aps"),
            (#"{"_ab":"true","t":"T","a":"B","a1":1,"a2":2,"a3":3,"a4":4,"a5":null}"#,
             "a1, a2, a3 and 2 more are not strings: an FCM data map's values are strings only (FCM refuses other values), so no device receives this payload as it stands; an iOS payload has aps"),
            (#"{"message":{"data":{"_ab":"true","t":"T","a":"B","ab_bc":5}}}"#,
             "ab_bc is not a string: an FCM data map's values are strings only (FCM refuses other values), so no device receives this payload as it stands; an iOS payload has aps"),
        ])
    func dataMapWithJSONValues(text: String, warning: String) {
        let payload = prepared(text)
        #expect(payload.notification?.platform == .android)
        #expect(payload.warnings.contains(warning), "\(payload.warnings)")
    }

    @Test(
        "An Android payload as FCM delivers it (string values, or an HTTP v1 message with a notification) gets no shape warning",
        arguments: [
            #"{"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example/a.jpg"}"#,
            #"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_acts":"[{\"l\":\"Open\",\"id\":\"o\"}]"}"#,
            #"{"message":{"notification":{"title":"T","body":"B","image":"https://cdn.example/a.jpg"},"data":{"k":"v"}}}"#,
            #"{"message":{"data":{"_ab":"true","t":"T","a":"B"}}}"#,
        ])
    func deliveredShapes(text: String) {
        let payload = prepared(text)
        #expect(payload.notification?.platform == .android)
        #expect(!payload.warnings.contains { $0.contains("FCM data map's values") || $0.contains("no aps") }, "\(payload.warnings)")
    }

    @Test("Android keys beside aps: iOS reads the APNs payload, and a warning says the vendor's Android keys are not read there")
    func androidKeysBesideAPS() {
        let payload = prepared(#"{"aps":{"alert":"iOS body"},"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example/x.jpg"}"#)
        #expect(payload.notification?.platform == .ios)
        #expect(payload.notification?.body == "iOS body")
        #expect(reason(payload) == .noAttachment)
        #expect(
            payload.warnings.contains(
                "the payload has aps, so it is read as iOS's, but its other keys are braze's Android ones, which no iOS SDK reads: braze's iOS keys name its attachment on iOS"),
            "\(payload.warnings)")
        // An iOS payload of a vendor with keys of its own gets no such warning.
        let iOS = prepared(#"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"https://cdn.example/x.jpg"}}}"#)
        #expect(!iOS.warnings.contains { $0.contains("Android ones") }, "\(iOS.warnings)")
    }
}
