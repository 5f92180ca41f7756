import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The on-disk cache: `entries/<key>` (each body, its metadata in an extended attribute), `tmp/`
/// for copies and for bodies on file systems without nameless files, and one file, `lock`,
/// whose byte ranges are the per-key locks that let processes share downloads, and the heartbeats
/// by which their holders show they are alive (`Heartbeat`).
///
/// A body streams into a nameless file (`O_TMPFILE`); its metadata is set
/// on it, it is made read-only, and one `linkat` gives it its name: an entry appears whole, with
/// its metadata, or not at all, and a crash leaves nothing named. Nothing is read back and
/// nothing is synced (see the README for what a power loss can do). Every name is opened
/// relative to the cache directory's descriptor, never following a symbolic link, and checked to
/// be a regular file; a body is classified again by libmagic the first time a process uses it.
///
/// An index in memory (size and last use of every entry) drives eviction, which runs on a thread
/// of its own, never on the threads Swift's tasks share, and takes entries least recently used
/// first from an order kept beside the index (`EvictionOrder`, a heap put right lazily),
/// one at a time, holding the state's lock only for short steps. An entry served to waiting
/// payloads is pinned (and held open) until every one has its file, so eviction never takes it
/// from them.
final class CacheStore: Sendable {
    /// A committed body's mode: read-only, 0444 less the umask (always readable by its owner),
    /// as a file this process creates gets 0644 less it.
    static let bodyMode: mode_t = (0o444 & ~Syscalls.fileCreationMask) | 0o400

    /// The names of the entries' directory and the lock file in a cache's directory.
    static let entriesName = "entries", lockName = "lock"

    /// The configuration (its directory absolute and normalised).
    let configuration: PushAttachmentFetcher.Configuration.Cache
    /// `<directory>/entries` and `<directory>/tmp`: their names, for messages. Files there are
    /// made, linked and renamed through `entries` and `temporary`, opened once, so that a path
    /// swapped for a symbolic link later changes nothing.
    let entriesDirectory: String
    let temporaryDirectory: String
    /// The clocks freshness and failure memory read.
    let clock: CacheClock
    /// When this store was opened, in nanoseconds since 1970 (as entries' last uses are).
    let openedAt: Int64
    /// Why the lock file could not be used, when it could not: downloads then go on without
    /// cross-process locks.
    let lockFileProblem: String?
    /// Why this process cannot add entries (`entries/` or `tmp/` not writable by its user, as in
    /// a cache another user made; a file system that keeps no extended attributes), if it
    /// cannot: it serves the entries there, and downloads what is missing into the output
    /// directory, keeping none of it.
    let storeProblem: String?

    let root: FileDescriptor
    let entries: FileDescriptor
    let temporary: FileDescriptor
    let lockFile: FileDescriptor?
    /// Shows the processes waiting for the keys this one holds that it is alive (with the lock file).
    let heartbeat: Heartbeat?
    private let classifier: MediaClassifier?
    private let sniffBytes: Int
    /// The largest body this process would accept (its largest size limit): a larger entry is
    /// never classified nor served here.
    private let largestBody: Int
    let state = Locked(StoreState())
    let evictor = Evictor()
    /// Whether the eviction thread applies the budget once the entries are indexed.
    private let trimsWhenOpened: Bool

    /// How many verified entries a process remembers (default 4,096, about 1 MB); beyond, the
    /// least recently used half is forgotten (and classified again on its next use).
    let verifiedCapacity: Int

    struct IndexEntry {
        var size: Int
        /// Nanoseconds since 1970.
        var lastUsed: Int64
    }

    struct StoreState {
        /// Every entry this process knows of: its own commits and uses, and start-up's scan,
        /// merged in when it ends. Changed through `setEntry`, `setLastUsed`, `removeEntry` and
        /// `mergeIndex`, which keep `bytes` and `order` with it.
        var index: [CacheKey: IndexEntry] = [:]
        /// Whether start-up's scan has been merged into `index`.
        var indexed = false
        /// Keys removed before then: the scan may have seen them, and must not bring them back.
        var removedBeforeIndexing: Set<CacheKey> = []
        var bytes = 0
        /// The index's entries, least recently used first, for eviction.
        var order = EvictionOrder()
        /// Entries checked in this process (metadata, size, and libmagic), bounded.
        var verified: [CacheKey: CachedEntry] = [:]
        /// Entries waiting payloads are being served from: never evicted.
        var pins: [CacheKey: Int] = [:]
        /// Keys whose lock this process holds.
        var busy: Set<CacheKey> = []
    }

