import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

// Per-key locks, eviction, statistics, pruning and clearing.
extension CacheStore {
    // MARK: Locks

    /// Takes `key`'s lock without waiting: `nil` when another holder (this process, or another
    /// through its own open of the lock file) has it. The lock is one byte of `lock`, at an
    /// offset drawn from the key (`F_OFD_SETLK`): no file per key, and it dies with its process.
    /// A failure other than contention is `storage`, at once; without a usable lock file the
    /// download goes on unlocked. While held, the key's heartbeat shows waiting processes that
    /// this one is alive (`Heartbeat`).
    func lock(_ key: CacheKey) -> Result<CacheLock?, TransferFailure> {
        let claimed = state.withLock { state in state.busy.insert(key).inserted }
        guard claimed else { return .success(nil) }
        guard let lockFile else { return .success(CacheLock(store: self, key: key, offset: nil)) }
        let offset = Self.lockOffset(of: key)
        do {
            guard try Syscalls.tryLock(lockFile, at: offset) else {
                state.withLock { _ = $0.busy.remove(key) }
                return .success(nil)
            }
            heartbeat?.started(key)
            return .success(CacheLock(store: self, key: key, offset: offset))
        } catch {
            state.withLock { _ = $0.busy.remove(key) }
            return .failure(TemporaryFiles.failure(error, "cannot lock \(key) in \(configuration.directory)/lock"))
        }
    }

    /// `lock`, where contention and failure alike are `nil`.
    func tryLock(_ key: CacheKey) -> CacheLock? { try? lock(key).get() }

    /// Where `key`'s byte is: its first 62 bits.
    static func lockOffset(of key: CacheKey) -> Int64 {
        Int64(bitPattern: (UInt64(key.hex.prefix(16), radix: 16) ?? 0) & 0x3FFF_FFFF_FFFF_FFFF)
    }

    func release(_ key: CacheKey, offset: Int64?) {
        if let offset, let lockFile {
            heartbeat?.ended(key)
            Syscalls.unlock(lockFile, at: offset)
        }
        state.withLock { _ = $0.busy.remove(key) }
    }

    /// What the heartbeat of the process holding `key`'s lock shows (see `Heartbeat`), for a
    /// process waiting for it; `nil` without a lock file, or when it cannot be read.
    func holderMark(of key: CacheKey) -> HolderMark? {
        guard let lockFile else { return nil }
        return try? Heartbeat.mark(of: key, in: lockFile)
    }

    // MARK: Pins

    /// Keeps `key` from eviction in this process while waiting payloads are served from it.
    func pin(_ key: CacheKey) { state.withLock { $0.pins[key, default: 0] += 1 } }

    func unpin(_ key: CacheKey) {
        state.withLock { state in
            let left = (state.pins[key] ?? 1) - 1
            state.pins[key] = left > 0 ? left : nil
        }
    }

    // MARK: Eviction

    /// Evicts least recently used entries until the bodies fit in `budget` bytes. Entries come
    /// one at a time from the eviction order (`EvictionOrder`: O(log n) each, in a short hold of
    /// the state's lock), so a pass costs about O(k log n) for the k entries it looks at. An entry
    /// pinned or locked (being written or revalidated, here or elsewhere) is skipped; one another
    /// process used since this one looked (its change time moved) takes that time as its last
    /// use; either, and one used here meanwhile, goes back into the order at its last use after
    /// the pass. Returns how many went.
    @discardableResult
    func evict(toFit budget: Int) -> Int { evictReporting(toFit: budget).removed }

    /// `evict(toFit:)`, with the bytes freed and why the first entry that could not go stayed.
    private func evictReporting(toFit budget: Int) -> (removed: Int, freed: Int, problem: String?) {
        evict(freeingBlocks: false) { _ in self.state.withLock { $0.bytes > budget } }
    }

    /// Makes `bytes` of room on the cache's file system, after a body's write there ran out of
    /// it: evicts least recently used entries as `evict(toFit:)` does, the budget aside, but only
    /// those whose removal frees their blocks (no output directory links them: one link), until
    /// their sizes add up to `bytes` or no such entry is left. The bytes freed are counted, not
    /// read from the file system: its free space knows nothing of a user's quota, and bodies
    /// that ran out of room together each make their own (the free space one pass made would
    /// stop the others, and their bodies would not fit in it together). Returns how many went,
    /// the bytes they held, and the bytes free then (`fstatvfs`, room another process made
    /// included; 0 for `quota`, `EDQUOT`).
    ///
    /// The entries a process found when it opened the cache are indexed on the eviction thread
    /// while the first payloads run: a body that runs out of room before then waits for that
    /// index, up to `indexWait`, or finds nothing to evict.
    ///
    /// No entry used since this store opened and within the last `recentUse` goes: a burst that
    /// outgrows the disk would otherwise evict the bodies it stored a moment before (its own
    /// siblings, as wanted as the body that ran out of room) to store others, and keep none once
    /// its writes gave up on the cache; that body goes unkept instead.
    func makeRoom(_ bytes: Int, quota: Bool = false, indexWait: Duration = .zero) -> (evicted: Int, freed: Int, available: Int) {
        if indexWait > .zero { _ = waitUntilIndexed(timeout: indexWait) }
        let recent = max(openedAt, Self.nanoseconds(clock.date()) - Int64(Self.recentUse.components.seconds) * 1_000_000_000)
        let (evicted, freed, _) = evict(freeingBlocks: true, sparingUsesSince: recent) { freed in freed < bytes }
        let available = quota ? 0 : (try? Syscalls.availableBytes(onFileSystemOf: root)) ?? 0
        return (evicted, freed, available)
    }

