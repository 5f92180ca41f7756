@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// Each platform's picture rules: iOS's attachment types, Android's images up to FCM's 1 MiB or
/// the vendor SDK's own limit.
@Suite("Platform picture rules")
struct PlatformRulesTests {
    /// An FCM notification message as the app receives it, whose picture FCM's own code draws.
    static func fcm(_ url: String) -> Data {
        Data(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\#(url)","google.message_id":"0:1"}"#.utf8)
    }

    @Test("FCM shows a picture of 1,048,576 bytes and refuses 1,048,577, announced or not", arguments: [false, true])
    func androidLimit(chunked: Bool) async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let suffix = chunked ? "&chunked=1" : ""
            let atLimit = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/at.jpg?bytes=1048576\(suffix)")))
            #expect(atLimit.status == .attached, "\(atLimit.detail ?? "")")
            #expect(atLimit.verdicts == [PlatformVerdict(platform: .android, status: .attached, reason: nil, detail: nil, path: atLimit.attachments.first?.path)])
            let over = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/over.jpg?bytes=1048577\(suffix)")))
            #expect(over.reason == .tooLarge)
            #expect(over.detail == "the body is larger than the Android picture limit, 1048576 bytes")
            #expect(over.verdicts.first?.reason == .tooLarge)
            #expect(fixture.filesLeft().count == 1)  // the picture at the limit only
        }
    }

    @Test("Android's picture limit is configurable")
    func configurableAndroidLimit() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android]; $0.sizeLimits.androidPicture = 2_000 }) { fixture in
            #expect(await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/x.png?bytes=2000"))).status == .attached)
            #expect(await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/x.png?bytes=2001"))).reason == .tooLarge)
        }
    }

    @Test("A preflight's reason is the payload's own platform's, in whichever order the platforms are listed, and a file no one shows is a failure", arguments: [[Platform.ios, .android], [.android, .ios]])
    func ownPlatformDecides(platforms: [Platform]) async throws {
        try await Fixture.with(configure: { $0.platforms = platforms; $0.sizeLimits.androidPicture = 2_000 }) { fixture in
            // An HTTP v1 message whose picture is over Android's limit: iOS would take the file,
            // but shows no attachment for this push (no service extension runs for it).
            let url = fixture.server.url("/media/big.png?bytes=3000")
            let outcome = await fixture.fetcher.process(
                Data(#"{"message":{"token":"t","notification":{"title":"v1","body":"b","image":"\#(url)"}}}"#.utf8))
            #expect(outcome.status == .original)
            #expect(outcome.reason == .tooLarge, "\(outcome.detail ?? "")")
            #expect(outcome.failures.map(\.url) == [url])
            #expect(outcome.failures.first?.reason == .tooLarge)
            #expect(outcome.verdicts.map(\.platform) == platforms)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    /// A URL whose first hop sets the cookie `k` and redirects to a target that answers 403
    /// without it: a "cookie check" redirect.
    static func cookieCheck(_ fixture: Fixture, name: String) -> String {
        let target = fixture.server.url("/media/\(name)-target.jpg?bytes=3000&require_cookie=k")
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return "/media/\(name).jpg?set_cookie=k%3Dv&cache_control=max-age%3D300&redirect_to=\(encoded)"
    }

    @Test("A cookie a redirect sets goes with the next hop, as URLSession sends it; Android, which keeps none, gets a warning, on a cache hit too")
    func cookieAcrossRedirect() async throws {
        try await Fixture.with(timeout: .seconds(30) * TestTiming.scale, cached: true, configure: { $0.platforms = [.ios, .android] }) { fixture in
            for _ in 0..<2 {
                let outcome = await fixture.fetch(Self.cookieCheck(fixture, name: "checked"))
                #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
                #expect(outcome.warnings.contains { $0.contains("a redirect on the way set a cookie") && $0.contains("Android shows no picture") }, "\(outcome.warnings)")
            }
            #expect(fixture.server.stats().requests == 2)
        }
        // Judged on iOS alone: no Android warning.
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch(Self.cookieCheck(fixture, name: "ios-only"))
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
            let cookieWarnings = outcome.warnings.filter { $0.contains("set a cookie") }
            #expect(cookieWarnings.isEmpty, "\(outcome.warnings)")
        }
    }

    @Test("Each download starts with no cookie: one a response set is not sent by a later download on the same handle")
    func cookiesDoNotLeak() async throws {
        try await Fixture.with { fixture in
            let setter = await fixture.fetch("/media/setter.jpg?bytes=3000&set_cookie=k%3Dv")
            #expect(setter.status == .attached, "\(setter.detail ?? "")")
            let needs = await fixture.fetch("/media/needs.jpg?bytes=3000&require_cookie=k")
            #expect(needs.reason == .httpStatus && needs.detail == "HTTP 403", "\(needs.detail ?? "")")
        }
    }

    @Test("A download refused on the way is each platform's verdict in its own terms: audio over its limit is no picture on Android, an image over the image limit is over FCM's, a codec iOS does not play is no picture on Android")
    func refusalsInEachPlatformsTerms() async throws {
        // Limits lowered so that the bodies stay small (under ThreadSanitizer too).
        let configure: (inout PushAttachmentFetcher.Configuration) -> Void = {
            $0.platforms = [.ios, .android]
            $0.sizeLimits.audio = 100_000
            $0.sizeLimits.image = 2_000_000
        }
        try await Fixture.with(configure: configure) { fixture in
            let audio = await fixture.fetcher.process(
                Data(#"{"wzrk_pn":"true","nm":"a","nt":"t","wzrk_bp":"\#(fixture.server.url("/media/big.mp3?bytes=200000"))"}"#.utf8))
            #expect(audio.reason == .unsupportedType, "\(audio.detail ?? "")")
            #expect(audio.detail?.contains("which Android does not accept as a picture (images only)") == true, "\(audio.detail ?? "")")
            #expect(audio.verdicts.first { $0.platform == .ios }?.reason == .tooLarge)
            #expect(audio.failures.first?.reason == .unsupportedType)
            let image = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/big.jpg?bytes=2500000")))
            #expect(image.reason == .tooLarge)
            #expect(image.detail == "the body is larger than the Android picture limit, 1048576 bytes", "\(image.detail ?? "")")
            #expect(image.verdicts.first { $0.platform == .ios }?.detail == "the body is larger than the image limit, 2000000 bytes")
            let hevc = await fixture.fetch("/files/clip-hev1.mp4")
            #expect(hevc.reason == .unsupportedType)
            let android = try #require(hevc.verdicts.first { $0.platform == .android })
            #expect(android.detail?.contains("Android does not accept as a picture") == true, "\(android.detail ?? "")")
            #expect(hevc.verdicts.first { $0.platform == .ios }?.detail?.contains("hvc1") == true)
        }
    }

    @Test("A remembered refusal is each platform's verdict in the same terms as the download it remembers", arguments: [
        "/media/big.mp3?bytes=200000", "/media/big.jpg?bytes=2500000", "/files/clip-hev1.mp4", "/media/x.jpg?bytes=0",
    ])
    func rememberedRefusalsKeepEachPlatformsTerms(path: String) async throws {
        let configure: (inout PushAttachmentFetcher.Configuration) -> Void = {
            $0.platforms = [.ios, .android]
            $0.sizeLimits.audio = 100_000
            $0.sizeLimits.image = 2_000_000
        }
        try await Fixture.with(cached: true, configure: configure) { fixture in
            func details() async -> [String] {
                let outcome = await fixture.fetch(path)
                return ([outcome.detail] + outcome.verdicts.map(\.detail)).map { $0 ?? "-" }
            }
            let fetched = await details()
            let remembered = await details()
            #expect(fixture.fetcher.statistics.originRequests == 1)
            #expect(fetched.count == 3 && !fetched.contains("-"), "\(fetched)")
            // Every platform's words, each saying that it is remembered.
            let note = " (a recent failure, not retried yet)"
            #expect(remembered == fetched.map { $0 + note })
        }
    }

    @Test("Without aps.mutable-content an iPhone shows no attachment: that is the reason when the download failed too, and the verdict names the failure")
    func noServiceExtensionAndAFailure() async throws {
        for platforms in [[], [Platform.ios]] {
            try await Fixture.with(configure: { $0.platforms = platforms }) { fixture in
                let url = fixture.server.url("/media/a.jpg?bytes=300&status=404")
                let outcome = await fixture.fetcher.process(Data(#"{"aps":{"alert":{"title":"t"}},"ab":{"att":{"url":"\#(url)"}}}"#.utf8))
                #expect(outcome.reason == .noAttachment, "\(platforms): \(outcome.detail ?? "")")
                #expect(outcome.detail?.hasPrefix("aps.mutable-content is not 1") == true)
                #expect(outcome.detail?.contains("nor would it with one: http-status: HTTP 404") == true, "\(outcome.detail ?? "")")
                #expect(outcome.failures.first?.reason == .httpStatus)
                if !platforms.isEmpty { #expect(outcome.verdicts.first?.detail == outcome.detail) }
            }
        }
    }

    @Test("Android's picture limit is the vendor SDK's: FCM's 1 MiB, Braze's documented 5 MB, none in Airship's, OneSignal's, CleverTap's and Iterable's")
    func vendorAndroidLimits() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let large = fixture.server.url("/media/large.jpg?bytes=3000000")
            let payloads: [(String, String)] = [
                ("airship", #"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"\#(large)\"}"}"#),
                ("onesignal", #"{"custom":"{\"i\":\"1\"}","alert":"B","bicon":"\#(large)"}"#),
                ("clevertap", #"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"\#(large)"}"#),
                ("braze", #"{"_ab":"true","t":"T","a":"B","ab_iu":"\#(large)"}"#),
            ]
            for (vendor, payload) in payloads {
                let outcome = await fixture.fetcher.process(Data(payload.utf8))
                #expect(outcome.vendor?.name == vendor && outcome.status == .attached, "\(vendor): \(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            }
            let fcm = await fixture.fetcher.process(Self.fcm(large))
            #expect(fcm.reason == .tooLarge, "\(fcm.detail ?? "")")
            let braze = await fixture.fetcher.process(Data(#"{"_ab":"true","t":"T","a":"B","ab_iu":"\#(fixture.server.url("/media/b.jpg?bytes=5000001"))"}"#.utf8))
            #expect(braze.detail == "the body is larger than the Android picture limit, 5000000 bytes")
        }
    }

    @Test("One download, two verdicts: a WebP picture is shown on Android and refused on iOS; the iOS payload's outcome is iOS's")
    func webpBothVerdicts() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let outcome = await fixture.fetch("/files/photo.webp")
            // The payload goes to iPhones, which refuse the file: the original content stands
            // there, whatever Android would show of the same file.
            #expect(outcome.status == .original && outcome.reason == .unsupportedType, "\(outcome.status)")
            #expect(outcome.detail == "detected image/webp (WebP), which iOS does not accept as an attachment")
            #expect(outcome.attachments.isEmpty)
            #expect(outcome.verdicts.map(\.platform) == [.ios, .android])
            #expect(outcome.verdicts[0].reason == .unsupportedType)
            #expect(outcome.verdicts[0].detail == "detected image/webp (WebP), which iOS does not accept as an attachment")
            #expect(outcome.verdicts[1].status == .attached)
            // The file Android would show stays, named in its verdict, for the preflight to look at.
            let path = try #require(outcome.verdicts[1].path)
            #expect(path.hasSuffix(".webp") && FileManager.default.fileExists(atPath: path))
            #expect(fixture.server.stats().requests == 1)
            let json = outcome.jsonLine()
            #expect(json.contains(#""verdicts":[{"detail":"detected image/webp (WebP), which iOS does not accept as an attachment","path":null,"platform":"ios","reason":"unsupported-type","status":"original"},{"detail":null,"path":"\#(path)","platform":"android","reason":null,"status":"attached"}]"#))
        }
    }

    @Test("A preflight's outcome is the payload's own platform's verdict: what another platform would show of the file does not make it attached")
    func ownPlatformVerdictIsTheOutcome() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android]; $0.sizeLimits.androidPicture = 2_000 }) { fixture in
            // An Android payload whose picture is over Android's limit: iPhones would show the
            // file, but this payload goes to Android.
            let android = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/b.jpg?bytes=3000")))
            #expect(android.status == .original && android.reason == .tooLarge, "\(android.status) \(android.detail ?? "")")
            #expect(android.verdicts.map(\.status) == [.attached, .original])
            #expect(android.failures.map(\.reason) == [.tooLarge])
            // An iOS payload without mutable-content: iPhones show no attachment, Android would.
            let noExtension = await fixture.fetcher.process(Data(#"{"aps":{"alert":"B"},"ab":{"att":{"url":"\#(fixture.server.url("/media/c.jpg?bytes=900"))"}}}"#.utf8))
            #expect(noExtension.status == .original && noExtension.reason == .noAttachment, "\(noExtension.status)")
            #expect(noExtension.verdicts.map(\.status) == [.original, .attached])
            // Where the own platform shows the file, the outcome is attached as before.
            let shown = await fixture.fetch("/media/d.jpg?bytes=900")
            #expect(shown.status == .attached && shown.verdicts.map(\.status) == [.attached, .attached])
        }
        // A preflight of another platform alone judges by that platform.
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let outcome = await fixture.fetch("/files/photo.webp")
            #expect(outcome.status == .attached && outcome.verdicts.map(\.platform) == [.android])
        }
    }

    @Test("Android shows images only: audio and video are refused, and the file is not kept")
    func androidImagesOnly() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            // A sound behind an ID3 tag that is no MP3: refused in Android's words, not iOS's.
            for file in ["tone.mp3", "clip.mp4", "tone-id3.aac"] {
                let outcome = await fixture.fetch("/files/\(file)")
                #expect(outcome.reason == .unsupportedType)
                #expect(outcome.detail?.hasSuffix("which Android does not accept as a picture (images only)") == true, "\(outcome.detail ?? "")")
            }
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("An FCM HTTP v1 message: each platform is judged on its own image, and only the judged platforms' images are fetched")
    func firebaseHTTPv1PerPlatform() async throws {
        func message(_ fixture: Fixture, common: String, android: String) -> Data {
            let common = fixture.server.url(common), android = fixture.server.url(android)
            return Data(#"""
                {"message":{"notification":{"title":"T","image":"\#(common)"},"android":{"notification":{"image":"\#(android)"}},
                "apns":{"payload":{"aps":{"mutable-content":1}}}}}
                """#.utf8)
        }
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            // Android's own image is a WebP, which Android shows; iPhones get the common JPEG.
            let outcome = await fixture.fetcher.process(message(fixture, common: "/files/photo.jpg", android: "/files/photo.webp"))
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
            #expect(outcome.attachments.map(\.mime) == ["image/webp", "image/jpeg"])
            let ios = try #require(outcome.verdicts.first { $0.platform == .ios })
            let android = try #require(outcome.verdicts.first { $0.platform == .android })
            #expect(ios.status == .attached && android.status == .attached, "\(outcome.verdicts)")
            #expect(ios.path == outcome.attachments.last?.path && android.path == outcome.attachments.first?.path)
            // iPhones' image missing: iOS's verdict says so; Android's stands.
            let missing = await fixture.fetcher.process(message(fixture, common: "/media/gone.jpg?status=404", android: "/files/photo.webp"))
            #expect(missing.status == .attached)
            #expect(missing.verdicts.first { $0.platform == .ios }?.reason == .httpStatus, "\(missing.verdicts)")
            #expect(missing.verdicts.first { $0.platform == .android }?.status == .attached)
        }
        try await Fixture.with { fixture in
            // Judged as the message's own platform, Android, only its image is fetched.
            let outcome = await fixture.fetcher.process(message(fixture, common: "/files/photo.jpg", android: "/files/photo.webp"))
            #expect(outcome.attachments.map(\.mime) == ["image/webp"])
            #expect(fixture.server.stats().requests == 1)
            // An image for iPhones only: nothing for Android, and nothing fetched.
            let iPhonesOnly = Data(#"{"message":{"notification":{"title":"T"},"apns":{"fcm_options":{"image":"\#(fixture.server.url("/files/photo.jpg"))"}}}}"#.utf8)
            let none = await fixture.fetcher.process(iPhonesOnly)
            #expect(none.reason == .noAttachment && none.detail == "the firebase payload names no attachment for android", "\(none.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("An FCM HTTP v1 message judged on iOS: iPhones show the APNs payload FCM makes of it, read as any iOS push")
    func firebaseHTTPv1IPhoneNotification() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let jpeg = fixture.server.url("/files/photo.jpg"), webp = fixture.server.url("/files/photo.webp")
            // apns.payload's alert replaces notification's texts on iPhones; data's keys are custom keys.
            let own = await fixture.fetcher.process(Data(#"""
                {"message":{"notification":{"title":"Sale","body":"50% off","image":"\#(jpeg)"},
                "android":{"notification":{"channel_id":"promo"}},
                "apns":{"payload":{"aps":{"alert":{"title":"iOS Sale","body":"Half price"},"badge":3,"sound":"default",
                "category":"SALE","mutable-content":1},"promo":"7"}},"data":{"deep":"x"}}}
                """#.utf8))
            #expect(own.notification?.platform == .android && own.notification?.title == "Sale")
            #expect(own.notification(on: .android) == own.notification)
            let iPhone = try #require(own.notification(on: .ios))
            #expect(iPhone.platform == .ios && iPhone.visible)
            #expect(iPhone.title == "iOS Sale" && iPhone.body == "Half price")
            #expect(iPhone.badge == .set(3) && iPhone.sound == "default" && iPhone.category == "SALE")
            #expect(iPhone.extras == ["deep": .string("x"), "promo": .string("7")])
            #expect(own.verdicts.map(\.status) == [.attached, .attached], "\(own.verdicts)")
            #expect(!own.warnings.contains { $0.contains("mutable-content") }, "\(own.warnings)")

            // No apns.payload: iPhones show notification's title and body, and run no extension.
            let common = await fixture.fetcher.process(Data(#"{"message":{"notification":{"title":"Sale","body":"50% off","image":"\#(jpeg)"}}}"#.utf8))
            #expect(common.notification(on: .ios)?.title == "Sale" && common.notification(on: .ios)?.body == "50% off")
            #expect(common.warnings.contains(
                "message.apns.payload.aps.mutable-content is not 1: iPhones would not run a service extension for this message, so they show no image"),
                "\(common.warnings)")
            // The APNs payload's own mistakes are named with their place in the message.
            let typed = await fixture.fetcher.process(Data(#"{"notification":{"title":"T"},"apns":{"payload":{"aps":{"badge":"+1"}}}}"#.utf8))
            #expect(typed.notification(on: .ios)?.badge == nil)
            #expect(typed.warnings.contains("apns.payload.aps.badge is not an integer: iOS ignores it, and the badge stays as it was"), "\(typed.warnings)")

            // Texts for Android only: iPhones show nothing, and their image is not fetched.
            let before = fixture.server.stats().requests
            let androidOnly = await fixture.fetcher.process(Data(#"""
                {"message":{"android":{"notification":{"title":"T","body":"B","image":"\#(webp)"}},
                "apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpeg)"}}}}
                """#.utf8))
            #expect(fixture.server.stats().requests == before + 1)
            #expect(androidOnly.notification(on: .ios)?.visible == false)
            let ios = try #require(androidOnly.verdicts.first { $0.platform == .ios })
            #expect(ios.status == .original && ios.reason == .internalPush, "\(ios)")
            #expect(androidOnly.verdicts.first { $0.platform == .android }?.status == .attached)
            #expect(androidOnly.warnings.contains(
                "iPhones show nothing of this message: without message.notification.title or body, or an alert in message.apns.payload.aps, APNs delivers no alert, so no service extension runs and the image is not attached"),
                "\(androidOnly.warnings)")
            // A background push (content-available) is meant to show nothing: no warning.
            let background = await fixture.fetcher.process(Data(#"""
                {"message":{"android":{"notification":{"title":"T","image":"\#(webp)"}},"apns":{"payload":{"aps":{"content-available":1}}}}}
                """#.utf8))
            #expect(background.notification(on: .ios)?.visible == false)
            #expect(!background.warnings.contains { $0.hasPrefix("iPhones show nothing") }, "\(background.warnings)")
        }
        // Judged on iOS only, a message with no text for iPhones: nothing shown, nothing fetched.
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            let jpeg = fixture.server.url("/files/photo.jpg")
            let outcome = await fixture.fetcher.process(Data(#"{"message":{"android":{"notification":{"title":"T","image":"\#(jpeg)"}},"apns":{"fcm_options":{"image":"\#(jpeg)"}}}}"#.utf8))
            #expect(outcome.reason == .internalPush && outcome.detail == "the firebase push shows nothing on ios: no request is made", "\(outcome.detail ?? "")")
            // No alert for iPhones, but a badge: iOS still sets it, and the detail says so.
            let badge = await fixture.fetcher.process(
                Data(#"{"message":{"android":{"notification":{"title":"T","image":"\#(jpeg)"}},"apns":{"payload":{"aps":{"badge":5}},"fcm_options":{"image":"\#(jpeg)"}}}}"#.utf8))
            #expect(
                badge.reason == .internalPush && badge.detail == "the firebase push shows no banner but sets the badge to 5 on ios: no request is made",
                "\(badge.detail ?? "")")
            #expect(fixture.server.stats().requests == 0)
        }
        // Judged as Android's only (the default): no iPhone notification.
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Data(#"{"message":{"notification":{"title":"T","body":"B"}}}"#.utf8))
            #expect(outcome.notification?.title == "T")
            #expect(outcome.otherPlatformNotifications.isEmpty && outcome.notification(on: .ios) == nil)
        }
    }

    @Test("Without aps.mutable-content an iPhone shows no attachment: the file is still fetched and judged, and iOS's verdict says why")
    func noServiceExtensionVerdict() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let jpeg = fixture.server.url("/files/photo.jpg"), webp = fixture.server.url("/files/photo.webp")
            let braze = await fixture.fetcher.process(Data(#"{"aps":{"alert":"x"},"ab":{"att":{"url":"\#(jpeg)","type":"jpg"}}}"#.utf8))
            // The payload goes to iPhones, which show no attachment: the original content stands.
            #expect(braze.status == .original && braze.reason == .noAttachment && braze.notification?.serviceExtension == false)
            #expect(braze.warnings.contains(PreparedPayload.noExtensionWarning), "\(braze.warnings)")
            let ios = try #require(braze.verdicts.first { $0.platform == .ios })
            #expect(ios.status == .original && ios.reason == .noAttachment && ios.path == nil, "\(ios)")
            #expect(ios.detail == "aps.mutable-content is not 1: iOS runs no service extension for this push, so it shows no attachment (with one, it would show \(jpeg))")
            #expect(braze.verdicts.first { $0.platform == .android }?.status == .attached)
            // A file iOS would refuse anyway says so.
            let refused = await fixture.fetcher.process(Data(#"{"aps":{"alert":"x"},"ab":{"att":{"url":"\#(webp)"}}}"#.utf8))
            #expect(refused.verdicts.first { $0.platform == .ios }?.detail
                == "aps.mutable-content is not 1: iOS runs no service extension for this push, so it shows no attachment (nor would it with one: unsupported-type: detected image/webp (WebP), which iOS does not accept as an attachment)")
            // An FCM HTTP v1 message without apns.payload.aps.mutable-content: iPhones show no image.
            let message = await fixture.fetcher.process(Data(#"{"message":{"notification":{"title":"Sale","body":"50% off","image":"\#(jpeg)"}}}"#.utf8))
            #expect(message.notification(on: .ios)?.serviceExtension == false)
            #expect(message.verdicts.map(\.status) == [.original, .attached], "\(message.verdicts)")
            // With the extension, iOS shows it.
            let shown = await fixture.fetcher.process(Data(#"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"\#(jpeg)"}}}"#.utf8))
            #expect(shown.verdicts.map(\.status) == [.attached, .attached] && shown.notification?.serviceExtension == true)
        }
        // A preflight of iOS alone: no platform asked shows the file, so the outcome is the
        // original content, as for a file every platform asked refuses, and no file is left.
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            let jpeg = fixture.server.url("/files/photo.jpg")
            let braze = await fixture.fetcher.process(Data(#"{"aps":{"alert":"x"},"ab":{"att":{"url":"\#(jpeg)"}}}"#.utf8))
            #expect(braze.status == .original && braze.reason == .noAttachment && braze.attachments.isEmpty, "\(braze)")
            #expect(braze.detail == "aps.mutable-content is not 1: iOS runs no service extension for this push, so it shows no attachment (with one, it would show \(jpeg))")
            #expect(braze.verdicts.map(\.status) == [.original])
            #expect((try? FileManager.default.contentsOfDirectory(atPath: fixture.directory))?.isEmpty ?? true)
        }
    }

    @Test("OneSignal's legacy minified form is shown by its SDK in the app, as a local notification with the attachments it downloads there: attached without a service extension, with a warning that the app must be woken, and none of aps's other keys")
    func oneSignalMinifiedAttachedByTheApp() async throws {
        try await Fixture.with { fixture in
            let jpeg = fixture.server.url("/files/photo.jpg")
            let outcome = await fixture.fetcher.process(Data(
                #"{"aps":{"content-available":1,"category":"cat","thread-id":"t","interruption-level":"time-sensitive","relevance-score":0.5},"m":{"title":"T","body":"B"},"o":[{"n":"OK"}],"at":{"x":"\#(jpeg)"},"custom":{"i":"n"}}"#.utf8))
            #expect(outcome.status == .attached, "\(outcome.result): \(outcome.detail ?? "")")
            #expect(!outcome.warnings.contains(PreparedPayload.noExtensionWarning), "\(outcome.warnings)")
            #expect(outcome.warnings.contains(ContentReader.oneSignalShownByTheAppWarning), "\(outcome.warnings)")
            let notification = try #require(outcome.notification)
            // Not an extension's to run: the app makes the notification.
            #expect(notification.serviceExtension == nil)
            #expect(notification.category == nil && notification.threadID == nil)
            #expect(notification.interruptionLevel == nil && notification.relevanceScore == nil)
            #expect(notification.title == "T" && notification.buttons.map(\.id) == ["OK"])
            // The original format, with aps.alert, still needs the extension for its picture.
            let alerted = await fixture.fetcher.process(Data(#"{"aps":{"alert":"B"},"att":{"x":"\#(jpeg)"},"custom":{"i":"n"}}"#.utf8))
            #expect(alerted.status == .original && alerted.reason == .noAttachment && alerted.notification?.serviceExtension == false)
        }
    }

    @Test("HEIF and AVIF are shown on Android with a warning naming the first version that decodes them")
    func androidVersionWarnings() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let heic = await fixture.fetch("/files/photo.heic")
            #expect(heic.status == .attached, "\(heic.detail ?? "")")
            #expect(heic.warnings.contains("Android shows image/heic only from Android 9 (API 28) on"))
            let avif = await fixture.fetch("/files/photo.avif")
            #expect(avif.status == .attached, "\(avif.detail ?? "")")
            #expect(avif.warnings.contains("Android shows image/avif only from Android 12 (API 31) on"))
            // BMP on every version: no warning beyond plain http's.
            let bmp = await fixture.fetch("/files/photo.bmp")
            #expect(bmp.status == .attached)
            #expect(bmp.warningsBesidesPlainHTTP.filter { $0.contains("Android") }.isEmpty)
        }
    }

    @Test("Animated WebP, PNG and AVIF are shown on Android with a first-frame warning; still ones have none")
    func androidAnimationWarnings() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let expected = [
                "animated.webp": "Android draws only the first frame of an animated WebP: the animation does not play",
                "animated.png": "Android draws only the first frame of an animated PNG (APNG): the animation does not play",
                "animated.avif": "Android draws only the first frame of an animated AVIF (an image sequence): the animation does not play",
            ]
            for (file, warning) in expected.sorted(by: { $0.key < $1.key }) {
                let outcome = await fixture.fetch("/files/\(file)")
                #expect(outcome.status == .attached, "\(file): \(outcome.detail ?? "")")
                #expect(outcome.warnings.contains(warning), "\(file): \(outcome.warnings)")
            }
            for file in ["photo.webp", "logo.png", "photo.avif"] {
                let outcome = await fixture.fetch("/files/\(file)")
                #expect(outcome.status == .attached)
                #expect(!outcome.warnings.contains { $0.contains("first frame") }, "\(file): \(outcome.warnings)")
            }
        }
    }

    @Test("A GIF is shown on Android with the first-frame warning when its bytes show two images, none when they show one and the trailer, and a conditional one when its first image runs past them; on a cache hit too")
    func androidGIFAnimation() async throws {
        try await Fixture.with(cached: true, configure: { $0.platforms = [.android] }) { fixture in
            // A second fetcher on the same cache reads each entry's type from its body again.
            let rerun = try fixture.anotherFetcher()
            let expected: [(path: String, warning: String?)] = [
                ("/files/animated.gif", "Android draws only the first frame of an animated GIF: the animation does not play"),
                ("/files/still.gif", nil),
                // One image whose data runs far past the first 4 KiB: one image or more, unknown.
                ("/media/long-first-image.gif?bytes=40000", "if the GIF is animated, Android draws only its first frame: the animation does not play"),
            ]
            for (path, warning) in expected {
                for outcome in [await fixture.fetch(path), await fixture.fetch(path), await rerun.process(fixture.braze(path))] {
                    #expect(outcome.status == .attached, "\(path): \(outcome.detail ?? "")")
                    let frames = outcome.warnings.filter { $0.contains("first frame") }
                    #expect(frames == (warning.map { [$0] } ?? []), "\(path): \(outcome.warnings)")
                }
            }
            await rerun.shutdown()
        }
    }

    @Test("A JPEG whose EXIF orientation turns it is shown on Android with a warning naming the SDK that decodes it with BitmapFactory (Airship's only before Android 9); on iOS with none; on a cache hit too")
    func androidEXIFOrientation() async throws {
        try await Fixture.with(cached: true, configure: { $0.platforms = [.ios, .android] }) { fixture in
            let rerun = try fixture.anotherFetcher()
            func airship(_ path: String) -> Data {
                let url = fixture.server.url(path)
                return Data(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"\#(url)\"}"}"#.utf8)
            }
            let expected: [(payload: Data, warning: String)] = [
                (fixture.braze("/files/photo-exif-6.jpg"),
                 "the JPEG's EXIF orientation (6: rotate 90° clockwise) is not applied by BitmapFactory, which Braze's SDK decodes with: Android shows the picture as stored, turned"),
                (Self.fcm(fixture.server.url("/files/photo-exif-8.jpg")),
                 "the JPEG's EXIF orientation (8: rotate 270° clockwise) is not applied by BitmapFactory, which FCM's SDK decodes with: Android shows the picture as stored, turned"),
                (airship("/files/photo-exif-6.jpg"),
                 "the JPEG's EXIF orientation (6: rotate 90° clockwise) is not applied by BitmapFactory, which Airship's SDK decodes with before Android 9 (API 28; from then on it decodes with ImageDecoder, which applies it): Android 8.1 and older show the picture as stored, turned"),
            ]
            for (payload, warning) in expected {
                for outcome in [await fixture.fetcher.process(payload), await fixture.fetcher.process(payload), await rerun.process(payload)] {
                    #expect(outcome.verdicts.first { $0.platform == .android }?.status == .attached, "\(outcome.verdicts)")
                    #expect(outcome.warnings.filter { $0.contains("EXIF") } == [warning], "\(outcome.warnings)")
                }
            }
            // No tag, no warning; on iOS, which turns the picture, none either.
            let plain = await fixture.fetch("/files/photo.jpg")
            #expect(plain.status == .attached && !plain.warnings.contains { $0.contains("EXIF") }, "\(plain.warnings)")
            await rerun.shutdown()
        }
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            let outcome = await fixture.fetch("/files/photo-exif-6.jpg")
            #expect(outcome.status == .attached && !outcome.warnings.contains { $0.contains("EXIF") }, "\(outcome.warnings)")
        }
    }

    @Test("An Android picture slower than its SDK's time is not shown (FCM 5 s, Airship 7 s), one past half of it gets a warning, and a cache entry keeps the time")
    func androidPictureTime() async throws {
        // A payload's time well past the 5.3 s picture: in a full test run the shared download's
        // task may start seconds late, and the picture's time, not the payload's, is the subject.
        try await Fixture.with(timeout: .seconds(30) * TestTiming.scale, cached: true, configure: { $0.platforms = [.android] }) { fixture in
            let slow = fixture.server.url("/media/slow.jpg?bytes=20000&delay_ms=5300")
            let fcm = await fixture.fetcher.process(Self.fcm(slow))
            #expect(fcm.status == .original)
            #expect(fcm.reason == .deadline)
            // 5.3 s, or more on a loaded machine: the figure is the measured time.
            #expect(fcm.detail?.hasPrefix("the picture took ") == true, "\(fcm.detail ?? "")")
            #expect(fcm.detail?.hasSuffix(" s to download from here; FCM shows the notification without it after 5 s") == true, "\(fcm.detail ?? "")")
            #expect(fcm.verdicts.first?.reason == .deadline)
            #expect(fixture.filesLeft().isEmpty)
            // The same body from the cache: Airship waits 7 s, so it is shown, with a warning.
            let airship = Data(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"\#(slow)\"}"}"#.utf8)
            let shown = await fixture.fetcher.process(airship)
            #expect(shown.status == .attached, "\(shown.detail ?? "")")
            #expect(shown.warnings.contains { $0.hasPrefix("\(slow) took ") && $0.hasSuffix(" s to download from here; Airship shows the notification without its picture after 7 s, so slower networks may miss it") }, "\(shown.warnings)")
            // Another process on the same cache reads the time from the entry: no request.
            let second = try fixture.anotherFetcher()
            let again = await second.process(Self.fcm(slow))
            await second.shutdown()
            #expect(again.reason == .deadline, "\(again.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
            // Past half of FCM's 5 s: shown, with the warning; a fast picture has none.
            let halfway = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/halfway.jpg?bytes=20000&delay_ms=2600")))
            #expect(halfway.status == .attached, "\(halfway.detail ?? "")")
            #expect(halfway.warnings.contains { $0.contains(" s to download from here; FCM shows the notification without its picture after 5 s") }, "\(halfway.warnings)")
            let fast = await fixture.fetcher.process(Self.fcm(fixture.server.url("/media/fast.jpg?bytes=20000")))
            #expect(fast.status == .attached)
            #expect(!fast.warnings.contains { $0.contains("to download from here") })
            // OneSignal's SDK gives the picture no time of its own.
            let oneSignal = Data(#"{"custom":"{\"i\":\"1\"}","alert":"B","bicon":"\#(fixture.server.url("/media/os.jpg?bytes=20000&delay_ms=5300"))"}"#.utf8)
            let untimed = await fixture.fetcher.process(oneSignal)
            #expect(untimed.status == .attached, "\(untimed.detail ?? "")")
            #expect(!untimed.warnings.contains { $0.contains("to download from here") })
        }
    }

    @Test("An ICO picture is shown on Android, whose decoders read it, under .ico; iOS refuses it")
    func androidICO() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let outcome = await fixture.fetch("/files/icon.ico")
            #expect(outcome.status == .original && outcome.reason == .unsupportedType, "\(outcome.detail ?? "")")
            #expect(outcome.verdicts.last?.path?.hasSuffix(".ico") == true)
            #expect(outcome.verdicts.map(\.status) == [.original, .attached])
            #expect(outcome.verdicts.first?.reason == .unsupportedType)
        }
    }

    @Test("An AVIF whose major brand is mif1 is AVIF (Android 12), not HEIF (Android 9)")
    func avifUnderHEIFMajorBrand() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let outcome = await fixture.fetch("/files/photo-mif1.avif")
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
            #expect(outcome.attachments.first?.mime == "image/avif")
            #expect(outcome.attachments.first?.path.hasSuffix(".avif") == true)
            #expect(outcome.warnings.contains("Android shows image/avif only from Android 12 (API 31) on"), "\(outcome.warnings)")
        }
    }

    @Test("The CLI's --platform ios,android reports each verdict; an unknown platform is exit 64")
    func cliPlatforms() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            let payload = directory + "/payload.json"
            try Payloads.braze(url: server.url("/files/photo.webp")).write(to: URL(fileURLWithPath: payload))
            let both = try await CommandRunner.run(
                "fetch-attachment", [payload, "--json", "--no-cache", "--output-dir", directory + "/out", "--platform", "ios,android"] + Nginx.loopbackFlags)
            // The payload goes to iPhones, which refuse the file: the exit status says so.
            #expect(both.status == 1, "\(both.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(both.stdout.utf8)) as? [String: Any])
            #expect(object["status"] as? String == "original" && object["reason"] as? String == "unsupported-type")
            let verdicts = try #require(object["verdicts"] as? [[String: Any]])
            #expect(verdicts.map { $0["platform"] as? String } == ["ios", "android"])
            #expect(verdicts.map { $0["status"] as? String } == ["original", "attached"])
            // For people: each platform's block shows the file only where that platform shows it.
            let human = try await CommandRunner.run(
                "fetch-attachment", [payload, "--no-cache", "--output-dir", directory + "/out", "--platform", "ios,android"] + Nginx.loopbackFlags)
            #expect(human.stdout.contains("    attachment: none shown (unsupported-type: see iOS's verdict)\n"), "\(human.stdout)")
            #expect(!human.stdout.contains("    attachment: /"), "\(human.stdout)")
            let fcm = directory + "/fcm.json"
            try Self.fcm(server.url("/media/big.png?bytes=2000000")).write(to: URL(fileURLWithPath: fcm))
            let large = try await CommandRunner.run(
                "fetch-attachment", [fcm, "--no-cache", "--output-dir", directory + "/out", "--platform", "ios,android"] + Nginx.loopbackFlags)
            #expect(large.stdout.contains("    picture: none shown (too-large: see Android's verdict)\n"), "\(large.stdout)")
            #expect(!large.stdout.contains("    picture: /"), "\(large.stdout)")
            let unknown = try await CommandRunner.run("fetch-attachment", [payload, "--platform", "ios,windows"])
            #expect(unknown.status == 64)
            #expect(unknown.stderr.contains("unknown platform 'windows'"))
        }
    }
}

@Suite("Platform picture rules for Android payloads")
struct AndroidPayloadPictureTests {
    @Test("A Braze Android push's WebP picture is shown on Android and refused on iOS, from one download")
    func brazeAndroidWebp() async throws {
        try await Fixture.with { fixture in
            let payload = Data(#"{"_ab":"true","t":"Sale","a":"50% off","ab_iu":"\#(fixture.server.url("/files/photo.webp"))"}"#.utf8)
            // The payload's own platform, Android, judges it.
            let own = await fixture.fetcher.process(payload)
            #expect(own.status == .attached, "\(own.detail ?? "")")
            #expect(own.notification?.platform == .android)
            #expect(own.attachments.first?.mime == "image/webp")
            #expect(own.verdicts.isEmpty)
        }
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let payload = Data(#"{"_ab":"true","t":"Sale","a":"50% off","ab_iu":"\#(fixture.server.url("/files/photo.webp"))"}"#.utf8)
            let both = await fixture.fetcher.process(payload)
            #expect(both.status == .attached)
            #expect(both.verdicts.map(\.status) == [.original, .attached])
            #expect(both.verdicts[0].reason == .unsupportedType)
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("An Android payload's audio is refused: Android shows images only")
    func androidPayloadAudio() async throws {
        try await Fixture.with { fixture in
            let payload = Data(#"{"_ab":"true","t":"T","a":"B","ab_iu":"\#(fixture.server.url("/files/tone.mp3"))"}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .unsupportedType)
            #expect(outcome.detail == "detected audio/mpeg, which Android does not accept as a picture (images only)")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A body announced larger than every limit, refused before its type is known, is judged in each platform's terms: iOS's largest limit, the Android picture limit of the vendor's SDK")
    func announcedOverEveryLimit() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .android] }) { fixture in
            let url = fixture.server.url("/media/huge.jpg?bytes=60000000")
            for (payload, android) in [
                (#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\#(url)"}"#, 1_048_576),
                (#"{"_ab":"true","t":"T","a":"B","ab_iu":"\#(url)"}"#, 5_000_000),
            ] {
                let outcome = await fixture.fetcher.process(Data(payload.utf8))
                #expect(outcome.reason == .tooLarge)
                let verdicts = Dictionary(uniqueKeysWithValues: outcome.verdicts.map { ($0.platform, $0.detail ?? "") })
                #expect(verdicts[.android] == "the body is larger than the Android picture limit, \(android) bytes", "\(verdicts)")
                #expect(verdicts[.ios] == "the body is larger than the largest limit, 50000000 bytes", "\(verdicts)")
            }
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("Customer.io: a data push's picture, which its own handler draws, has no 1 MiB limit; a notification message's, which FCM's display draws, has FCM's")
    func customerIOPictureDrawer() async throws {
        try await Fixture.with(configure: { $0.platforms = [.android] }) { fixture in
            let url = fixture.server.url("/media/cio.jpg?bytes=1500000")
            let delivery = #""CIO-Delivery-ID":"d","CIO-Delivery-Token":"t""#
            let data = await fixture.fetcher.process(Data(#"{"title":"T","body":"B","image":"\#(url)",\#(delivery)}"#.utf8))
            #expect(data.vendor == .customerIO && data.status == .attached, "\(data.detail ?? "")")
            let message = await fixture.fetcher.process(Data(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\#(url)",\#(delivery)}"#.utf8))
            #expect(message.vendor == .customerIO && message.reason == .tooLarge, "\(message.detail ?? "")")
            #expect(message.detail == "the body is larger than the Android picture limit, 1048576 bytes")
        }
        // And FCM's time: a notification message's picture is FCM's 5 s; a data push's has none.
        #expect(PlatformRules.androidPictureTime(drawnBy: .customerIO) == nil)
        #expect(PlatformRules.androidPictureTime(drawnBy: .firebase)?.time == .seconds(5))
    }

    @Test("An FCM message's picture over 1,048,576 bytes is too-large; the same file on iOS is attached")
    func androidPayloadLimit() async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/big.jpg?bytes=1048577")
            let android = await fixture.fetcher.process(PlatformRulesTests.fcm(url))
            #expect(android.reason == .tooLarge)
            #expect(android.detail == "the body is larger than the Android picture limit, 1048576 bytes")
            let ios = await fixture.fetcher.process(Payloads.braze(url: url))
            #expect(ios.status == .attached)
        }
    }
}
