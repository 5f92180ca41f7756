import Dispatch

/// Runs blocking file-system work on Dispatch's threads, never on Swift's cooperative pool
/// (two threads on a two-core machine: one blocked `link` or `fsync` there stalls half of
/// every task in the process).
enum BlockingIO {
    private static let queue = DispatchQueue(label: "attachment-fetcher.io", attributes: .concurrent)

    /// Runs `work` on the I/O queue and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
