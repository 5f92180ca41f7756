import AttachmentFetcher
import Foundation
import Testing

// With the other deadline tests (their filter, `DeadlineTests`, names this suite too): one at a time.
@Suite("A payload processed against an instant ends by that instant", .serialized, .timeLimit(.minutes(2)))
struct InstantDeadlineTests {
    @Test("process(_:deadline:) ends a stalled download at the instant given, not at the configured timeout")
    func instantBeforeTimeout() async throws {
        try await Fixture.with(timeout: .seconds(30) * TestTiming.scale) { fixture in
            let payload = fixture.braze("/media/x.jpg?bytes=500000&stall_after=20000")
            let outcome = await fixture.fetcher.process(payload, deadline: .now.advanced(by: .milliseconds(600)))
            #expect(outcome.reason == .deadline)
            #expect(outcome.elapsed >= .milliseconds(600))
            #expect(outcome.elapsed < .seconds(10) * TestTiming.scale)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A deadline already passed ends the payload with reason deadline, without a request")
    func instantPassed() async throws {
        try await Fixture.with { fixture in
            let payload = fixture.braze("/media/x.jpg?bytes=5000")
            let outcome = await fixture.fetcher.process(Array(payload), deadline: .now.advanced(by: .seconds(-1)))
            #expect(outcome.reason == .deadline)
            #expect(outcome.attachments.isEmpty)
            #expect(outcome.payload == payload)
            #expect(fixture.server.stats().requests == 0)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A timeout or deadline far away (\"no timeout\") attaches as any other: the engine's wake-up arithmetic stopped the process")
    func farDeadlines() async throws {
        try await Fixture.with(configure: { $0.timeout = .seconds(Int64.max / 2) }) { fixture in
            let path = "/media/far.jpg?bytes=5000"
            #expect(await fixture.fetcher.process(fixture.braze(path)).status == .attached)
            #expect(await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(10_000_000_000_000_000)).status == .attached)
            #expect(await fixture.fetcher.process(fixture.braze(path), deadline: .now.advanced(by: .seconds(Int64.max / 4))).status == .attached)
        }
    }

    @Test("Bytes processed against a later instant are attached as with a timeout")
    func instantLater() async throws {
        try await Fixture.with { fixture in
            let payload = fixture.braze("/media/x.jpg?bytes=5000")
            let outcome = await fixture.fetcher.process(Array(payload), deadline: .now.advanced(by: .seconds(10) * TestTiming.scale))
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
        }
    }
}
