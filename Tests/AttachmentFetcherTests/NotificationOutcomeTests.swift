@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Notification content in outcomes: invisible pushes cost nothing, Android pictures are fetched, JSON", .timeLimit(.minutes(2)))
struct NotificationOutcomeTests {
    /// `URL` in a template stands for a picture on the fixture's mock CDN.
    static func payload(_ template: String, _ url: String) -> Data {
        Data(template.replacingOccurrences(of: "URL", with: url).utf8)
    }

    @Test(
        "A push that shows nothing makes no request, even with a picture: internal-push, visible false",
        arguments: [
            ("braze", #"{"_ab":"true","t":"T","ab_iu":"URL"}"#),
            ("braze", #"{"_ab":"true","appboy_uninstall_tracking":"true","ab_iu":"URL"}"#),
            ("moengage", #"{"push_from":"moengage","gcm_title":"T","gcm_alert":"B","gcm_image_url":"URL"}"#),
            ("airship", #"{"com.urbanairship.push.ALERT":"","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"URL\"}"}"#),
            ("onesignal", #"{"title":"T","bicon":"URL","custom":"{\"i\":\"n\"}"}"#),
            ("firebase", #"{"gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"URL"}"#),
            ("firebase", #"{"gcm.n.e":"1","gcm.n.noui":"1","gcm.n.image":"URL"}"#),
            ("clevertap", #"{"wzrk_pn":"true","wzrk_pn_s":"true","nm":"B","wzrk_bp":"URL"}"#),
            ("iterable", #"{"title":"T","itbl":"{\"attachment-url\":\"URL\"}"}"#),
            ("customerio", #"{"title":"T","body":"B","image":"URL","CIO-Delivery-ID":"d"}"#),
            ("braze", #"{"aps":{"mutable-content":1},"ab":{"att":{"url":"URL"}}}"#),
            ("onesignal", #"{"aps":{"mutable-content":1,"badge":1},"att":{"a":"URL"}}"#),
        ])
    func invisibleMakesNoRequest(vendor: String, template: String) async throws {
        try await Fixture.with { fixture in
            let payload = Self.payload(template, fixture.server.url("/media/p.png?bytes=2000"))
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .original)
            #expect(outcome.reason == .internalPush, "\(outcome.detail ?? "")")
            #expect(outcome.vendor == Vendor(vendor))
            #expect(outcome.notification?.visible == false)
            #expect(outcome.payload == payload)
            #expect(fixture.server.stats().requests == 0)
            #expect(fixture.server.stats().connectionsAccepted == 0)
        }
    }

    @Test(
        "Each vendor's Android picture is fetched, and the notification says android",
        arguments: [
            ("braze", #"{"_ab":"true","t":"T","a":"B","ab_iu":"URL"}"#),
            ("braze", #"{"_ab":"true","t":"T","a":"B","extra":"{\"appboy_image_url\":\"URL\"}"}"#),
            ("moengage", #"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B","gcm_image_url":"URL"}"#),
            ("airship", #"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"URL\"}"}"#),
            ("onesignal", #"{"title":"T","alert":"B","bicon":"URL","custom":"{\"i\":\"n\"}"}"#),
            ("firebase", #"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"URL"}"#),
            ("firebase", #"{"message":{"notification":{"title":"T","body":"B","image":"URL"}}}"#),
            ("firebase", #"{"android":{"notification":{"title":"T","body":"B","image":"URL"}}}"#),
            ("clevertap", #"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"URL"}"#),
            ("iterable", #"{"title":"T","body":"B","itbl":"{\"attachment-url\":\"URL\"}"}"#),
            ("customerio", #"{"title":"T","body":"B","image":"URL","CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#),
        ])
    func androidPicture(vendor: String, template: String) async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/p.png?bytes=2000")
            let outcome = await fixture.fetcher.process(Self.payload(template, url))
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(outcome.vendor == Vendor(vendor))
            #expect(outcome.attachments.map(\.url) == [url])
            #expect(outcome.notification?.platform == .android)
            #expect(outcome.notification?.visible == true)
            #expect(outcome.notification?.imageURL == url)
            #expect(outcome.notification?.body == "B")
            // No APNs warning for an Android payload; Android's own about cleartext traffic.
            #expect(outcome.warningsBesidesPlainHTTP.isEmpty, "\(outcome.warnings)")
            #expect(outcome.warnings.count == 1 && outcome.warnings[0].contains("cleartext traffic"), "\(outcome.warnings)")
            #expect(fixture.server.stats().requests == 1)
        }
    }

    /// An Airship iOS push with two media and a `content` override; `URL1`/`URL2` stand for them.
    static let airshipTwoMedia =
        #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"_":"s","com.urbanairship.media_attachment":{"urls":[{"url":"URL1","url_id":"a"},{"url":"URL2","url_id":"b"}],"content":{"title":"T2","body":"B2"}}}"#

    @Test("Airship iOS attaches all of a push's media or none: one that fails and the original shows, its content override too; all ready and the override shows")
    func airshipAllOrNothing() async throws {
        try await Fixture.with { fixture in
            func payload(_ second: String) -> Data {
                Data(Self.airshipTwoMedia.replacingOccurrences(of: "URL1", with: fixture.server.url("/media/a.png?bytes=2000"))
                    .replacingOccurrences(of: "URL2", with: fixture.server.url(second)).utf8)
            }
            let failed = await fixture.fetcher.process(payload("/media/b.png?status=404"))
            #expect(failed.status == .original)
            #expect(failed.reason == .httpStatus, "\(failed.detail ?? "")")
            #expect(failed.detail?.contains("Airship's extension attaches all of a push's media or none") == true, "\(failed.detail ?? "")")
            #expect(failed.attachments.isEmpty)
            #expect(Set(failed.failures.map(\.url)).count == 2)
            #expect(failed.notification?.title == "T" && failed.notification?.body == "B")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: fixture.directory))?.isEmpty == true)
            let ready = await fixture.fetcher.process(payload("/media/c.png?bytes=1000"))
            #expect(ready.status == .attached)
            #expect(ready.attachments.count == 2)
            #expect(ready.notification?.title == "T2" && ready.notification?.body == "B2")
            // The extension's time running out shows the original too.
            let expired = fixture.fetcher.original(payload("/media/c.png"), startedAt: .now, .deadline, "serviceExtensionTimeWillExpire")
            #expect(expired.notification?.title == "T" && expired.notification?.body == "B")
        }
    }

    @Test("An Airship iOS push naming more media than the per-payload limit is not called attached: its extension attaches all or none, and those past the limit are not fetched")
    func airshipAllOrNothingPastTheLimit() async throws {
        try await Fixture.with(configure: { $0.maximumAttachmentsPerPayload = 2 }) { fixture in
            let urls = (1...3).map { fixture.server.url("/media/m\($0).png?bytes=1000") }
            let media = urls.map { "\"\($0)\"" }.joined(separator: ",")
            let payload = Data(
                #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"_":"s","com.urbanairship.media_attachment":{"url":[MEDIA],"content":{"title":"T2"}}}"#
                    .replacingOccurrences(of: "MEDIA", with: media).utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .original, "\(outcome.attachments.map(\.url))")
            #expect(outcome.reason == .tooLarge, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(outcome.detail?.contains("3 attachments") == true, "\(outcome.detail ?? "")")
            #expect(outcome.detail?.contains("all of a push's media or none") == true, "\(outcome.detail ?? "")")
            #expect(outcome.notification?.title == "T")
            #expect(outcome.attachments.isEmpty)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: fixture.directory))?.isEmpty == true)
            // Within the limit, all ready: attached, with the override.
            let two = Data(
                #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"_":"s","com.urbanairship.media_attachment":{"url":[MEDIA],"content":{"title":"T2"}}}"#
                    .replacingOccurrences(of: "MEDIA", with: urls.prefix(2).map { "\"\($0)\"" }.joined(separator: ",")).utf8)
            let attached = await fixture.fetcher.process(two)
            #expect(attached.status == .attached && attached.attachments.count == 2)
            #expect(attached.notification?.title == "T2")
        }
    }

    @Test("Content warnings join the outcome's warnings; the picture is still fetched and the bytes untouched")
    func warningsInOutcome() async throws {
        try await Fixture.with { fixture in
            let payload = Self.payload(
                #"{"_ab":"true","t":"T","a":"B","ab_bc":"three","extra":"{oops","ab_iu":"URL"}"#,
                fixture.server.url("/media/p.png?bytes=2000"))
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .attached)
            #expect(outcome.warnings.contains("ab_bc is not an integer"))
            #expect(outcome.warnings.contains { $0.hasPrefix("extra is not valid JSON") })
            #expect(outcome.notification?.title == "T" && outcome.notification?.badge == nil)
            #expect(outcome.payload == payload)
        }
    }

    @Test("A plain APNs push (no vendor's keys) shows its aps content on iOS; no aps and no vendor, no notification; a vendor with no attachment still has one")
    func notificationPresence() async throws {
        try await Fixture.with { fixture in
            let plain = await fixture.fetcher.process(
                Data(#"{"aps":{"alert":{"title":"Order shipped","body":"Arrives Friday"},"badge":2,"sound":"default","thread-id":"orders"},"order_id":"77"}"#.utf8))
            #expect(plain.reason == .noAttachment && plain.vendor == nil)
            let content = try #require(plain.notification)
            #expect(content.platform == .ios && content.visible && content.title == "Order shipped" && content.body == "Arrives Friday")
            #expect(content.badge == .set(2) && content.sound == "default" && content.threadID == "orders")
            #expect(content.extras == ["order_id": .string("77")] && content.serviceExtension == false)
            #expect(plain.warnings.contains(PreparedPayload.noExtensionWarning))
            let silent = await fixture.fetcher.process(Data(#"{"aps":{"content-available":1}}"#.utf8))
            #expect(silent.notification?.visible == false && silent.warnings.isEmpty)
            let unknown = await fixture.fetcher.process(Data(#"{"title":"x","image":"https://cdn.test/a.jpg"}"#.utf8))
            #expect(unknown.reason == .noAttachment && unknown.notification == nil)
            let braze = await fixture.fetcher.process(Data(#"{"aps":{"alert":"x","mutable-content":1},"ab":{"c":"1"}}"#.utf8))
            #expect(braze.reason == .noAttachment && braze.notification?.body == "x" && braze.notification?.visible == true)
            let internalPush = await fixture.fetcher.process(Data(#"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#.utf8))
            #expect(internalPush.reason == .internalPush && internalPush.notification?.visible == false)
        }
    }

    static let rich: NotificationContent = {
        var content = NotificationContent(platform: .android, visible: true)
        content.title = "Sale \"now\""
        content.subtitle = "S/ub"
        content.body = "50% off café 🚀"
        content.badge = .increment(-2)
        content.sound = "default"
        content.criticalSound = true
        content.soundVolume = 0.75
        content.category = "cat"
        content.threadID = "thread"
        content.openURL = "https://example.com/x?a=1&b=2"
        content.openInWebview = true
        content.buttons = [
            .init(id: "a", title: "A", url: "myapp://a", webview: true), .init(id: "b"),
        ]
        content.extras = [
            "n": .number(42), "f": .number(0.25), "s": .string("v"), "null": .null, "t": .bool(true),
            "nested": .object(["z": .array([.number(1), .string("x"), .object([:])]), "a": .bool(false)]),
        ]
        content.campaignID = "camp"
        content.titleLocKey = "tk"
        content.titleLocArgs = ["1", "two"]
        content.subtitleLocKey = "sk"
        content.subtitleLocArgs = []
        content.bodyLocKey = "bk"
        content.bodyLocArgs = ["x"]
        content.interruptionLevel = "time-sensitive"
        content.relevanceScore = 0.5
        content.serviceExtension = false
        content.channel = "news"
        content.priority = -1
        content.summary = "sum"
        content.expandedTitle = "big title"
        content.expandedText = "big text"
        content.largeIconURL = "https://cdn.example.com/i.png"
        content.imageURL = "https://cdn.example.com/a.jpg"
        content.inlineImage = true
        content.thumbnailID = "one"
        content.crop = .init(x: 0.1, y: 0, width: 1, height: 0.5)
        content.time = 2.5
        content.hidden = false
        content.messageCenterID = "m1"
        content.accentColor = "#FF0000FF"
        content.smallIcon = "ic_stat"
        content.lockScreenVisibility = .secret
        return content
    }()

    static let sparse: NotificationContent = {
        var content = NotificationContent(platform: .ios)
        content.badge = .set(0)
        return content
    }()

    @Test("The hand-written notification object is JSONEncoder's, byte for byte", arguments: [rich, sparse])
    func handWrittenMatchesEncoder(content: NotificationContent) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let encoded = String(decoding: try encoder.encode(content), as: UTF8.self)
        var buffer: [UInt8] = []
        content.appendJSON(to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == encoded)
    }

    @Test("The outcome line carries the notification as JSONEncoder does, with the contract's fields")
    func outcomeLine() throws {
        let outcome = Outcome(
            status: .original, reason: .noAttachment, detail: nil, vendor: .braze, attachments: [], warnings: [],
            elapsed: .milliseconds(3), payload: Data(), notification: Self.sparse)
        let direct = try #require(JSONSerialization.jsonObject(with: Data(outcome.jsonLine(index: 2).utf8)) as? [String: Any])
        let notification = try #require(direct["notification"] as? [String: Any])
        #expect(Set(notification.keys) == [
            "platform", "visible", "title", "subtitle", "body", "badge", "sound", "category", "thread_id", "open_url",
            "open_in_webview", "buttons", "extras", "campaign_id",
        ])
        #expect((notification["badge"] as? [String: Int]) == ["set": 0])
        #expect(notification["title"] is NSNull)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var expected = try #require(JSONSerialization.jsonObject(with: encoder.encode(outcome)) as? [String: Any])
        expected["index"] = 2
        #expect(direct as NSDictionary == expected as NSDictionary)
    }
}
