import Dispatch

/// Runs long file-system work (hashing or copying a whole body, taking a lock file, scanning the
/// cache) on Dispatch's global queue rather than in the caller's task.
///
/// On Linux this gives the work no threads of its own: Dispatch runs these blocks on the same
/// root-queue threads as Swift's tasks (`perf` shows both on the same two threads of a two-core
/// machine). What it adds is libdispatch's monitor, which starts another worker, about one a
/// second, while its workers stay blocked. Measured with four blocking 2 s sleeps on two cores:
/// as blocks here they ended at 2.0, 2.0, 2.9 and 3.9 s; as plain tasks at 2.0, 2.0, 4.0 and 4.0 s.
/// Single metadata calls (`stat`, `link`, `rename`) are made where they are needed instead: a
/// trip here costs more than they do (a quarter of a cache hit's CPU time).
enum BlockingIO {
    private static let queue = DispatchQueue(label: "attachment-fetcher.io", attributes: .concurrent)

    /// Runs `work` on the I/O queue and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
