import Crypto
import Foundation

/// What is kept beside each cached body, as `entries/<key>.meta` (JSON).
struct CacheEntryMetadata: Codable, Sendable, Hashable {
    /// The normalised URL the body came from.
    var url: String
    /// The MIME type libmagic found.
    var mime: String
    /// Its iOS type class.
    var kind: MediaKind
    /// The suffix files made from it get.
    var fileExtension: String
    /// The body's size in bytes.
    var size: Int
    /// The body's SHA-256, hex.
    var sha256: String
    /// Validators for revalidation.
    var etag: String?
    var lastModified: String?
    /// When the body was stored, and until when it is fresh.
    var storedAt: Date
    var freshUntil: Date

    var media: MediaType { MediaType(mime: mime, kind: kind, fileExtension: fileExtension) }
}

/// A cached body that matched its metadata when it was looked up.
struct CachedEntry: Sendable, Hashable {
    /// Whose entry.
    var key: CacheKey
    /// What the metadata says.
    var metadata: CacheEntryMetadata
    /// `entries/<key>.body`.
    var bodyPath: String

    /// Whether it may be served without asking the origin.
    func isFresh(at now: Date = Date()) -> Bool { metadata.freshUntil > now }

    /// The body as a validated file, for linking into an output directory.
    var file: DownloadedFile {
        DownloadedFile(
            path: bodyPath, media: metadata.media, byteCount: metadata.size, effectiveURL: metadata.url, headerBlock: "")
    }
}

/// Counts and sizes of a cache directory.
public struct CacheStatistics: Sendable, Codable, Hashable {
    /// The cache directory.
    public var directory: String
    /// Entries with both body and metadata.
    public var entries: Int
    /// Of those, fresh ones.
    public var freshEntries: Int
    /// Bytes of all bodies.
    public var bytes: Int
    /// The configured budget.
    public var maximumBytes: Int
    /// Temporary files (downloads in progress, or left by a crash until the next start-up).
    public var temporaryFiles: Int
}

/// The on-disk cache: `entries/<key>.body` + `entries/<key>.meta`, `tmp/` for bodies being
/// written, and `locks/<key>.lock` for the per-key locks that let processes share downloads.
///
/// Consistency: a body and its metadata are written under temporary names in `tmp/` and renamed
/// into `entries/` (body first, metadata last), so a reader that finds metadata finds the whole
/// body, and a crash leaves only temporary files, which the next start-up removes once their
/// process is gone. A body whose size, or (on first use in a process, or after its inode or
/// modification time changed) whose SHA-256 no longer matches its metadata is a miss and is
/// removed. All methods block. A cache hit calls `entry(for:)` and `markUsed` in its own task (a
/// `stat`, and a `utimes` once a minute; the first use in a process also reads the metadata and
/// hashes the body); the rest, whole-body and whole-cache work, goes through `BlockingIO`.
final class CacheStore: Sendable {
    /// The configuration.
    let configuration: PushAttachmentFetcher.Configuration.Cache
    /// `<directory>/entries`, `<directory>/tmp`, `<directory>/locks`.
    let entriesDirectory: String
    let temporaryDirectory: String
    let locksDirectory: String

    private struct Fingerprint: Hashable {
        var inode: UInt64
        var modified: Int64
        var size: Int64
    }

    private struct Memory {
        /// Entries seen in this process, with the fingerprint their checksum was verified at.
        var verified: [CacheKey: (entry: CachedEntry, fingerprint: Fingerprint)] = [:]
        /// When this process last marked an entry used (for LRU), to do it at most once a minute.
        var touched: [CacheKey: Date] = [:]
        /// Bytes of bodies, as this process believes (rescanned on eviction).
        var bytes = 0
    }

    private let memory = Locked(Memory())

