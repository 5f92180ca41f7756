import AttachmentFetcher
import Dispatch
import Logging
import Synchronization

/// The command's fetcher, as `withPushAttachmentFetcher` makes one, but shut down waiting at most
/// `shutdownWait`: once every outcome is out, an engine thread held up inside libcurl (by an origin
/// that floods it with HTTP/2 frames, which libcurl reads until they stop) must not keep the
/// command from writing its summary and exiting. The process's exit ends that thread; the files a
/// payload was given are complete by then.
enum CommandFetcher {
    static let shutdownWait = Duration.seconds(1)

    static func with<Value>(
        configuration: PushAttachmentFetcher.Configuration, logger: Logger, _ body: (PushAttachmentFetcher) async throws -> Value
    ) async throws -> Value {
        let fetcher = try PushAttachmentFetcher(configuration: configuration, logger: logger)
        let result: Result<Value, any Error>
        do {
            result = .success(try await body(fetcher))
        } catch {
            result = .failure(error)
        }
        if await !shutDown(fetcher, waitingAtMost: shutdownWait) {
            StandardStreams.error.writeWrapped(
                "  note: the download engine was still busy inside libcurl \(shutdownWait) after the last outcome (an origin still sending to it); exiting without it")
        }
        return try result.get()
    }

    /// Whether `fetcher` shut down within `limit`.
    private static func shutDown(_ fetcher: PushAttachmentFetcher, waitingAtMost limit: Duration) async -> Bool {
        let settled = Settled()
        return await withCheckedContinuation { continuation in
            Task {
                await fetcher.shutdown()
                if settled.claim() { continuation.resume(returning: true) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(limit.wholeNanoseconds)) {
                if settled.claim() { continuation.resume(returning: false) }
            }
        }
    }

    /// Whichever of two answers comes first.
    private final class Settled: Sendable {
        private let done = Atomic<Bool>(false)
        func claim() -> Bool { done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
    }
}
