@testable import AttachmentFetcher
import Foundation
import Testing

@Suite("NotificationServiceAdapter: expiry and registration", .timeLimit(.minutes(1)))
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
        }
    }
}
