@testable import AttachmentFetcher
import Foundation
import Testing

/// `Platform.linux`: a Linux client (a kiosk, a car, a desktop) that shows a vendor's push itself.
@Suite("A Linux client's rules: every type a phone shows, within the size limits, whatever the payload's shape", .timeLimit(.minutes(2)))
struct LinuxPlatformTests {
    /// A Braze iOS push for `url`, with or without `mutable-content`.
    private func braze(_ url: String, mutable: Bool = true, type: String? = nil) -> Data {
        let typePart = type.map { #","type":"\#($0)""# } ?? ""
        let mutablePart = mutable ? #","mutable-content":1"# : ""
        return Data(#"{"aps":{"alert":{"title":"T","body":"B"}\#(mutablePart)},"ab":{"att":{"url":"\#(url)"\#(typePart)}}}"#.utf8)
    }

    @Test("An iOS push without mutable-content naming a WebP: iPhones show no attachment; a Linux client shows the WebP, with the push's texts")
    func iOSShapeWithoutExtension() async throws {
        try await Fixture.with(configure: { $0.platforms = [.linux] }) { fixture in
            let outcome = await fixture.fetcher.process(braze(fixture.server.url("/files/photo.webp"), mutable: false, type: "webp"))
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(outcome.verdicts.map(\.platform) == [.linux] && outcome.verdicts.first?.status == .attached)
            #expect(outcome.attachments.first?.mime == "image/webp")
            #expect(outcome.notification?.title == "T" && outcome.notification(on: .linux)?.body == "B")
        }
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            let outcome = await fixture.fetcher.process(braze(fixture.server.url("/files/photo.webp"), mutable: false, type: "webp"))
            #expect(outcome.status == .original && outcome.reason == .noAttachment, "\(outcome.detail ?? "")")
        }
    }

    @Test("Sound and video from an iOS push, and a picture over FCM's 1 MiB from an Android push, are shown; SVG, HTML and a silent push are not")
    func typesAndLimits() async throws {
        try await Fixture.with(configure: { $0.platforms = [.linux] }) { fixture in
            for file in ["tone.mp3", "clip.mp4", "photo.heic"] {
                let outcome = await fixture.fetcher.process(braze(fixture.server.url("/files/" + file)))
                #expect(outcome.status == .attached, "\(file): \(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            }
            let big = await fixture.fetcher.process(PlatformRulesTests.fcm(fixture.server.url("/media/big.png?bytes=2000000")))
            #expect(big.status == .attached, "\(big.reason?.code ?? ""): \(big.detail ?? "")")
            #expect(big.notification?.platform == .android && big.notification(on: .linux)?.title == "T")
            for path in ["/media/logo.svg?bytes=3000", "/media/page.html?bytes=3000&content_type=image/jpeg"] {
                let refused = await fixture.fetcher.process(braze(fixture.server.url(path)))
                #expect(refused.status == .original && refused.reason == .unsupportedType, "\(path): \(refused.detail ?? "")")
                #expect(refused.detail?.contains("which neither iOS nor Android shows") == true, "\(refused.detail ?? "")")
            }
            let silent = await fixture.fetcher.process(Data(#"{"aps":{"content-available":1},"ab":{"att":{"url":"\#(fixture.server.url("/files/photo.jpg"))"}}}"#.utf8))
            #expect(silent.reason == .internalPush, "\(silent.detail ?? "")")
            #expect(fixture.server.stats().requestsPerPath["/files/photo.jpg"] == nil)
        }
    }

    @Test("No vendor's file naming: an extension-less URL served as application/octet-stream, which OneSignal's iOS extension would not attach, is shown")
    func noVendorNaming() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios, .linux] }) { fixture in
            let url = fixture.server.url("/media/banner?media=jpg&bytes=3000&content_type=application/octet-stream")
            let outcome = await fixture.fetcher.process(
                Data(#"{"aps":{"alert":"x","mutable-content":1},"os_data":{"i":"n","att":{"id1":"\#(url)"}}}"#.utf8))
            #expect(outcome.verdicts.map(\.status) == [.original, .attached], "\(outcome.verdicts)")
            #expect(outcome.verdicts.first?.reason == .unsupportedType)
        }
    }

    @Test("An FCM HTTP v1 message naming an Android picture and an iPhone image: a Linux client takes the Android one, the message's own shape")
    func fcmHTTPv1() async throws {
        try await Fixture.with(configure: { $0.platforms = [.linux] }) { fixture in
            let android = fixture.server.url("/media/android.png?bytes=2000"), iPhone = fixture.server.url("/media/iphone.png?bytes=2000")
            let message = #"{"message":{"token":"t","notification":{"title":"T","body":"B"},"android":{"notification":{"image":"\#(android)"}},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(iPhone)"}}}}"#
            let outcome = await fixture.fetcher.process(Data(message.utf8))
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(outcome.attachments.map(\.url) == [android])
        }
    }

    @Test("The command line takes --platform linux")
    func commandLine() async throws {
        try await Fixture.with { fixture in
            let payload = fixture.directory + "/../payload.json"
            try braze(fixture.server.url("/files/photo.webp"), mutable: false).write(to: URL(fileURLWithPath: payload))
            let run = try await CommandRunner.run(
                "fetch-attachment", [payload, "--json", "--no-cache", "--output-dir", fixture.directory, "--platform", "linux"] + Nginx.loopbackFlags)
            #expect(run.status == 0, "\(run.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(object["status"] as? String == "attached")
            #expect((object["verdicts"] as? [[String: Any]])?.first?["platform"] as? String == "linux")
        }
    }
}