    /// How recent a use spares an entry from `makeRoom`.
    static let recentUse = Duration.seconds(10)

    /// Evicts while `wanted(bytes freed so far)` holds; with `freeingBlocks`, only entries
    /// linked nowhere else; with `sparingUsesSince`, stops at the first entry (oldest first) used
    /// since then. Returns how many went, the bytes they held, and why the first that
    /// could not go stayed (a read-only file system, a directory this user may not write), if
    /// one did not.
    private func evict(
        freeingBlocks: Bool, sparingUsesSince spared: Int64 = .max, while wanted: (Int) -> Bool
    ) -> (removed: Int, freed: Int, problem: String?) {
        var kept: Set<CacheKey> = []
        defer {
            state.withLock { state in
                for key in kept {
                    guard let lastUsed = state.index[key]?.lastUsed else { continue }
                    state.order.record(key, lastUsed: lastUsed, in: state.index)
                }
            }
        }
        var removed = 0
        var freed = 0
        var problem: String?
        while wanted(freed) {
            let next = state.withLock { state -> (candidate: EvictionOrder.Candidate, pinned: Bool)? in
                guard let candidate = state.order.popOldest(in: state.index) else { return nil }
                return (candidate, state.pins[candidate.key] != nil)
            }
            guard let (candidate, pinned) = next else { break }
            let key = candidate.key
            if candidate.lastUsed >= spared {
                kept.insert(key)
                break
            }
            guard !pinned, let lock = tryLock(key) else {
                kept.insert(key)
                continue
            }
            defer { lock.unlock() }
            guard let status = try? Syscalls.status(of: key.name, in: entries) else {
                dropFromIndex(key)
                continue
            }
            if freeingBlocks, status.linkCount > 1 {
                kept.insert(key)
                continue
            }
            let changed = Self.nanoseconds(status.st_ctim)
            if changed > candidate.lastUsed + 1_000_000_000 {
                state.withLock { state in
                    if state.index[key]?.lastUsed == candidate.lastUsed { state.setLastUsed(key, to: changed) }
                }
                kept.insert(key)
                continue
            }
            let removable = state.withLock { state -> Bool in
                state.pins[key] == nil && state.index[key]?.lastUsed == candidate.lastUsed
            }
            guard removable else {
                kept.insert(key)
                continue
            }
            if remove(key, notingProblemIn: &problem) {
                removed += 1
                freed += Int(status.size)
            }
        }
        return (removed, freed, problem)
    }

    // MARK: Maintenance

    private struct Listed {
        var key: CacheKey
        var size: Int
        var metadata: CacheEntryMetadata?
    }

