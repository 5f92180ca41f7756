@testable import AttachmentFetcher
import Foundation
import Testing

@Suite("NotificationServiceAdapter: expiry and registration", .timeLimit(.minutes(2)))
struct NotificationServiceAdapterTests {
    /// `serviceExtensionTimeWillExpire` right after `didReceive` registered its request (from
    /// another thread, in iOS) finds the processing task and cancels it: no window in which the
    /// request is pending without its task.
    @Test("serviceExtensionTimeWillExpire right after registration cancels the processing task")
    func expiryRightAfterRegistration() async throws {
        try await Fixture.with { fixture in
            let adapter = NotificationServiceAdapter(fetcher: fixture.fetcher)
            let calls = Locked<[Outcome]>([])
            let cancelled = Locked<Bool?>(nil)
            let payload = fixture.braze("/media/x.jpg?bytes=400000&stall_after=1000")
            adapter.didReceive(
                payload, withContentHandler: { outcome in calls.withLock { $0.append(outcome) } },
                afterRegistering: { task in
                    adapter.serviceExtensionTimeWillExpire()
                    cancelled.withLock { $0 = task.isCancelled }
                })
            #expect(cancelled.withLock { $0 } == true, "the expired request's task went on")
            let outcomes = calls.withLock { $0 }
            #expect(outcomes.count == 1)
            #expect(outcomes.first?.reason == .deadline)
            #expect(outcomes.first?.payload == payload)
            // The original content still says what the push shows.
            #expect(outcomes.first?.vendor == .braze)
            #expect(outcomes.first?.notification?.title == "T" && outcomes.first?.notification?.body == "B")
        }
    }

    @Test("didReceive against an instant ends a stalled download then, with the original content and what the push shows")
    func deadlineInstant() async throws {
        try await Fixture.with(timeout: .seconds(30) * TestTiming.scale) { fixture in
            let adapter = NotificationServiceAdapter(fetcher: fixture.fetcher)
            let delivered = AsyncStream<Outcome>.makeStream()
            adapter.didReceive(fixture.braze("/media/x.jpg?bytes=400000&stall_after=1000"), deadline: .now.advanced(by: .milliseconds(500))) {
                delivered.continuation.yield($0)
                delivered.continuation.finish()
            }
            var outcomes: [Outcome] = []
            for await outcome in delivered.stream { outcomes.append(outcome) }
            #expect(outcomes.count == 1)
            #expect(outcomes.first?.reason == .deadline)
            #expect((outcomes.first?.elapsed ?? .zero) < .seconds(10) * TestTiming.scale)
            #expect(outcomes.first?.notification?.title == "T")
        }
    }

    /// A file made after the time expired is never shown, so it is removed: here a cache hit,
    /// which completes whether or not its task was cancelled, after the expiry.
    ///
    /// In a full test run its first, cached fetch has taken up to the fixture's 10 s (alone, a
    /// few milliseconds), which ThreadSanitizer's time scale makes a minute: the suite has two.
    @Test("A file made after the expiry is removed: the original content was shown")
    func fileMadeAfterExpiryRemoved() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/late.jpg?bytes=5000"
            let first = await fixture.fetch(path)
            try #require(first.status == .attached)
            let adapter = NotificationServiceAdapter(fetcher: fixture.fetcher)
            let calls = Locked<[Outcome]>([])
            let processing = Locked<Task<Void, Never>?>(nil)
            adapter.didReceive(
                fixture.braze(path), withContentHandler: { outcome in calls.withLock { $0.append(outcome) } },
                afterRegistering: { task in
                    adapter.serviceExtensionTimeWillExpire()
                    processing.withLock { $0 = task }
                })
            await processing.withLock { $0 }?.value
            #expect(calls.withLock { $0.map(\.reason) } == [.deadline])
            // Only the first payload's attachment is left.
            #expect(fixture.filesLeft() == [URL(fileURLWithPath: first.attachments[0].path).lastPathComponent])
        }
    }
}
