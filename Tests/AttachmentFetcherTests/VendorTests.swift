import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// The vendors beyond Braze and MoEngage (whose keys `PayloadTests` covers), each with the
/// example shapes of the vendors' documentation, fetched for real from the mock CDN.
@Suite("Vendors: Airship, OneSignal, Firebase, CleverTap, Iterable, Customer.io", .timeLimit(.minutes(2)))
struct VendorTests {
    /// `URL` in a template stands for a media URL on the fixture's mock CDN.
    static func payload(_ template: String, _ url: String) -> Data {
        Data(template.replacingOccurrences(of: "URL", with: url).utf8)
    }

    @Test(
        "Each vendor's attachment key is fetched, and the file is named by its bytes",
        arguments: [
            ("airship", #"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"url":"URL"}}"#),
            ("airship", #"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"url":["URL"],"options":{"crop":{"x":0,"y":0,"width":1,"height":1}}}}"#),
            ("onesignal", #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"att":{"id1":"URL"}}"#),
            ("onesignal", #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"os_data":{"i":"abc","att":{"id1":"URL"}}}"#),
            ("firebase", #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"fcm_options":{"image":"URL"}}"#),
            ("clevertap", #"{"aps":{"alert":"x","mutable-content":1},"wzrk_pn":true,"ct_mediaUrl":"URL","ct_mediaType":"image"}"#),
            ("iterable", #"{"aps":{"alert":"x","mutable-content":1},"itbl":{"templateId":1,"messageId":"m","attachment-url":"URL"}}"#),
            ("customerio", #"{"aps":{"alert":"x","mutable-content":1},"CIO":{"push":{"link":"app://x","image":"URL"}},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#),
        ])
    func vendorAttachment(vendor: String, template: String) async throws {
        try await Fixture.with { fixture in
            // The Content-Type lies (image/jpeg): only the bytes, a PNG, decide the suffix.
            let url = fixture.server.url("/media/c528c899_720_960.png?bytes=7000&content_type=image/jpeg")
            let outcome = await fixture.fetcher.process(Self.payload(template, url))
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
            #expect(outcome.vendor == Vendor(vendor))
            #expect(outcome.attachments.count == 1)
            #expect(outcome.attachments.first?.mime == "image/png")
            #expect(outcome.attachments.first?.path.hasSuffix(".png") == true)
            #expect(outcome.attachments.first?.bytes == 7000)
            #expect(outcome.warningsBesidesPlainHTTP.isEmpty)
        }
    }

    @Test("Airship's several attachments all arrive, in the payload's order, as separate files")
    func airshipSeveralAttachments() async throws {
        try await Fixture.with { fixture in
            let first = fixture.server.url("/media/1.jpg?bytes=3000")
            let second = fixture.server.url("/media/2.gif?bytes=4000")
            let payload = Data(#"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"urls":[{"url":"\#(first)","url_id":"a"},{"url":"\#(second)","url_id":"b"}],"thumbnail_id":"a"}}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .attached)
            #expect(outcome.vendor == .airship)
            #expect(outcome.attachments.map(\.url) == [first, second])
            #expect(outcome.attachments.map(\.mime) == ["image/jpeg", "image/gif"])
            #expect(outcome.attachments.map(\.bytes) == [3000, 4000])
            #expect(Set(outcome.attachments.map(\.path)).count == 2)
            #expect(fixture.filesLeft().count == 2)
            #expect(fixture.server.stats().requests == 2)
        }
    }

    @Test("Of several attachments (OneSignal's, which skips one that fails), one failing is a warning; all failing is the original with the first failure")
    func oneSignalPartialFailure() async throws {
        try await Fixture.with { fixture in
            let good = fixture.server.url("/media/ok.png?bytes=3000")
            let missing = fixture.server.url("/media/gone.jpg?status=404")
            let reset = fixture.server.url("/media/cut.mp4?bytes=90000&reset_after=1000")
            func oneSignal(_ urls: [String]) -> Data {
                let list = urls.enumerated().map { "\"id\($0)\":\"\($1)\"" }.joined(separator: ",")
                return Data(#"{"aps":{"mutable-content":1,"alert":"x"},"custom":{"i":"n"},"att":{\#(list)}}"#.utf8)
            }
            let partial = await fixture.fetcher.process(oneSignal([missing, good]))
            #expect(partial.status == .attached)
            #expect(partial.attachments.map(\.url) == [good])
            #expect(partial.warnings.contains { $0.contains(missing) && $0.contains("http-status") })

            let failed = oneSignal([missing, reset])
            let none = await fixture.fetcher.process(failed)
            #expect(none.status == .original)
            #expect(none.reason == .httpStatus)
            #expect(none.detail?.hasPrefix(missing) == true)
            #expect(none.payload == failed)
            // The good file stays (it belongs to the first outcome); the failed ones left nothing.
            #expect(fixture.filesLeft().count == 1)
        }
    }

    @Test("OneSignal: attachments in the order of their ids, a repeated id once with its last URL; a filename hint that disagrees with the bytes is a warning")
    func oneSignalOrderAndHint() async throws {
        try await Fixture.with { fixture in
            let png = fixture.server.url("/media/b.png?bytes=3000&filename=f.jpg")
            let gif = fixture.server.url("/media/a.gif?bytes=2000&filename=f.gif")
            let replaced = fixture.server.url("/media/gone.gif?bytes=2000&status=404")
            let payload = Data(#"{"aps":{"alert":{"body":"B"},"mutable-content":1},"att":{"a-first":"\#(replaced)","z-second":"\#(png)","a-first":"\#(gif)"}}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .attached)
            #expect(outcome.vendor == .oneSignal)
            #expect(outcome.attachments.map(\.url) == [gif, png])
            #expect(outcome.attachments.map(\.mime) == ["image/gif", "image/png"])
            #expect(outcome.warningsBesidesPlainHTTP.count == 1)
            #expect(outcome.warningsBesidesPlainHTTP.first?.contains("'jpg'") == true)
            #expect(outcome.warningsBesidesPlainHTTP.first?.contains("image/png") == true)
        }
    }

    @Test("CleverTap's ct_mediaType that disagrees with the bytes is a warning, not a failure")
    func cleverTapWrongKind() async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/s.mp3?bytes=9000")
            let payload = Data(#"{"aps":{"alert":"x","mutable-content":1},"ct_mediaUrl":"\#(url)","ct_mediaType":"video"}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .attached)
            #expect(outcome.vendor == .cleverTap)
            #expect(outcome.warnings.contains { $0.contains("'video'") && $0.contains("audio/mpeg") })
        }
    }

    @Test(
        "Pushes of these vendors that name no attachment are no-attachment, with the vendor named",
        arguments: [
            ("airship", #"{"aps":{"alert":"x","mutable-content":1},"com.urbanairship.media_attachment":{"url":[]}}"#),
            ("airship", #"{"aps":{"alert":"x","mutable-content":1},"com.urbanairship.media_attachment":{"content":{"body":"b"}}}"#),
            ("onesignal", #"{"aps":{"alert":"x","mutable-content":1},"custom":{"i":"uuid","a":{}}}"#),
            ("onesignal", #"{"aps":{"alert":"x","mutable-content":1},"os_data":{"i":"uuid"}}"#),
            ("firebase", #"{"aps":{"alert":"x","mutable-content":1},"fcm_options":{}}"#),
            ("clevertap", #"{"aps":{"alert":"x","mutable-content":1},"wzrk_pn":true}"#),
            ("iterable", #"{"aps":{"alert":"x","mutable-content":1},"itbl":{"messageId":"m"}}"#),
            ("customerio", #"{"aps":{"alert":"x","mutable-content":1},"CIO":{"push":{"link":"app://x","image":""}}}"#),
        ])
    func noAttachment(vendor: String, text: String) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Data(text.utf8))
            #expect(outcome.reason == .noAttachment)
            #expect(outcome.vendor == Vendor(vendor))
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test(
        "Wrongly typed keys of these vendors are invalid-payload, without a request",
        arguments: [
            #"{"aps":{"mutable-content":1},"com.urbanairship.media_attachment":"https://x/y.jpg"}"#,
            #"{"aps":{"mutable-content":1},"com.urbanairship.media_attachment":{"url":["URL",7]}}"#,
            #"{"aps":{"mutable-content":1},"com.urbanairship.media_attachment":{"urls":[{"url":7}]}}"#,
            #"{"aps":{"mutable-content":1},"com.urbanairship.media_attachment":{"url":"URL","options":{"hidden":"yes"}}}"#,
            #"{"aps":{"mutable-content":1},"att":"URL"}"#,
            #"{"aps":{"mutable-content":1},"os_data":{"att":{"id":3}}}"#,
            #"{"aps":{"mutable-content":1},"fcm_options":{"image":["URL"]}}"#,
            #"{"aps":{"mutable-content":1},"ct_mediaUrl":{"u":"URL"}}"#,
            #"{"aps":{"mutable-content":1},"itbl":{"attachment-url":1}}"#,
            #"{"aps":{"mutable-content":1},"CIO":{"push":"URL"}}"#,
        ])
    func malformed(template: String) async throws {
        try await Fixture.with { fixture in
            let payload = Self.payload(template, fixture.server.url("/media/x.jpg?bytes=100"))
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .invalidPayload)
            #expect(outcome.payload == payload)
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test("An Iterable ghost push (uninstall tracking) costs no request, even with an attachment")
    func iterableGhostPush() async throws {
        try await Fixture.with { fixture in
            let payload = Self.payload(
                #"{"aps":{"content-available":1},"itbl":{"isGhostPush":true,"attachment-url":"URL"}}"#,
                fixture.server.url("/media/x.jpg?bytes=100"))
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .internalPush)
            #expect(outcome.vendor == .iterable)
            #expect(fixture.server.stats().requests == 0)
        }
    }
}
