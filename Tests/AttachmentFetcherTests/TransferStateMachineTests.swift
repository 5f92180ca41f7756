@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Transfer state machine: every ordering of a transfer's events", .timeLimit(.minutes(1)))
struct TransferStateMachineTests {
    // MARK: Through the engine

    /// A cancellation that reaches the engine before the submission it cancels (the task was
    /// cancelled between handing its continuation over and posting `.submit`) still ends the
    /// transfer at once, rather than letting it run to its deadline.
    @Test("A cancel posted before its submit ends the transfer as cancelled, not at its deadline")
    func cancelBeforeSubmitThroughTheEngine() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var addressPolicy = AttachmentFetcher.Configuration.AddressPolicy()
        addressPolicy.allowsPrivateNetworks = true
        let engine = try TransferEngine(
            configuration: .init(
                sizeLimits: .init(), maximumConnectionsPerHost: 4, maximumConcurrentTransfers: 8, maximumRedirects: 5,
                userAgent: "test", addressPolicy: addressPolicy),
            logger: .init(label: "test"), classifier: MediaClassifier())
        let url = try AttachmentURL.parse(server.url("/media/slow.jpg?bytes=20000&delay_ms=3000")).get()
        let deadline = ContinuousClock.now.advanced(by: .seconds(2) * TestTiming.scale)
        let result = await Task {
            await engine.download(
                TransferRequest(
                    url: url.string, hostKey: url.hostKey, deadline: deadline, temporaryDirectory: directory,
                    place: { .success($0) }),
                beforeSubmitting: { withUnsafeCurrentTask { $0?.cancel() } })
        }.value
        let endedAt = ContinuousClock.now
        await engine.shutdown()
        try await server.shutdown()
        guard case .failure(let failure) = result else {
            Issue.record("a cancelled transfer produced a response")
            return
        }
        #expect(failure == TransferTicket.cancellation)
        #expect(endedAt < deadline, "the cancelled transfer ran to its deadline")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory)) == [])
    }
}
