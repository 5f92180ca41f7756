import Foundation
import SystemPackage
import Glibc

/// Writing entries: a committed body, a refreshed one, a removed one.
extension CacheStore {
    /// Stores a validated body as the entry for `key`: its metadata set on it, made read-only,
    /// named `entries/<key>` (a nameless body by `linkat`, a named one by `rename`). Returns the
    /// entry and the body's descriptor, open, for the waiting payloads. Evicts in the background
    /// when the budget is exceeded.
    func commit(
        _ body: DownloadedFile, key: CacheKey, freshness: HTTPFreshness
    ) -> Result<(entry: CachedEntry, descriptor: FileDescriptor), TransferFailure> {
        let file: FileDescriptor
        if let descriptor = body.descriptor {
            file = descriptor
        } else {
            do {
                file = try Syscalls.open(FilePath(body.path), flags: O_RDWR | O_NOFOLLOW)
            } catch {
                return .failure(TemporaryFiles.failure(error, "cannot open \(body.path)"))
            }
        }
        do {
            let status = try Syscalls.status(of: file)
            let now = clock.date()
            let metadata = CacheEntryMetadata(
                size: body.byteCount, modified: Self.nanoseconds(status.st_mtim),
                freshUntil: now.addingTimeInterval(lifetime(freshness)), etag: freshness.etag, lastModified: freshness.lastModified,
                changedScheme: body.redirectSchemes.changesScheme(from: key.normalizedURL),
                downloadTime: CacheEntryMetadata.kept(body.downloadTime), unsuffixedName: body.hasUnsuffixedName,
                redirectSetCookie: body.redirectSetCookie, lifetime: freshness.lifetime.map { Int($0.components.seconds) },
                oneSignalUntypedMIME: !body.hasOneSignalMIMEExtension, cleverTapUntypedMIME: !body.hasCleverTapMIMEExtension,
                cutAtOrigin: body.cutAtOrigin, airshipUntypedMIME: !body.hasAirshipMIMEHint, unsuffixedReason: body.unsuffixedNameReason)
            try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: metadata.encoded())
            try Syscalls.setPermissions(of: file, Self.bodyMode)
            let name = key.name
            if !TemporaryFiles.isAnonymous(body.path) {
                // Named (a file system without `O_TMPFILE`): the name moves, through `tmp/`'s
                // descriptor when it was made there; the descriptor, if handed on, still holds
                // the same file.
                let path = FilePath(body.path)
                if path.removingLastComponent().string == temporaryDirectory, let made = path.lastComponent {
                    try Syscalls.rename(FilePath(made.string), in: temporary, to: name, in: entries)
                } else {
                    try Syscalls.rename(path, in: nil, to: name, in: entries)
                }
            } else {
                if (try? Syscalls.link(file, as: name, in: entries)) == nil {
                    // A stale entry this transfer replaces (the key's lock is held).
                    try? Syscalls.unlink(name, in: entries)
                    dropFromIndex(key)
                    try Syscalls.link(file, as: name, in: entries)
                }
            }
            let entry = CachedEntry(
                key: key, metadata: metadata, media: body.media, bodyPath: entriesDirectory + "/" + key.hex,
                inode: UInt64(status.inode.rawValue))
            // Used now, once named: not at `now`, before the metadata, the mode and the name changed
            // the file (its ctime). Eviction takes a ctime over a second past the last use for
            // another process's use, and a commit held up that long in between would look so.
            remember(entry, lastUsed: Self.nanoseconds(clock.date()))
            if state.withLock({ $0.bytes > configuration.maximumBytes }) { evictor.wake() }
            return .success((entry, file))
        } catch {
            if body.descriptor == nil { try? file.close() }
            return .failure(TemporaryFiles.failure(error, "cannot store \(key) in the cache"))
        }
    }

    /// Renews `entry`'s freshness after a `304 Not Modified` (its metadata attribute, in place),
    /// through `descriptor` when the entry is held open (its name may have gone since), else by
    /// name. A `304` that gives no lifetime keeps the one the origin gave the body (RFC 9111
    /// 4.3.4: `no-cache` still revalidates every use).
    func refresh(_ entry: CachedEntry, through descriptor: FileDescriptor? = nil, freshness: HTTPFreshness) -> Result<CachedEntry, TransferFailure> {
        var metadata = entry.metadata
        var freshness = freshness
        if freshness.lifetime == nil, let kept = metadata.lifetime { freshness.lifetime = .seconds(kept) }
        metadata.lifetime = freshness.lifetime.map { Int($0.components.seconds) }
        metadata.freshUntil = clock.date().addingTimeInterval(lifetime(freshness))
        metadata.etag = freshness.etag ?? metadata.etag
        metadata.lastModified = freshness.lastModified ?? metadata.lastModified
        let error = descriptor.map { updateAttribute(metadata, of: $0, inode: entry.inode) } ?? setMetadata(metadata, of: entry)
        if let error {
            return .failure(TransferFailure(reason: .storage, detail: "cannot refresh \(entry.key) in the cache: \(error)"))
        }
        var refreshed = entry
        refreshed.metadata = metadata
        remember(refreshed, lastUsed: Self.nanoseconds(clock.date()))
        return .success(refreshed)
    }

    /// Sets the metadata attribute of `entry`'s body, in place; the error, or `nil`.
    fileprivate func setMetadata(_ metadata: CacheEntryMetadata, of entry: CachedEntry) -> Errno? {
        let file: FileDescriptor
        do {
            file = try Syscalls.open(entry.key.name, in: entries, flags: O_RDONLY | O_NOFOLLOW)
        } catch {
            return error
        }
        let result = updateAttribute(metadata, of: file, inode: entry.inode)
        try? file.close()
        return result
    }

    fileprivate func updateAttribute(_ metadata: CacheEntryMetadata, of file: FileDescriptor, inode: UInt64) -> Errno? {
        guard (try? Syscalls.status(of: file)).map({ UInt64($0.inode.rawValue) }) == inode else { return .noSuchFileOrDirectory }
        if (try? Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: metadata.encoded())) != nil { return nil }
        // Read-only bodies: their owner may open them for a moment.
        guard (try? Syscalls.setPermissions(of: file, 0o644)) != nil else { return .permissionDenied }
        let error: Errno?
        do {
            try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: metadata.encoded())
            error = nil
        } catch let failure {
            error = failure
        }
        try? Syscalls.setPermissions(of: file, Self.bodyMode)
        return error
    }

    /// Unlinks `key`'s entry and forgets it; the error when nothing was unlinked (no entry, a
    /// directory planted under its name, which is left alone, a file system that refuses).
    @discardableResult
    func remove(_ key: CacheKey) -> Result<Void, Errno> {
        defer { dropFromIndex(key) }
        return Result { () throws(Errno) in try Syscalls.unlink(key.name, in: entries) }
    }

    /// `remove(_:)`, saying whether the entry went; the first failure other than an entry
    /// already gone goes into `problem`, unless one is there.
    @discardableResult
    func remove(_ key: CacheKey, notingProblemIn problem: inout String?) -> Bool {
        switch remove(key) {
        case .success:
            return true
        case .failure(let error):
            if error != .noSuchFileOrDirectory, problem == nil { problem = "cannot remove \(entriesDirectory)/\(key.hex): \(error)" }
            return false
        }
    }

    func dropFromIndex(_ key: CacheKey) {
        state.withLock { state in
            state.verified[key] = nil
            state.removeEntry(key)
        }
    }
}
