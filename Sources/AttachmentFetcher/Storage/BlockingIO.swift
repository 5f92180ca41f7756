import NIOPosix

/// Runs file-system work that may block (committing a body, renewing a revalidated entry,
/// opening, measuring, pruning or clearing the cache) on threads of its own rather than in the
/// caller's task or on the engine's thread; bodies' files made ahead have a thread of their own
/// (`startAhead`), as eviction has (`Evictor`).
///
/// On Linux, Swift's tasks and Dispatch's global queues share the same root-queue threads, one
/// per core: blocking work there delays every task behind it, including the timers that end each
/// payload's wait at its deadline. SwiftNIO's process-wide blocking pool
/// (`NIOThreadPool.singleton`) has threads no task runs on, so the kernel's scheduler, not the
/// cooperative pool, shares the cores between the two. Single metadata calls (`stat`, `link`, a
/// lock's `fcntl`, a look-up's `openat`) are still made where they are needed: a trip here costs
/// more than they do.
enum BlockingIO {
    /// Runs `work` on the blocking pool and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        do {
            return try await NIOThreadPool.singleton.runIfActive(work)
        } catch {
            // The singleton pool is never shut down, so it is always active; were it not, the
            // work runs here rather than not at all.
            return work()
        }
    }

    /// Starts `work` ahead of need (bodies' files made before the transfers that take them) on a
    /// thread of its own, and returns at once.
    ///
    /// Not on the blocking pool: there it stood in line before the work payloads wait for. With
    /// several fetchers in one process each refilling, a commit waited in the pool's queue for
    /// up to 1.3 s behind their refills (a full test run on two cores; 16 files per refill, each
    /// a file creation); on one core, one busy engine's refills took the pool's only thread.
    static func startAhead(_ work: @escaping @Sendable () -> Void) {
        ahead.submit { _ in work() }
    }

    /// The thread work ahead of need runs on, one for the process: it never shuts down.
    private static let ahead: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()
}
