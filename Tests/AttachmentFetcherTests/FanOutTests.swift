@testable import AttachmentFetcher
import Foundation
import Testing

@Suite("Fan-out and payload size: bounded by default", .timeLimit(.minutes(2)))
struct FanOutTests {
    private func airship(_ urls: [String]) -> Data {
        let entries = urls.enumerated().map { #"{"url":"\#($1)","url_id":"u\#($0)"}"# }.joined(separator: ",")
        return Data(#"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"urls":[\#(entries)]}}"#.utf8)
    }

    /// OneSignal attaches each medium that arrives (Airship all or none: past the limit, not
    /// judged), in the order of the attachment ids.
    private func oneSignal(_ urls: [String]) -> Data {
        let entries = urls.enumerated().map { #""a\#($0)":"\#($1)""# }.joined(separator: ",")
        return Data(#"{"aps":{"mutable-content":1,"alert":"x"},"os_data":{"i":"n","att":{\#(entries)}}}"#.utf8)
    }

    @Test("At most 4 distinct attachments by default, in payload order; a warning names each URL dropped")
    func defaultLimit() async throws {
        try await Fixture.with { fixture in
            let urls = (0..<7).map { fixture.server.url("/media/f\($0).png?bytes=500") }
            // f1 named twice, then f0 again: deduplicated before the limit counts.
            let named = [urls[0], urls[1], urls[1], urls[2], urls[0], urls[3], urls[4], urls[5], urls[6]]
            let outcome = await fixture.fetcher.process(oneSignal(named))
            #expect(outcome.status == .attached)
            #expect(outcome.attachments.map(\.url) == Array(urls[0..<4]))
            #expect(fixture.server.stats().requests == 4)
            let repeats = try #require(outcome.warnings.first { $0.contains("more than once") })
            #expect(repeats.contains(urls[1]) && repeats.contains(urls[0]))
            let past = try #require(outcome.warnings.first { $0.contains("past the limit of 4") })
            for url in urls[4...] { #expect(past.contains(url)) }
            for url in urls[..<4] { #expect(!past.contains(url)) }
        }
    }

    @Test("A URL named again in another spelling of the same URL (scheme or host case, a fragment) is fetched once and counts once")
    func spellingsOfOneURL() async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/same.png?bytes=500")
            let spellings = [url, url.replacingOccurrences(of: "http://", with: "HTTP://"), url + "#top"]
            let others = (0..<3).map { fixture.server.url("/media/other\($0).png?bytes=500") }
            let outcome = await fixture.fetcher.process(airship(spellings + others))
            #expect(outcome.status == .attached)
            #expect(outcome.attachments.count == 4, "\(outcome.attachments.map(\.url))")
            #expect(fixture.server.stats().requests == 4)
            #expect(outcome.warnings.contains { $0.contains("more than once") }, "\(outcome.warnings)")
            #expect(!outcome.warnings.contains { $0.contains("past the limit") }, "\(outcome.warnings)")
        }
    }

    @Test("One URL named for Android and for iPhones in two spellings (an FCM HTTP v1 message) is one request, judged by both")
    func oneURLForTwoPlatforms() throws {
        var warnings: [String] = []
        var pastLimit = 0
        let selected = AttachmentSelection.select(
            [
                RequestedAttachment(url: "https://CDN.example.com/a.png", platforms: [.android]),
                RequestedAttachment(url: "https://cdn.example.com/a.png#i", platforms: [.ios]),
            ], limit: 4, warnings: &warnings, pastLimit: &pastLimit, normalise: AttachmentURL.normalised)
        #expect(selected.count == 1)
        #expect(selected.first?.platforms == [.android, .ios])
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test("The limit is configurable")
    func configuredLimit() async throws {
        try await Fixture.with(configure: { $0.maximumAttachmentsPerPayload = 1 }) { fixture in
            let urls = (0..<3).map { fixture.server.url("/media/g\($0).gif?bytes=400") }
            let outcome = await fixture.fetcher.process(oneSignal(urls))
            #expect(outcome.attachments.map(\.url) == [urls[0]])
            #expect(fixture.server.stats().requests == 1)
            #expect(outcome.warnings.contains { $0.contains("2 attachments past the limit of 1") })
        }
    }

    @Test("maximumPayloadBytes defaults to APNs' 4096: 4096 bytes are read, 4097 refused unparsed")
    func defaultPayloadLimit() async throws {
        #expect(PushAttachmentFetcher.Configuration(outputDirectory: "/tmp").maximumPayloadBytes == 4096)
        try await Fixture.with { fixture in
            let bare = fixture.braze("/media/p.jpg?status=404&padding=").count
            let fits = fixture.braze("/media/p.jpg?status=404&padding=" + String(repeating: "a", count: 4096 - bare))
            let over = fixture.braze("/media/p.jpg?status=404&padding=" + String(repeating: "a", count: 4097 - bare))
            #expect(fits.count == 4096 && over.count == 4097)
            let read = await fixture.fetcher.process(fits)
            #expect(read.reason == .httpStatus, "\(read.detail ?? "")")
            let refused = await fixture.fetcher.process(over)
            #expect(refused.reason == .invalidPayload)
            #expect(refused.detail?.contains("4097 bytes, more than 4096") == true)
            #expect(fixture.server.stats().requests == 1)
        }
    }
}
