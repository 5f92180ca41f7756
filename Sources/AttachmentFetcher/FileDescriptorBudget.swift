#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's file-descriptor budget (`RLIMIT_NOFILE`), and the concurrency it affords.
///
/// Every running transfer holds a socket and the temporary file its body streams into, libcurl
/// keeps as many idle connections for reuse as transfers may run, and with the cache every
/// shared transfer holds its entry's body open until its waiting payloads have their files (no
/// more of them than transfers may run; the per-key locks share one file). A fetcher keeps a few
/// nameless files ready for the bodies to come (`preparedFiles(forConcurrency:)`, out of
/// `reserve`). Running
/// out (`EMFILE`, `ENFILE`) fails a payload with reason `resources`, which the cache never
/// remembers as the origin's fault.
@usableFromInline
package enum FileDescriptorBudget {
    /// Descriptors left for everything else: standard streams, libmagic, the engine's wake-up
    /// pipe and poll set, the cache's directories, logs.
    package static let reserve = 64

    /// Descriptors one unit of concurrency may need: a socket, a temporary file, an idle
    /// connection kept for reuse, a cache lock, and two to spare for a payload with more than
    /// one attachment.
    package static let descriptorsPerTransfer = 6

    /// The concurrency ceiling when descriptors are plentiful.
    package static let maximumConcurrency = 1024

    /// The soft limit on open files now; `Int.max` when unlimited.
    package static var softLimit: Int {
        guard let limits = try? Syscalls.openFileLimits() else { return 1024 }
        return limits.soft ?? Int.max
    }

    /// Raises the soft limit on open files to the hard limit, as Go's runtime does at start-up,
    /// and returns the soft limit in force afterwards. The hard limit is the administrator's
    /// ceiling; the soft limit's usual 1024 exists only for programs that still use `select(2)`,
    /// which libcurl's multi interface (`poll`) does not. Call it once, early, before descriptors
    /// are handed to other threads; the `fetch-attachment` command does.
    @discardableResult
    package static func raiseSoftLimit() -> Int {
        #if canImport(Darwin)
        // Darwin reports an unlimited hard limit but refuses a soft limit above OPEN_MAX.
        try? Syscalls.raiseOpenFileLimit(ceiling: Int(OPEN_MAX))
        #else
        try? Syscalls.raiseOpenFileLimit()
        #endif
        return softLimit
    }

    /// The default number of transfers at once (and of payloads a batch keeps in flight) for a
    /// soft limit of `limit` descriptors: `(limit − reserve) / descriptorsPerTransfer`, at least
    /// 1 and at most `maximumConcurrency`. At the common soft limit of 1024 that is 160; from
    /// 6,208 descriptors on it is 1024.
    package static func concurrency(forLimit limit: Int) -> Int {
        let available = limit > reserve ? limit - reserve : 0
        return min(maximumConcurrency, max(1, available / descriptorsPerTransfer))
    }

    /// The most nameless files a fetcher keeps ready for bodies to come (`PreparedFiles`), each
    /// an open descriptor: an eighth of the transfers that may run, at most 16. They are taken
    /// from `reserve` (16 of its 64); at 1 transfer at a time, none.
    package static func preparedFiles(forConcurrency concurrency: Int) -> Int {
        min(16, max(0, concurrency / 8))
    }

    /// `concurrency(forLimit:)` of the soft limit now.
    @usableFromInline
    package static func concurrency() -> Int { concurrency(forLimit: softLimit) }

    /// Whether `error` (an `errno`) says the process or the system ran out of descriptors.
    static func isExhaustion(_ error: Int32) -> Bool { error == EMFILE || error == ENFILE }
}
