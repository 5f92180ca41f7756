import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Payloads: vendor keys, internal pushes, the original bytes", .timeLimit(.minutes(2)))
struct PayloadTests {
    @Test("Braze ab.att.url with and without ab.att.type is fetched")
    func brazeAttachment() async throws {
        try await Fixture.with { fixture in
            let typed = await fixture.fetch("/media/a.jpg?bytes=5000", type: "jpg")
            #expect(typed.status == .attached)
            #expect(typed.vendor == .braze)
            #expect(typed.warningsBesidesPlainHTTP.isEmpty)
            let untyped = await fixture.fetch("/media/b.jpg?bytes=5000")
            #expect(untyped.status == .attached)
            #expect(untyped.attachments.first?.path.hasSuffix(".jpg") == true)
        }
    }

    @Test("MoEngage moengage.media-attachment and media-type are fetched")
    func moengageAttachment() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(
                Payloads.moengage(url: fixture.server.url("/media/m.mp3?bytes=9000"), mediaType: "audio"))
            #expect(outcome.status == .attached)
            #expect(outcome.vendor == .moengage)
            #expect(outcome.attachments.first?.mime == "audio/mpeg")
            #expect(outcome.warningsBesidesPlainHTTP.isEmpty)
        }
    }

    @Test("MoEngage media-type that disagrees with the bytes gives a warning, not a failure")
    func moengageWrongKind() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(
                Payloads.moengage(url: fixture.server.url("/media/m.png?bytes=9000"), mediaType: "video"))
            #expect(outcome.status == .attached)
            #expect(outcome.warnings.contains { $0.contains("video") && $0.contains("image/png") })
        }
    }

    @Test(
        "Internal and silent pushes cost zero network requests",
        arguments: [
            #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true}"#,
            #"{"aps":{"content-available":1},"ab":{"ab_sync_geos":true,"att":{"url":"URL"}}}"#,
            #"{"aps":{"content-available":1},"ab":{"c":"x","att":{"url":"URL"}}}"#,
            #"{"aps":{"content-available":1},"moengage":{"silentPush":1,"media-attachment":"URL"}}"#,
        ])
    func internalPushes(template: String) async throws {
        try await Fixture.with { fixture in
            let payload = Data(template.replacingOccurrences(of: "URL", with: fixture.server.url("/media/x.jpg")).utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .original)
            #expect(outcome.reason == .internalPush)
            #expect(outcome.payload == payload)
            #expect(fixture.server.stats().requests == 0)
            #expect(fixture.server.stats().connectionsAccepted == 0)
        }
    }

    @Test("On every fallback the caller gets exactly the bytes it passed in, null keys included")
    func originalBytesUntouched() async throws {
        try await Fixture.with { fixture in
            // Odd spacing, key order, unicode escapes and a null `c`: any re-serialisation would change them.
            let text = "{ \"c\" : null, \"ab\":{\"att\":{\"url\":\"\(fixture.server.url("/media/x.jpg?status=404"))\",\"type\":\"jpg\"}},\n\"aps\":{\"mutable-content\":1,\"alert\":\"caf\\u00e9\"} }"
            let payload = Data(text.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .httpStatus)
            #expect(outcome.payload == payload)
        }
    }

    @Test("A payload without aps.mutable-content is fetched and judged, but is the original content, as with --platform ios: iOS runs no service extension")
    func mutableContentWarning() async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/x.gif?bytes=900")
            let payload = Data(#"{"aps":{"alert":"x"},"ab":{"att":{"url":"\#(url)"}}}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .original)
            #expect(outcome.reason == .noAttachment)
            #expect(outcome.detail == "aps.mutable-content is not 1: iOS runs no service extension for this push, so it shows no attachment (with one, it would show \(url))")
            #expect(outcome.warnings.contains { $0.contains("mutable-content") })
            #expect(fixture.server.stats().requests == 1)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test(
        "Payloads that are not JSON objects, or have wrongly typed keys, are invalid-payload",
        arguments: [
            "", "not json", "[1,2]", "\"string\"", #"{"aps":"#,
            #"{"aps":{"mutable-content":1},"ab":{"att":{"url":42}}}"#,
            #"{"aps":{"mutable-content":1},"ab":{"att":"https://x/y.jpg"}}"#,
            #"{"aps":{"mutable-content":1},"moengage":{"media-attachment":["u"]}}"#,
        ])
    func invalidPayloads(text: String) async throws {
        try await Fixture.with { fixture in
            let payload = Data(text.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .invalidPayload)
            #expect(outcome.payload == payload)
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test("Invalid bytes (not UTF-8) are an invalid payload, and returned as they came")
    func invalidUTF8() async throws {
        try await Fixture.with { fixture in
            let payload = Data([0xFF, 0xFE, 0x7B, 0x00, 0x80])
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .invalidPayload)
            #expect(outcome.payload == payload)
        }
    }

    @Test("A payload over maximumPayloadBytes is refused unparsed")
    func oversizedPayload() async throws {
        try await Fixture.with(configure: { $0.maximumPayloadBytes = 100 }) { fixture in
            let payload = fixture.braze("/media/x.jpg?bytes=100&padding=" + String(repeating: "a", count: 200))
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .invalidPayload)
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test(
        "Payloads naming no attachment are no-attachment",
        arguments: [
            #"{"aps":{"alert":"x","mutable-content":1},"ab":{"c":"campaign"}}"#,
            #"{"aps":{"alert":"x","mutable-content":1},"moengage":{"cid":"1"}}"#,
            #"{"aps":{"alert":"x","mutable-content":1},"custom_key":{"image":"https://cdn.example/img.jpg"}}"#,
            #"{"aps":{"alert":"x","mutable-content":1}}"#,
        ])
    func noAttachment(text: String) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Data(text.utf8))
            #expect(outcome.reason == .noAttachment)
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test(
        "URLs that are not absolute http(s) are invalid-url without a request",
        arguments: ["", "not a url", "/relative/x.jpg", "ftp://127.0.0.1/x.jpg", "file:///etc/passwd", "http:///x.jpg"])
    func invalidURLs(url: String) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Payloads.braze(url: url))
            #expect(outcome.reason == .invalidURL)
            #expect(fixture.server.stats().requests == 0)
        }
    }
}