    /// Opens (creating if needed) the cache at `configuration.directory`, refusing a directory
    /// another user owns or may write unless `allowsSharedDirectory`, and starts the eviction
    /// thread, which first removes what crashed processes left and indexes the entries
    /// (`indexEntries`), then evicts beyond the budget (unless not `trimsWhenOpened`: a
    /// maintenance command's budget may not be the fetchers'). `beforeIndexing` runs on that
    /// thread first (tests hold the indexing back).
    init(
        configuration: PushAttachmentFetcher.Configuration.Cache, classifier: MediaClassifier? = nil, clock: CacheClock = .system,
        sniffBytes: Int = 4096, verifiedCapacity: Int = 4096, largestBody: Int = .max,
        trimsWhenOpened: Bool = true, beforeIndexing: (@Sendable () -> Void)? = nil
    ) throws(AttachmentFetcherError) {
        self.trimsWhenOpened = trimsWhenOpened
        self.verifiedCapacity = max(2, verifiedCapacity)
        self.largestBody = largestBody
        var configuration = configuration
        configuration.directory = FilePath.absolute(configuration.directory).string
        self.configuration = configuration
        self.classifier = classifier
        self.clock = clock
        openedAt = Self.nanoseconds(clock.date())
        self.sniffBytes = sniffBytes
        let directory = configuration.directory
        entriesDirectory = directory + "/" + Self.entriesName
        temporaryDirectory = directory + "/tmp"
        do {
            try Syscalls.makeDirectories(FilePath(directory))
        } catch {
            throw .cacheDirectoryUnusable("cannot create the cache directory \(directory): \(error)")
        }
        let shared = configuration.allowsSharedDirectory
        root = try Self.openDirectory(directory, in: nil, allowingShared: shared)
        entries = try Self.openDirectory(Self.entriesName, in: root, allowingShared: shared, path: entriesDirectory)
        temporary = try Self.openDirectory("tmp", in: root, allowingShared: shared, path: temporaryDirectory)
        var problem: String?
        do {
            let file = try Syscalls.open(
                FilePath(Self.lockName), in: root, flags: O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, permissions: 0o644)
            if (try? Syscalls.status(of: file))?.type == .regular {
                lockFile = file
            } else {
                try? file.close()
                lockFile = nil
                problem = "\(directory)/lock is not a regular file"
            }
        } catch {
            lockFile = nil
            problem = "cannot open \(directory)/lock: \(error)"
        }
        lockFileProblem = problem
        heartbeat = lockFile.map(Heartbeat.init(lockFile:))
        storeProblem = [entriesDirectory, temporaryDirectory].lazy.compactMap { path in
            do {
                try Syscalls.checkAccess(FilePath(path), W_OK | X_OK)
                return nil
            } catch {
                return "cannot write in \(path): \(error)"
            }
        }.first ?? Self.attributeProblem(in: temporary, path: temporaryDirectory)
        evictor.start(for: self, beforeIndexing: beforeIndexing)
    }