    /// Opens (creating if needed) the cache at `configuration.directory`, removes what crashed
    /// processes left, and measures its size.
    init(configuration: PushAttachmentFetcher.Configuration.Cache) throws(AttachmentFetcherError) {
        let root = configuration.directory.hasPrefix("/")
            ? configuration.directory : FileManager.default.currentDirectoryPath + "/" + configuration.directory
        var configuration = configuration
        configuration.directory = URL(fileURLWithPath: root).standardizedFileURL.path
        self.configuration = configuration
        entriesDirectory = configuration.directory + "/entries"
        temporaryDirectory = configuration.directory + "/tmp"
        locksDirectory = configuration.directory + "/locks"
        for directory in [entriesDirectory, temporaryDirectory, locksDirectory] {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw .outputDirectoryUnusable("cannot create the cache directory \(directory): \(error.localizedDescription)")
            }
        }
        removeOrphans()
        let bytes = listEntries().reduce(0) { $0 + $1.size }
        memory.withLock { $0.bytes = bytes }
    }

    // MARK: Reading

    /// The entry for `key` if its body matches its metadata; a mismatching entry is removed.
    func entry(for key: CacheKey) -> CachedEntry? {
        let known = memory.withLock { $0.verified[key] }
        let bodyPath = known?.entry.bodyPath ?? path(of: key, "body")
        guard let fingerprint = Self.fingerprint(of: bodyPath) else {
            memory.withLock { _ = $0.verified.removeValue(forKey: key) }
            return nil
        }
        // The metadata may have been refreshed by another process (a 304): reread it when stale.
        if let known, known.fingerprint == fingerprint, known.entry.isFresh() { return known.entry }
        guard let metadata = readMetadata(key) else { return nil }
        let entry = CachedEntry(key: key, metadata: metadata, bodyPath: bodyPath)
        if let known = memory.withLock({ $0.verified[key] }), known.fingerprint == fingerprint {
            memory.withLock { $0.verified[key] = (entry, fingerprint) }
            return entry
        }
        guard Int64(metadata.size) == fingerprint.size, Self.sha256(ofFile: bodyPath) == metadata.sha256 else {
            remove(key)
            return nil
        }
        memory.withLock { $0.verified[key] = (entry, fingerprint) }
        return entry
    }

    /// Marks `entry` as used now, for least-recently-used eviction (at most once a minute).
    func markUsed(_ entry: CachedEntry) {
        let now = Date()
        let due = memory.withLock { memory -> Bool in
            if let last = memory.touched[entry.key], now.timeIntervalSince(last) < 60 { return false }
            memory.touched[entry.key] = now
            return true
        }
        if due { _ = utimes(path(of: entry.key, "meta"), nil) }
    }

    /// Gives `entry`'s body a fresh inode (a copy renamed over it) once the old one has as many
    /// hard links as the file system allows; files already linked keep the old inode.
    func reseed(_ entry: CachedEntry) -> Bool {
        guard case .success = AttachmentFiles.copy(entry.bodyPath, to: entry.bodyPath, temporaryDirectory: temporaryDirectory) else {
            return false
        }
        if let fingerprint = Self.fingerprint(of: entry.bodyPath) {
            memory.withLock { $0.verified[entry.key] = (entry, fingerprint) }
        }
        return true
    }

    // MARK: Writing

    /// Stores a validated body (still in `tmp/`) as the entry for `key`; the body is moved, so
    /// on success the temporary file is gone. Evicts least recently used entries beyond the budget.
    func commit(
        _ body: DownloadedFile, key: CacheKey, freshness: HTTPFreshness
    ) -> Result<CachedEntry, TransferFailure> {
        guard let digest = Self.sha256(ofFile: body.path) else {
            let reason: FallbackReason = FileDescriptorBudget.isExhaustion(errno) ? .resources : .storage
            return .failure(TransferFailure(reason: reason, detail: "cannot read \(body.path)"))
        }
        let now = Date()
        let metadata = CacheEntryMetadata(
            url: key.normalizedURL, mime: body.media.mime, kind: body.media.kind, fileExtension: body.media.fileExtension,
            size: body.byteCount, sha256: digest, etag: freshness.etag, lastModified: freshness.lastModified,
            storedAt: now, freshUntil: now.addingTimeInterval(lifetime(freshness)))
        let replaced = Self.fingerprint(of: path(of: key, "body"))?.size ?? 0
        guard rename(body.path, path(of: key, "body")) == 0 else {
            return .failure(TransferFailure(reason: .storage, detail: "cannot store \(key) in the cache: \(Self.lastError)"))
        }
        if let failure = writeMetadata(metadata, for: key) {
            remove(key)
            return .failure(failure)
        }
        let entry = CachedEntry(key: key, metadata: metadata, bodyPath: path(of: key, "body"))
        let overBudget = memory.withLock { memory -> Bool in
            memory.bytes += metadata.size - Int(replaced)
            if let fingerprint = Self.fingerprint(of: entry.bodyPath) { memory.verified[key] = (entry, fingerprint) }
            memory.touched[key] = now
            return memory.bytes > configuration.maximumBytes
        }
        if overBudget { evict(toFit: configuration.maximumBytes * 9 / 10, sparing: key) }
        return .success(entry)
    }

    /// Renews `entry`'s freshness after a `304 Not Modified`.
    func refresh(_ entry: CachedEntry, freshness: HTTPFreshness) -> Result<CachedEntry, TransferFailure> {
        var metadata = entry.metadata
        metadata.freshUntil = Date().addingTimeInterval(lifetime(freshness))
        metadata.etag = freshness.etag ?? metadata.etag
        metadata.lastModified = freshness.lastModified ?? metadata.lastModified
        if let failure = writeMetadata(metadata, for: entry.key) { return .failure(failure) }
        var refreshed = entry
        refreshed.metadata = metadata
        memory.withLock { memory in
            if let known = memory.verified[entry.key] { memory.verified[entry.key] = (refreshed, known.fingerprint) }
        }
        return .success(refreshed)
    }

    /// Removes `key`'s entry (metadata first, so no reader finds metadata without a body).
    func remove(_ key: CacheKey) {
        let size = Self.fingerprint(of: path(of: key, "body"))?.size ?? 0
        let removed = unlink(path(of: key, "meta")) == 0
        _ = unlink(path(of: key, "body"))
        memory.withLock { memory in
            memory.verified[key] = nil
            memory.touched[key] = nil
            if removed { memory.bytes -= Int(size) }
        }
    }

    /// Takes `key`'s lock without waiting; `nil` when another holder has it. The lock is an
    /// `flock` on `locks/<key>.lock`, so it dies with its process.
    func tryLock(_ key: CacheKey) -> CacheLock? {
        try? lock(key).get()
    }

    /// `tryLock`, telling a lock held elsewhere (`nil`) from running out of file descriptors
    /// (`resources`), which waiting would not cure.
    func lock(_ key: CacheKey) -> Result<CacheLock?, TransferFailure> {
        let path = "\(locksDirectory)/\(key.hex).lock"
        var openError: Int32 = 0
        if let lock = CacheLock(path: path, openError: &openError) { return .success(lock) }
        if FileDescriptorBudget.isExhaustion(openError) {
            return .failure(
                TransferFailure(reason: .resources, detail: "cannot open \(path): \(String(cString: strerror(openError)))"))
        }
        return .success(nil)
    }

    // MARK: Maintenance

    /// Counts entries, fresh entries, bytes and temporary files.
    func statistics() -> CacheStatistics {
        let entries = listEntries(readingMetadata: true)
        let now = Date()
        let temporary = (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory).count) ?? 0
        return CacheStatistics(
            directory: configuration.directory, entries: entries.count,
            freshEntries: entries.filter { $0.metadata?.freshUntil ?? .distantPast > now }.count,
            bytes: entries.reduce(0) { $0 + $1.size }, maximumBytes: configuration.maximumBytes,
            temporaryFiles: temporary)
    }

    /// Removes stale entries and evicts least recently used ones beyond the budget; returns how
    /// many entries and bytes went.
    func prune() -> (entries: Int, bytes: Int) {
        let before = listEntries(readingMetadata: true)
        let now = Date()
        for entry in before where (entry.metadata?.freshUntil ?? .distantPast) <= now {
            if let lock = tryLock(entry.key) {
                remove(entry.key)
                lock.unlock()
            }
        }
        evict(toFit: configuration.maximumBytes, sparing: nil)
        let after = listEntries()
        return (before.count - after.count, before.reduce(0) { $0 + $1.size } - after.reduce(0) { $0 + $1.size })
    }

    /// Removes every entry not locked right now, and temporary files of processes that are gone;
    /// returns how many entries went.
    func clear() -> Int {
        var removed = 0
        for entry in listEntries() {
            guard let lock = tryLock(entry.key) else { continue }
            remove(entry.key)
            lock.unlock()
            removed += 1
        }
        removeOrphans()
        return removed
    }

    // MARK: Internals

    private func path(of key: CacheKey, _ suffix: String) -> String { "\(entriesDirectory)/\(key.hex).\(suffix)" }

    private func lifetime(_ freshness: HTTPFreshness) -> TimeInterval {
        let lifetime = freshness.lifetime ?? configuration.defaultFreshness
        let (seconds, attoseconds) = lifetime.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    private func readMetadata(_ key: CacheKey) -> CacheEntryMetadata? {
        guard let data = FileManager.default.contents(atPath: path(of: key, "meta")) else { return nil }
        return try? JSONDecoder().decode(CacheEntryMetadata.self, from: data)
    }

    private func writeMetadata(_ metadata: CacheEntryMetadata, for key: CacheKey) -> TransferFailure? {
        let temporary = TemporaryFiles.path(in: temporaryDirectory)
        do {
            let data = try JSONEncoder().encode(metadata)
            guard FileManager.default.createFile(atPath: temporary, contents: data) else {
                if FileDescriptorBudget.isExhaustion(errno) {
                    return TransferFailure(reason: .resources, detail: "cannot write \(temporary): \(Self.lastError)")
                }
                return TransferFailure(reason: .storage, detail: "cannot write \(temporary)")
            }
        } catch {
            return TransferFailure(reason: .storage, detail: "cannot encode cache metadata: \(error)")
        }
        guard rename(temporary, path(of: key, "meta")) == 0 else {
            let failure = TransferFailure(reason: .storage, detail: "cannot store metadata for \(key): \(Self.lastError)")
            TemporaryFiles.remove(temporary)
            return failure
        }
        return nil
    }

    private struct ListedEntry {
        var key: CacheKey
        var size: Int
        var lastUsed: Date
        var metadata: CacheEntryMetadata?
    }

    /// Every entry with both files, read from disk; its metadata file is parsed only when asked
    /// (start-up, eviction and clearing need sizes and use times alone).
    private func listEntries(readingMetadata: Bool = false) -> [ListedEntry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: entriesDirectory) else { return [] }
        var listed: [ListedEntry] = []
        for name in names where name.hasSuffix(".meta") {
            let hex = String(name.dropLast(5))
            let key = CacheKey(hex: hex)
            guard let body = Self.fingerprint(of: path(of: key, "body")),
                let meta = Self.fingerprint(of: path(of: key, "meta"))
            else { continue }
            listed.append(
                ListedEntry(
                    key: key, size: Int(body.size), lastUsed: Date(timeIntervalSince1970: Double(meta.modified) / 1e9),
                    metadata: readingMetadata ? readMetadata(key) : nil))
        }
        return listed
    }

    /// Evicts least recently used entries until the bodies fit in `budget` bytes. Entries whose
    /// lock is held (being written or revalidated) are skipped; readers are safe, because a
    /// payload's file is a hard link or copy made before, and a removed name does not change
    /// the bytes behind an open or linked inode.
    private func evict(toFit budget: Int, sparing spared: CacheKey?) {
        var entries = listEntries().sorted { $0.lastUsed < $1.lastUsed }
        var total = entries.reduce(0) { $0 + $1.size }
        while total > budget, !entries.isEmpty {
            let oldest = entries.removeFirst()
            guard oldest.key != spared, let lock = tryLock(oldest.key) else { continue }
            remove(oldest.key)
            lock.unlock()
            total -= oldest.size
        }
        memory.withLock { $0.bytes = total }
    }

    /// Removes temporary files whose process is gone, bodies without metadata (a crash between
    /// the two renames) older than a minute, and metadata without a body.
    private func removeOrphans() {
        let manager = FileManager.default
        TemporaryFiles.removeOrphans(in: temporaryDirectory)
        let names = Set((try? manager.contentsOfDirectory(atPath: entriesDirectory)) ?? [])
        let now = Date().timeIntervalSince1970
        for name in names {
            let path = "\(entriesDirectory)/\(name)"
            if name.hasSuffix(".body"), !names.contains(String(name.dropLast(5)) + ".meta"),
                let fingerprint = Self.fingerprint(of: path), now - Double(fingerprint.modified) / 1e9 > 60
            {
                _ = unlink(path)
            } else if name.hasSuffix(".meta"), !names.contains(String(name.dropLast(5)) + ".body") {
                _ = unlink(path)
            }
        }
    }

    private static func fingerprint(of path: String) -> Fingerprint? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Fingerprint(
            inode: UInt64(status.st_ino),
            modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
            size: Int64(status.st_size))
    }

    /// SHA-256 of a file, read in 1 MiB pieces; `nil` when it cannot be read.
    static func sha256(ofFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            // `read` answers nil (or empty data) at the end of the file.
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        } catch {
            return nil
        }
        return Hex.encode(hasher.finalize())
    }

    static var lastError: String { String(cString: strerror(errno)) }
}

/// A held per-key cache lock; released by `unlock()`, or when its process ends.
final class CacheLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock at `path` without waiting; `nil` when it is held elsewhere or cannot be
    /// made (then `openError` is the `errno` of the failed `open`).
    init?(path: String, openError: inout Int32) {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            openError = errno
            return nil
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    /// Releases the lock.
    func unlock() { _ = flock(descriptor, LOCK_UN) }

    deinit { close(descriptor) }
}
