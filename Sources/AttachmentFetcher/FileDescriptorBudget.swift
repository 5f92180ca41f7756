import Synchronization

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
///
/// Running out never takes the last descriptors, though: the library keeps none of its own in
/// the top `headroom(forLimit:)` slots of the table (`ceiling()`), and treats one it is given
/// there as running out. Those slots are for what opens descriptors on the library's behalf:
/// libcurl's resolver threads, the C library's name lookups, and Dispatch's thread pool, which
/// once a second reads `/proc/<tid>/stat` of each of its workers when work is waiting and kills
/// the process (SIGILL, "workq: registered worker exited prematurely") when that `open` fails.
@usableFromInline
package enum FileDescriptorBudget {
    /// Descriptors left for everything else: standard streams, libmagic, the engine's wake-up
    /// pipe and poll set, the cache's directories, logs, and the headroom no descriptor of the
    /// library's own takes.
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
        readCeiling()
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

    /// The descriptors at the top of a table of `limit` that the library's own never take: 16
    /// (of `reserve`'s 64), an eighth of a limit below 128.
    package static func headroom(forLimit limit: Int) -> Int { min(16, limit / 8) }

    /// The lowest descriptor number the library does not keep: the soft limit less its
    /// `headroom(forLimit:)`; `Int32.max` when the limit is unlimited or cannot be read.
    /// `Syscalls.open` and the socket-opening callback close a descriptor this high at once and
    /// fail with `EMFILE`.
    ///
    /// The limit is read once, and again by `raiseSoftLimit()`, whenever a descriptor reaches
    /// the ceiling read before (a limit raised since), and whenever an `open` finds the table
    /// full (a limit lowered since): not at every `open`.
    static func ceiling() -> Int32 {
        let known = knownCeiling.load(ordering: .relaxed)
        return known != 0 ? known : readCeiling()
    }

    /// Whether `descriptor` is at or above the ceiling, the limit read again to be sure.
    static func reachesCeiling(_ descriptor: Int32) -> Bool {
        let known = knownCeiling.load(ordering: .relaxed)
        if known != 0, descriptor < known { return false }
        return descriptor >= readCeiling()
    }

    /// The ceiling of the soft limit now, remembered for `ceiling()`.
    @discardableResult
    static func readCeiling() -> Int32 {
        let ceiling: Int32
        if let soft = (try? Syscalls.openFileLimits())?.soft {
            ceiling = Int32(clamping: soft - headroom(forLimit: soft))
        } else {
            ceiling = .max
        }
        knownCeiling.store(max(1, ceiling), ordering: .relaxed)
        return ceiling
    }

    /// `readCeiling()`'s latest answer; 0 before the first.
    private static let knownCeiling = Atomic<Int32>(0)

    /// `concurrency(forLimit:)` of the soft limit now.
    @usableFromInline
    package static func concurrency() -> Int { concurrency(forLimit: softLimit) }

    /// Whether `error` (an `errno`) says the process or the system ran out of descriptors.
    static func isExhaustion(_ error: Int32) -> Bool { error == EMFILE || error == ENFILE }
}