    /// Why no entry can be kept in `temporary` (at `path`), if none can: an entry's metadata is
    /// an extended attribute of its body (`CacheEntryMetadata.attributeName`), which some file
    /// systems do not keep (ramfs, vfat, tmpfs before Linux 6.6). Tried once, on
    /// a nameless file that goes with its descriptor (a named one, removed at once, where the file
    /// system has no `O_TMPFILE`), rather than found by every commit failing; where the attempt
    /// fails otherwise (a full disk), nothing is concluded and each commit says what it meets.
    /// `anonymous: false` tries a named file at once (tests).
    static func attributeProblem(in temporary: FileDescriptor, path: String, anonymous: Bool = true) -> String? {
        guard case .success(let (file, made)) = TemporaryFiles.create(in: path, relativeTo: temporary, anonymous: anonymous) else { return nil }
        defer {
            TemporaryFiles.remove(made, madeIn: path, relativeTo: temporary)
            try? file.close()
        }
        do {
            try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: [0])
            return nil
        } catch {
            guard error.rawValue == EOPNOTSUPP else { return nil }
            return "the file system of \(path) keeps no extended attributes (\(CacheEntryMetadata.attributeName)), where the cache keeps each entry's metadata (ramfs, vfat, tmpfs before Linux 6.6)"
        }
    }

    /// Start-up's work, on the eviction thread (`Evictor`) so that opening a cache of any size
    /// returns at once: removes what crashed processes left, then indexes the entries on disk
    /// beside those this process has stored or removed meanwhile. Returns whether the bodies are
    /// over the budget.
    func indexEntries() -> Bool {
        removeOrphans(minimumAge: TemporaryFiles.orphanAge)
        let scanned = scan()
        return state.withLock { state in
            state.mergeIndex(scanned)
            return trimsWhenOpened && state.bytes > configuration.maximumBytes
        }
    }

    /// Waits until the entries on disk are indexed (or the store is closing); `false` if
    /// `timeout` passed first.
    func waitUntilIndexed(timeout: Duration) -> Bool { evictor.waitUntilIndexed(timeout: timeout) }

    /// Another descriptor of `tmp/`, for the bodies' files made ahead (`PreparedFiles`, which
    /// owns it): opened through the one this store holds, never by path.
    func openTemporaryDirectory() throws(AttachmentFetcherError) -> FileDescriptor {
        do {
            return try Syscalls.open(".", in: temporary, flags: O_RDONLY | O_DIRECTORY)
        } catch {
            throw .cacheDirectoryUnusable("cannot open the cache directory \(temporaryDirectory): \(error)")
        }
    }

    deinit {
        evictor.stop()
        heartbeat?.stop()
        for descriptor in [root, entries, temporary] + (lockFile.map { [$0] } ?? []) { try? descriptor.close() }
    }

    /// Opens a directory of the cache, not following a symbolic link, and checks whose it is.
    private static func openDirectory(
        _ name: String, in parent: FileDescriptor?, allowingShared: Bool, path: String? = nil
    ) throws(AttachmentFetcherError) -> FileDescriptor {
        let path = path ?? name
        do {
            if let parent { try Syscalls.makeDirectory(FilePath(name), in: parent, permissions: 0o755) }
            let descriptor = try Syscalls.open(FilePath(name), in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            let status = try Syscalls.status(of: descriptor)
            if !allowingShared {
                let permissions = status.permissions
                if status.userID.rawValue != geteuid() {
                    try? descriptor.close()
                    throw AttachmentFetcherError.cacheDirectoryUnsafe(
                        "the cache directory \(path) belongs to another user (uid \(status.userID.rawValue)); allow a shared cache to use it anyway (Configuration.Cache.allowsSharedDirectory; fetch-attachment --allow-shared-cache-dir)")
                }
                if permissions.contains(.groupWrite) || permissions.contains(.otherWrite) {
                    try? descriptor.close()
                    throw AttachmentFetcherError.cacheDirectoryUnsafe(
                        "the cache directory \(path) is writable by other users (mode \(String(permissions.rawValue, radix: 8))); allow a shared cache to use it anyway (Configuration.Cache.allowsSharedDirectory; fetch-attachment --allow-shared-cache-dir)")
                }
            }
            return descriptor
        } catch let error as AttachmentFetcherError {
            throw error
        } catch {
            // O_NOFOLLOW | O_DIRECTORY answers a symbolic link with ENOTDIR: say what it is.
            if let errno = error as? Errno, errno == .notDirectory,
                (try? parent.map { try Syscalls.status(of: FilePath(name), in: $0) } ?? Syscalls.status(of: FilePath(name), followingLink: false))?.type
                    == .symbolicLink
            {
                throw .cacheDirectoryUnsafe("the cache directory \(path) is a symbolic link, which the cache does not follow")
            }
            throw .cacheDirectoryUnusable("cannot open the cache directory \(path): \(error)")
        }
    }

    // MARK: Reading

    /// The entry for `key` this process verified, if it is still fresh; otherwise the entry on
    /// disk, verified now (`load`). No system call when it is known and fresh.
    func entry(for key: CacheKey) -> CachedEntry? {
        if let known = state.withLock({ $0.verified[key] }), known.isFresh(at: clock.date()) { return known }
        return load(key, keepingOpen: false)?.entry
    }

    /// The entry on disk for `key`, checked: a regular file (a symbolic link is removed, never
    /// followed), with our metadata, of the recorded size and modification time (a body written
    /// in place since it was stored has another), and, on its first use in this process, of the type libmagic finds in it. An
    /// entry that fails a check is removed. With `keepingOpen`, its open descriptor comes too.
    func load(_ key: CacheKey, keepingOpen: Bool) -> (entry: CachedEntry, descriptor: FileDescriptor?)? {
        let name = key.name
        let file: FileDescriptor
        do {
            file = try Syscalls.open(name, in: entries, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch {
            // ELOOP: a symbolic link where a body belongs; anything else is no entry.
            if error == .tooManySymbolicLinkLevels { remove(key) }
            return nil
        }
        guard let found = check(file, key: key) else {
            try? file.close()
            return nil
        }
        if !keepingOpen { try? file.close() }
        return (found, keepingOpen ? file : nil)
    }

    /// This process's effective user, who owns the entries it commits.
    private static let userID = geteuid()

    /// Whether a body's inode may be served: read-only for everyone, as a commit leaves it
    /// (`bodyMode`), and this user's unless the cache is shared (`allowsSharedDirectory`). A body
    /// someone may write could be turned into anything after libmagic's check, through every
    /// payload's hard link of it.
    private func isServable(_ status: Stat) -> Bool {
        let writable: FilePermissions = [.ownerWrite, .groupWrite, .otherWrite]
        guard status.permissions.isDisjoint(with: writable) else { return false }
        return configuration.allowsSharedDirectory || status.userID.rawValue == Self.userID
    }

    /// `load`'s checks of the open body.
    private func check(_ file: FileDescriptor, key: CacheKey) -> CachedEntry? {
        guard let status = try? Syscalls.status(of: file), status.type == .regular else {
            remove(key)
            return nil
        }
        // Writable by its owner alone: a refresh in progress (`updateAttribute` opens a body to its
        // owner for a moment where the attribute cannot be set on a read-only file), which this
        // process, not holding the key's lock, must not remove. Not served either; a body a kill
        // left so is replaced by the next download's commit, under the lock.
        if status.permissions.contains(.ownerWrite), status.permissions.isDisjoint(with: [.groupWrite, .otherWrite]) {
            return nil
        }
        guard isServable(status), let bytes = try? Syscalls.attribute(CacheEntryMetadata.attributeName, of: file),
            let metadata = CacheEntryMetadata.decode(bytes), metadata.size == Int(status.size)
        else {
            remove(key)
            return nil
        }
        // Larger than the budget: no body this cache keeps (a planted one, not this cache's). Larger than
        // this process accepts: another process's, maybe, and no use here.
        guard metadata.size <= configuration.maximumBytes else {
            remove(key)
            return nil
        }
        guard metadata.size <= largestBody else { return nil }
        let modified = Self.nanoseconds(status.st_mtim)
        let known = state.withLock { $0.verified[key] }
        // Written in place since it was stored (or damaged so): dropped, not read to find out
        // whether its bytes still are the same.
        if modified != metadata.modified {
            remove(key)
            return nil
        }
        let inode = UInt64(status.inode.rawValue)
        let media: MediaType
        if let known, known.inode == inode, known.metadata.modified == metadata.modified {
            media = known.media
        } else {
            guard let found = classify(file) else {
                remove(key)
                return nil
            }
            media = found
        }
        let entry = CachedEntry(
            key: key, metadata: metadata, media: media, bodyPath: entriesDirectory + "/" + key.hex, inode: inode)
        remember(entry, lastUsed: Self.nanoseconds(status.st_ctim))
        return entry
    }

    /// The type libmagic finds in the body's first bytes; `nil` for a type no platform takes, and
    /// in a store without a classifier (maintenance only), which serves nothing.
    private func classify(_ file: FileDescriptor) -> MediaType? {
        guard let classifier else { return nil }
        var window = SniffWindow(capacity: sniffBytes)
        var pieces = 0
        // At most 64 pieces of 64 KiB (4 MiB), as long as the window wants more.
        try? file.forEachChunk(ofSize: 1 << 16) { piece in
            window.consume(piece)
            pieces += 1
            return !window.isFull && pieces < 64
        }
        guard case .success(let media) = classifier.classify(window) else { return nil }
        return media
    }

    func remember(_ entry: CachedEntry, lastUsed: Int64) {
        state.withLock { state in
            if state.verified.count >= verifiedCapacity {
                // Forget half, oldest use first: bounded, and cheap on average.
                let oldest = state.verified.keys.sorted { (state.index[$0]?.lastUsed ?? 0) < (state.index[$1]?.lastUsed ?? 0) }
                for key in oldest.prefix(verifiedCapacity / 2) { state.verified[key] = nil }
            }
            state.verified[entry.key] = entry
            state.setEntry(entry.key, size: entry.metadata.size, lastUsed: lastUsed)
        }
    }

    /// Forgets `key` in this process (its entry went elsewhere).
    func forget(_ key: CacheKey) {
        state.withLock { _ = $0.verified.removeValue(forKey: key) }
    }

    /// This payload's own file for `entry`, at `path`: a hard link made by name (`linkat`, then
    /// an `lstat` that checks the link is the verified regular file), from `descriptor` when the
    /// name went, or a copy where links are impossible. `nil` when the entry is gone and no
    /// descriptor holds it: a miss.
    func serve(_ entry: CachedEntry, descriptor: FileDescriptor?, at path: String) -> Result<DownloadedFile, TransferFailure>? {
        var placed = entry.file
        placed.path = path
        var current = entry
        attempts: for _ in 0..<8 {
            switch linkByName(current, at: path) {
            case .linked:
                touch(entry.key)
                return .success(placed)
            case .failed(let error) where error == .tooManyLinks:
                // A body with as many links as its file system allows: a fresh inode, once more.
                guard let reseeded = reseed(current) else { break attempts }
                current = reseeded
            case .failed(let error) where AttachmentFiles.needsCopy(error):
                guard let copied = copyByName(current, at: path) else { break attempts }
                return copied.map { placed }
            case .failed(let error) where error == .noSuchFileOrDirectory && AttachmentFiles.restoreDirectory(of: path):
                // The output directory was gone, not the entry: made again, linked again.
                continue
            case .failed(let error) where error != .noSuchFileOrDirectory:
                return .failure(TransferFailure(reason: .storage, detail: "cannot link \(entry.bodyPath) to \(path): \(error)"))
            case .failed, .notTheEntry:
                forget(entry.key)
                break attempts
            }
        }
        guard let descriptor else { return nil }
        return AttachmentFiles.link(descriptor, at: path).map { placed }
    }

    private enum LinkAttempt {
        case linked
        case notTheEntry
        case failed(Errno)
    }

    /// `linkat` of the entry's name, then an `lstat` of the link: the verified regular file, or
    /// the link goes again.
    private func linkByName(_ entry: CachedEntry, at path: String) -> LinkAttempt {
        let target = FilePath(path)
        do {
            try Syscalls.link(entry.key.name, in: entries, to: target, in: nil)
            let status = try Syscalls.status(of: target, followingLink: false)
            guard status.type == .regular, UInt64(status.inode.rawValue) == entry.inode, isServable(status) else {
                try? Syscalls.unlink(target)
                return .notTheEntry
            }
            return .linked
        } catch {
            return .failed(error)
        }
    }

    /// A copy of the entry, opened by name and checked to be the verified file.
    private func copyByName(_ entry: CachedEntry, at path: String) -> Result<Void, TransferFailure>? {
        guard let source = try? Syscalls.open(entry.key.name, in: entries, flags: O_RDONLY | O_NOFOLLOW) else { return nil }
        let result: Result<Void, TransferFailure>?
        if let status = try? Syscalls.status(of: source), UInt64(status.inode.rawValue) == entry.inode, isServable(status) {
            result = AttachmentFiles.copy(from: source, to: path)
        } else {
            result = nil
        }
        try? source.close()
        return result
    }

    /// Records a use of `key` now, for least-recently-used eviction (other processes see the
    /// link's change time).
    private func touch(_ key: CacheKey) {
        let now = Self.nanoseconds(clock.date())
        state.withLock { $0.setLastUsed(key, to: now) }
    }

    /// Gives `entry`'s body a fresh inode (a copy, with its metadata, renamed over it) once the
    /// old one has as many hard links as the file system allows; files already linked keep the
    /// old inode.
    func reseed(_ entry: CachedEntry) -> CachedEntry? {
        guard let source = try? Syscalls.open(entry.key.name, in: entries, flags: O_RDONLY | O_NOFOLLOW) else { return nil }
        defer { try? source.close() }
        guard (try? Syscalls.status(of: source)).map({ UInt64($0.inode.rawValue) }) == entry.inode else {
            // Reseeded already, by another payload: the new inode.
            return load(entry.key, keepingOpen: false)?.entry
        }
        // A named copy in `tmp/` (locked by this process while it is written), made through its
        // descriptor, renamed over the entry.
        guard case .success(let made) = TemporaryFiles.create(in: temporaryDirectory, relativeTo: temporary) else { return nil }
        let copy = made.file
        let name = FilePath(String(made.path.dropFirst(temporaryDirectory.count + 1)))
        defer { try? copy.close() }
        do {
            try AttachmentFiles.copyBytes(from: source, to: copy)
            var metadata = entry.metadata
            let status = try Syscalls.status(of: copy)
            metadata.modified = Self.nanoseconds(status.st_mtim)
            try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: copy, to: metadata.encoded())
            try Syscalls.setPermissions(of: copy, Self.bodyMode)
            try Syscalls.rename(name, in: temporary, to: entry.key.name, in: entries)
            var reseeded = entry
            reseeded.metadata = metadata
            reseeded.inode = UInt64(status.inode.rawValue)
            remember(reseeded, lastUsed: Self.nanoseconds(clock.date()))
            return reseeded
        } catch {
            try? Syscalls.unlink(name, in: temporary)
            return nil
        }
    }

    // MARK: Internals

    /// How long an entry stays fresh: the origin's word, else the configured default; at most
    /// `HTTPFreshness.longestDelta`, so that its instant is a number every clock can hold.
    func lifetime(_ freshness: HTTPFreshness) -> TimeInterval {
        let lifetime = freshness.lifetime ?? configuration.defaultFreshness
        return min(lifetime.timeInterval, TimeInterval(HTTPFreshness.longestDelta))
    }

    static func nanoseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
    static func nanoseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1e9) }

    /// Whether `name` is an entry's: 64 lowercase hex digits.
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Every entry's size and change time (its last link), for the index; cut short (with what
    /// it found) when the store is closing.
    private func scan() -> [CacheKey: IndexEntry] {
        var index: [CacheKey: IndexEntry] = [:]
        for (number, name) in ((try? Syscalls.names(in: entries)) ?? []).enumerated() where Self.isEntryName(name) {
            if number % 1024 == 1023, evictor.isStopped { break }
            guard let status = try? Syscalls.status(of: FilePath(name), in: entries), status.type == .regular else { continue }
            index[CacheKey(hex: name)] = IndexEntry(size: Int(status.size), lastUsed: Self.nanoseconds(status.st_ctim))
        }
        return index
    }

    /// Removes temporary files no living process holds (older than `minimumAge` seconds), and
    /// files of an earlier layout in `entries/`.
    func removeOrphans(minimumAge: Int) {
        TemporaryFiles.removeOrphans(in: temporary, minimumAge: minimumAge)
        TemporaryFiles.removeOrphans(in: entries, minimumAge: minimumAge)
        for name in (try? Syscalls.names(in: entries)) ?? [] where name.hasSuffix(".body") || name.hasSuffix(".meta") {
            try? Syscalls.unlink(FilePath(name), in: entries)
        }
    }
}