    /// Every entry on disk, with its metadata.
    private func listEntries() -> [Listed] {
        var listed: [Listed] = []
        for name in (try? Syscalls.names(in: entries)) ?? [] where Self.isEntryName(name) {
            guard let file = try? Syscalls.open(FilePath(name), in: entries, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else { continue }
            defer { try? file.close() }
            guard let status = try? Syscalls.status(of: file), status.type == .regular else { continue }
            let metadata = (try? Syscalls.attribute(CacheEntryMetadata.attributeName, of: file))?.flatMap(CacheEntryMetadata.decode)
            listed.append(Listed(key: CacheKey(hex: name), size: Int(status.size), metadata: metadata))
        }
        return listed
    }

    /// Counts entries, fresh entries, bytes and temporary files.
    func statistics() -> CacheStatistics {
        let listed = listEntries().filter { $0.metadata != nil }
        let now = clock.date()
        let temporaryFiles = ((try? Syscalls.names(in: temporary)) ?? []).filter(TemporaryFiles.isTemporary).count
        return CacheStatistics(
            directory: configuration.directory, entries: listed.count,
            freshEntries: listed.filter { $0.metadata.map { $0.freshUntil > now } ?? false }.count,
            bytes: listed.reduce(0) { $0 + $1.size }, maximumBytes: configuration.maximumBytes, temporaryFiles: temporaryFiles)
    }

    /// Removes stale entries and evicts least recently used ones beyond the budget; returns how
    /// many entries and bytes went.
    func prune() -> (entries: Int, bytes: Int, problem: String?) {
        let before = listEntries()
        let now = clock.date()
        var problem: String?
        for entry in before where (entry.metadata?.freshUntil ?? .distantPast) <= now {
            guard let lock = tryLock(entry.key) else { continue }
            remove(entry.key, notingProblemIn: &problem)
            lock.unlock()
        }
        state.withLock { state in
            for entry in before where state.index[entry.key] == nil { state.setEntry(entry.key, size: entry.size, lastUsed: 0) }
        }
        let evicted = evictReporting(toFit: configuration.maximumBytes)
        let after = listEntries()
        return (before.count - after.count, before.reduce(0) { $0 + $1.size } - after.reduce(0) { $0 + $1.size }, problem ?? evicted.problem)
    }

    /// Removes every entry but those another process holds right now, every temporary file no
    /// living process holds, and what an earlier layout left (`locks/`): the directory keeps
    /// `entries/`, `tmp/` and the lock file, empty. Returns how many entries went, their bytes,
    /// and why the first that could not go stayed (a read-only file system, a directory this
    /// user may not write).
    func clear() -> (removed: Int, bytes: Int, problem: String?) {
        var removed = 0
        var bytes = 0
        var problem: String?
        for name in (try? Syscalls.names(in: entries)) ?? [] {
            guard Self.isEntryName(name) else {
                if !TemporaryFiles.isTemporary(name) { try? Syscalls.unlink(FilePath(name), in: entries) }
                continue
            }
            let key = CacheKey(hex: name)
            guard let lock = tryLock(key) else { continue }
            let size = (try? Syscalls.status(of: key.name, in: entries)).map { Int($0.size) } ?? 0
            if remove(key, notingProblemIn: &problem) {
                removed += 1
                bytes += size
            }
            lock.unlock()
        }
        removeOrphans(minimumAge: 0)
        if let legacy = try? Syscalls.open("locks", in: root, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) {
            for name in (try? Syscalls.names(in: legacy)) ?? [] { try? Syscalls.unlink(FilePath(name), in: legacy) }
            try? legacy.close()
            try? Syscalls.removeDirectory("locks", in: root)
        }
        return (removed, bytes, problem)
    }
}

/// A held per-key cache lock; released by `unlock()`, when it is dropped, or when its process
/// ends.
final class CacheLock: Sendable {
    private let store: CacheStore
    private let key: CacheKey
    private let offset: Int64?
    private let released = Locked(false)

    init(store: CacheStore, key: CacheKey, offset: Int64?) {
        self.store = store
        self.key = key
        self.offset = offset
    }

    /// Releases the lock.
    func unlock() {
        let first = released.withLock { released -> Bool in
            let was = released
            released = true
            return !was
        }
        guard first else { return }
        store.release(key, offset: offset)
    }

    deinit { unlock() }
}

/// The thread eviction runs on: its own, so that scanning and unlinking never take a thread
/// from Swift's tasks, whose timers end each payload's wait. It first indexes the cache's
/// entries (`CacheStore.indexEntries`), so that opening a cache never waits for a scan.
final class Evictor: Sendable {
    private struct State {
        var pending = false
        var stopped = false
        var indexed = false
    }

    private let condition = NSCondition()
    private let state = Locked(State())

    /// Starts the thread; it holds the store weakly and ends with it.
    func start(for store: CacheStore, beforeIndexing: (@Sendable () -> Void)? = nil) {
        let thread = Thread { [weak store, self] in
            beforeIndexing?()
            let overBudget = store?.indexEntries() ?? false
            self.update {
                $0.indexed = true
                $0.pending = $0.pending || overBudget
            }
            while true {
                self.condition.lock()
                while !self.state.withLock({ $0.pending || $0.stopped }) { self.condition.wait() }
                let stop = self.state.withLock { state -> Bool in
                    state.pending = false
                    return state.stopped
                }
                self.condition.unlock()
                guard !stop, let store else { return }
                store.evict(toFit: store.configuration.maximumBytes * 9 / 10)
            }
        }
        thread.name = "attachment-fetcher.evict"
        thread.start()
    }

    /// Asks for an eviction pass (passes asked for while one runs merge into one).
    func wake() { update { $0.pending = true } }

    func stop() { update { $0.stopped = true } }

    /// Whether `stop()` was called: a long scan ends early.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Waits until the entries are indexed, or the store is closing; `false` if `timeout` passed
    /// first.
    func waitUntilIndexed(timeout: Duration) -> Bool {
        let limit = Date(timeIntervalSinceNow: timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while !state.withLock({ $0.indexed || $0.stopped }) {
            guard condition.wait(until: limit) else { return state.withLock { $0.indexed || $0.stopped } }
        }
        return true
    }

    /// Changes the state under the condition's lock and wakes every waiter (the thread, and
    /// any caller of `waitUntilIndexed`).
    private func update(_ change: (inout State) -> Void) {
        condition.lock()
        state.withLock(change)
        condition.broadcast()
        condition.unlock()
    }
}
