import NIOPosix

/// Runs file-system work that may block (committing a body, renewing a revalidated entry,
/// opening, measuring, pruning or clearing the cache, making bodies' files ahead) on threads of
/// its own rather than in the caller's task or on the engine's thread. Eviction has a thread of its own (`Evictor`).
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

    /// Starts `work` on the blocking pool and returns at once.
    static func start(_ work: @escaping @Sendable () -> Void) {
        NIOThreadPool.singleton.submit { _ in work() }
    }
}
