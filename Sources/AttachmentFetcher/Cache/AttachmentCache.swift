import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Maintenance of an on-disk attachment cache (the one `Configuration.cache` names), without a
/// fetcher: what `fetch-attachment cache stats|prune|clear` runs.
public struct AttachmentCache: Sendable {
    private let store: CacheStore

    /// Opens the cache (creating it if missing), once what crashed processes left is removed and
    /// its entries are indexed. Opening evicts nothing: only `prune` applies the budget, so that
    /// `cache stats` with another budget than the fetchers' removes nothing.
    public init(configuration: PushAttachmentFetcher.Configuration.Cache) async throws(AttachmentFetcherError) {
        let result = await BlockingIO.run { () -> Result<CacheStore, AttachmentFetcherError> in
            do throws(AttachmentFetcherError) {
                let store = try CacheStore(configuration: configuration, trimsWhenOpened: false)
                // An hour at most: the scan of a cache of a million entries takes seconds.
                _ = store.waitUntilIndexed(timeout: .seconds(3600))
                return .success(store)
            } catch {
                return .failure(error)
            }
        }
        store = try result.get()
    }

    /// Why no fetcher can add entries to this cache, if none can (a file system that keeps no
    /// extended attributes; a directory this user may not write): its entries are served, and
    /// nothing is kept.
    package var storeProblem: String? { store.storeProblem }

    /// Entries, fresh entries, bytes, budget and temporary files.
    public func statistics() async -> CacheStatistics {
        await BlockingIO.run { [store] in store.statistics() }
    }

    /// Removes stale entries and evicts least recently used ones beyond the budget, now.
    /// Returns how many entries and bytes were removed.
    public func prune() async -> (entries: Int, bytes: Int) {
        let (entries, bytes, _) = await pruneReporting()
        return (entries, bytes)
    }

    /// `prune()`, with why the first entry that could not be removed stayed, if one did not.
    package func pruneReporting() async -> (entries: Int, bytes: Int, problem: String?) {
        await BlockingIO.run { [store] in store.prune() }
    }

    /// Removes every entry (except ones another process is writing right now). Returns how many.
    public func clear() async -> Int {
        await clearReporting().removed
    }

    /// `clear()`, with the bytes of the entries removed, and why the first entry that could not
    /// be removed stayed, if one did not (another process's are skipped, not counted).
    package func clearReporting() async -> (removed: Int, bytes: Int, problem: String?) {
        await BlockingIO.run { [store] in store.clear() }
    }

    /// Whether `directory` holds a cache: the directory `entries/` and the lock file that opening
    /// one makes (or an earlier layout's `locks/`), neither a symbolic link. An inspection of a
    /// directory without them opens nothing there, which would make them, and `cache clear`
    /// removes nothing there: a file named `lock`, or an `entries/` alone, is somebody else's.
    public static func holdsCache(at directory: String) -> Bool {
        func status(_ name: String) -> Stat? { try? Syscalls.status(of: FilePath(directory + "/" + name), followingLink: false) }
        return status(CacheStore.entriesName)?.type == .directory
            && (status(CacheStore.lockName)?.type == .regular || status("locks")?.type == .directory)
    }

    /// The regular files directly in `directory` (the command line's default output directory,
    /// which holds each payload's hard link of a cache body): how many names, and the bytes they
    /// hold, each file (inode) counted once however many links it has here. Nothing is followed: a
    /// `directory` that is a symbolic link is an error, and links and directories in it are
    /// not counted. A missing directory holds nothing.
    public static func outputFiles(in directory: String) throws(AttachmentFetcherError) -> (files: Int, bytes: Int) {
        guard let (descriptor, names) = try Self.regularFiles(in: directory) else { return (0, 0) }
        defer { try? descriptor.close() }
        var inodes = Set<UInt64>()
        var bytes = 0
        for (_, status) in names where inodes.insert(UInt64(status.inode.rawValue)).inserted { bytes += Int(status.size) }
        return (names.count, bytes)
    }

    /// Removes the regular files directly in `directory` (see `outputFiles(in:)`), never
    /// following a symbolic link nor entering a directory: only those whose status has not
    /// changed for `minimumAge` (a file a fetch has just made or linked is left to its reader;
    /// `.zero` takes every one), and with `unlinkedOnly`, only those that are their file's one
    /// link (no cache entry holds their body any more, so their space is outside the cache's
    /// budget). Returns how many went, and the bytes that freed: a file's once its last link
    /// went (several of its links may be here, and none left elsewhere).
    public static func removeOutputFiles(
        in directory: String, unlinkedOnly: Bool = false, minimumAge: Duration = .zero
    ) throws(AttachmentFetcherError) -> (files: Int, bytes: Int) {
        guard let (descriptor, names) = try Self.regularFiles(in: directory) else { return (0, 0) }
        defer { try? descriptor.close() }
        var removed = (files: 0, bytes: 0)
        // Each file's links removed here so far.
        var unlinked: [UInt64: Int] = [:]
        let changedBefore = CacheStore.nanoseconds(Date()) - Int64(minimumAge.wholeNanoseconds)
        for (name, status) in names
        where (!unlinkedOnly || status.linkCount == 1) && (minimumAge == .zero || CacheStore.nanoseconds(status.st_ctim) < changedBefore) {
            // A body another process is streaming here (its cache's tmp/ could not take it).
            if TemporaryFiles.isTemporary(name), TemporaryFiles.isHeld(name, in: descriptor) { continue }
            guard (try? Syscalls.unlink(FilePath(name), in: descriptor)) != nil else { continue }
            removed.files += 1
            let inode = UInt64(status.inode.rawValue)
            unlinked[inode, default: 0] += 1
            if unlinked[inode] == status.linkCount { removed.bytes += Int(status.size) }
        }
        return removed
    }

    /// `directory`, opened without following a link, and its regular files with their status;
    /// `nil` when it does not exist.
    private static func regularFiles(
        in directory: String
    ) throws(AttachmentFetcherError) -> (FileDescriptor, [(name: String, status: Stat)])? {
        let descriptor: FileDescriptor
        do {
            descriptor = try Syscalls.open(FilePath(directory), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        } catch .noSuchFileOrDirectory {
            return nil
        } catch .tooManySymbolicLinkLevels, .notDirectory {
            let link = (try? Syscalls.status(of: FilePath(directory), followingLink: false))?.type == .symbolicLink
            if link { throw .cacheDirectoryUnsafe("\(directory) is a symbolic link, not a directory: left as it is") }
            throw .cacheDirectoryUnusable("\(directory) is a file, not a directory: left as it is")
        } catch {
            throw .cacheDirectoryUnusable("cannot open \(directory): \(error)")
        }
        do {
            let files = try Syscalls.names(in: descriptor).compactMap { name -> (name: String, status: Stat)? in
                // Only the files the fetcher names: anything else there is somebody else's.
                guard AttachmentFiles.isAttachmentName(name), let status = try? Syscalls.status(of: FilePath(name), in: descriptor), status.type == .regular else { return nil }
                return (name, status)
            }
            return (descriptor, files)
        } catch {
            try? descriptor.close()
            throw .cacheDirectoryUnusable("cannot list \(directory): \(error)")
        }
    }
}
