import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Final names of attachment files in the output directory.
enum AttachmentFiles {
    /// The output directories fetchers opened, with their permissions: the only directories
    /// `restoreDirectory` makes again.
    private static let keptDirectories = Locked<[String: mode_t]>([:])

    /// Remembers `directory`, an output directory a fetcher made or found, with its permissions
    /// now, for `restoreDirectory`.
    static func keep(_ directory: String) {
        guard let status = try? Syscalls.status(of: FilePath(directory)) else { return }
        keptDirectories.withLock { $0[directory] = status.permissions.rawValue }
    }

    /// Makes `directory`, an output directory a fetcher opened (`keep`), again when it is gone
    /// (removed while the fetcher lives: a tmp cleaner, a user), with the permissions it had;
    /// whether it did. Only the directory itself: a parent gone too is not made again. One that
    /// exists, of whatever type, is left as it is.
    static func restoreDirectory(_ directory: String) -> Bool {
        guard let permissions = keptDirectories.withLock({ $0[directory] }),
            case .failure(.noSuchFileOrDirectory) = Result(catching: { () throws(Errno) in
                try Syscalls.status(of: FilePath(directory), followingLink: false)
            })
        else { return false }
        do {
            try Syscalls.makeDirectory(FilePath(directory), permissions: permissions)
            let made = try Syscalls.open(FilePath(directory), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            defer { try? made.close() }
            // As it was, whatever the umask.
            try Syscalls.setPermissions(of: made, permissions)
            return true
        } catch {
            return false
        }
    }

    /// `restoreDirectory` of the directory `path` is in.
    static func restoreDirectory(of path: String) -> Bool {
        restoreDirectory(FilePath(path).removingLastComponent().string)
    }

    /// Names a validated body `<name>-<random>.<suffix>` in `directory`, where `<name>` comes
    /// from the URL's last path component (letters, digits, `-` and `_` only, so neither the URL
    /// nor the payload's type hint can steer the file elsewhere) and `<suffix>` from the detected
    /// type: a nameless body by `linkat` of its descriptor, a named one (where the file system
    /// has no `O_TMPFILE`) by `rename`. Either is atomic: the file appears whole or not at all.
    /// A descriptor handed on with the body is closed whatever happens.
    static func place(
        _ body: DownloadedFile, in directory: String, namedAfter url: AttachmentURL
    ) -> Result<DownloadedFile, TransferFailure> {
        let path = finalPath(for: body, in: directory, namedAfter: url)
        var placed = body
        placed.path = path
        placed.descriptor = nil
        defer { try? body.descriptor?.close() }
        if let descriptor = body.descriptor, TemporaryFiles.isAnonymous(body.path) {
            do {
                try retryingInRestoredDirectory(of: path) { () throws(Errno) in try Syscalls.link(descriptor, as: FilePath(path), in: nil) }
            } catch {
                return .failure(TransferFailure(reason: .storage, detail: "cannot name the body \(path): \(error)"))
            }
            return .success(placed)
        }
        do {
            try Syscalls.rename(FilePath(body.path), in: nil, to: FilePath(path), in: nil)
        } catch {
            return .failure(TransferFailure(reason: .storage, detail: "cannot rename \(body.path) to \(path): \(error)"))
        }
        return .success(placed)
    }

    /// Gives a payload its own file with the same bytes as `source` (a cache entry, which stays):
    /// a hard link where the file system allows, a copy where it does not.
    ///
    /// When `source` has as many links as its file system allows (65,000 on ext4, reached by a
    /// big campaign), `reseed` may give it a fresh inode; the link is then tried once more.
    static func link(
        _ source: DownloadedFile, in directory: String, namedAfter url: AttachmentURL,
        reseed: (() -> Bool)? = nil
    ) -> Result<DownloadedFile, TransferFailure> {
        let path = finalPath(for: source, in: directory, namedAfter: url)
        var placed = source
        placed.path = path
        var error = hardLink(source.path, path)
        if error == .noSuchFileOrDirectory, restoreDirectory(of: path) { error = hardLink(source.path, path) }
        guard let failed = error else { return .success(placed) }
        if failed == .tooManyLinks, let reseed {
            // While another thread renames a fresh copy over the source, link(2) can answer ENOENT
            // for a moment: try again, a bounded number of times.
            for _ in 0..<8 where error == .tooManyLinks || error == .noSuchFileOrDirectory {
                if error == .tooManyLinks, !reseed() { break }
                error = hardLink(source.path, path)
                if error == nil { return .success(placed) }
            }
        }
        guard let error, needsCopy(error) else {
            return .failure(TransferFailure(reason: .storage, detail: "cannot link \(source.path) to \(path): \(error.map { "\($0)" } ?? "")"))
        }
        return copy(source.path, to: path).map { placed }
    }

    /// Whether a failed `link` calls for a copy: another file system, one without hard links,
    /// or a body at its link limit.
    static func needsCopy(_ error: Errno) -> Bool {
        [.improperLink, .notPermitted, .tooManyLinks, .notSupported, .notSupportedOnSocket].contains(error)
    }

    /// Copies `source` to `destination` through a temporary file in `destination`'s own directory
    /// (so on its file system, whichever the source's), so that `destination` appears whole or
    /// not at all.
    static func copy(_ source: String, to destination: String) -> Result<Void, TransferFailure> {
        let input: FileDescriptor
        do {
            input = try Syscalls.open(FilePath(source), flags: O_RDONLY | O_NOFOLLOW)
        } catch {
            return .failure(TemporaryFiles.failure(error, "cannot open \(source)"))
        }
        defer { try? input.close() }
        return copy(from: input, to: destination)
    }

    /// Copies the open file `input` (from its first byte) to `destination`, as `copy` does. The
    /// copy streams into a nameless file (`O_TMPFILE`) in `destination`'s directory, named only
    /// once whole, so that a crash leaves nothing there; a file system without `O_TMPFILE` gets a
    /// named temporary file, locked by its writer, renamed into place. A cache entry removed
    /// while its waiters held it open, or one on another file system than the output directory,
    /// is served this way.
    static func copy(from input: FileDescriptor, to destination: String) -> Result<Void, TransferFailure> {
        let parent = FilePath(destination).removingLastComponent().string
        let directory = parent.isEmpty ? "." : parent
        let output: FileDescriptor
        let temporary: String
        switch TemporaryFiles.create(in: directory, anonymous: true, permissions: 0o644) {
        case .success(let created): (output, temporary) = created
        case .failure(let failure): return .failure(TransferFailure(reason: failure.reason, detail: "cannot copy to \(destination): \(failure.detail)"))
        }
        let anonymous = TemporaryFiles.isAnonymous(temporary)
        let written = Result { () throws -> Void in
            try copyBytes(from: input, to: output)
            try name(output, anonymous ? nil : temporary, as: destination, in: directory)
        }
        try? output.close()
        if case .failure(let error) = written {
            if !anonymous { TemporaryFiles.remove(temporary) }
            return .failure(TemporaryFiles.failure((error as? Errno) ?? .ioError, "cannot copy to \(destination)"))
        }
        return .success(())
    }

    /// Writes the bytes of the open file `input`, from its position to its end, to `output`.
    static func copyBytes(from input: FileDescriptor, to output: FileDescriptor) throws {
        try input.forEachChunk(ofSize: 1 << 16) { piece in
            _ = try output.writeAll(piece)
            return true
        }
    }

    /// Gives the copy `output` the name `destination` (in `directory`): the named temporary file
    /// `temporary` renamed, or the nameless file linked (and, when `destination` exists, as in a
    /// reseed, linked under a temporary name renamed over it).
    private static func name(_ output: FileDescriptor, _ temporary: String?, as destination: String, in directory: String) throws(Errno) {
        if let temporary {
            try Syscalls.rename(FilePath(temporary), in: nil, to: FilePath(destination), in: nil)
            return
        }
        do {
            try Syscalls.link(output, as: FilePath(destination), in: nil)
        } catch where error == .fileExists {
            let named = TemporaryFiles.path(in: directory)
            try Syscalls.link(output, as: FilePath(named), in: nil)
            do {
                try Syscalls.rename(FilePath(named), in: nil, to: FilePath(destination), in: nil)
            } catch {
                TemporaryFiles.remove(named)
                throw error
            }
        }
    }

    /// Names the open file `descriptor` (a nameless body, or an entry held open) at `path`
    /// with a hard link, or copies it where a link is impossible (another file system, or every
    /// other name of the file gone).
    static func link(_ descriptor: FileDescriptor, at path: String) -> Result<Void, TransferFailure> {
        do {
            try retryingInRestoredDirectory(of: path) { () throws(Errno) in try Syscalls.link(descriptor, as: FilePath(path), in: nil) }
            return .success(())
        } catch where needsCopy(error) || error == .noSuchFileOrDirectory {
            return copy(from: descriptor, to: path)
        } catch {
            return .failure(TransferFailure(reason: .storage, detail: "cannot link to \(path): \(error)"))
        }
    }

    /// `work`, and once more if it failed with `ENOENT` for want of `directory`, which
    /// `restoreDirectory` made again. `directory` is worked out only then: every file placed
    /// comes through here, and a `FilePath`'s components cost a debug build a lock in Swift's
    /// runtime per character (engine threads of several fetchers in one process contended for
    /// it, so much that a test suite under ThreadSanitizer spent most of its time in `futex`).
    static func retryingInRestored<Value>(_ directory: @autoclosure () -> String, _ work: () throws(Errno) -> Value) throws(Errno) -> Value {
        do {
            return try work()
        } catch where error == .noSuchFileOrDirectory && restoreDirectory(directory()) {
            return try work()
        }
    }

    /// `retryingInRestored(_:_:)` for `work` that makes `path` in its directory.
    private static func retryingInRestoredDirectory(of path: String, _ work: () throws(Errno) -> Void) throws(Errno) {
        try retryingInRestored(FilePath(path).removingLastComponent().string, work)
    }

    static func finalPath(for body: DownloadedFile, in directory: String, namedAfter url: AttachmentURL) -> String {
        "\(directory)/\(url.fileStem)-\(FileNameTag.next()).\(body.media.fileExtension)"
    }

    /// Whether `name` is one `finalPath` makes (a stem of at most 48 letters, digits, `-` and
    /// `_`; a tag of 13 lower-case base-36 digits, one a letter at least, as all but about one
    /// tag in six million are; a media type's extension), or a body's temporary file: what
    /// `cache clear` and `prune` may remove from an output directory, where a file of any other
    /// name (a photo named after a timestamp, say) is somebody else's.
    static func isAttachmentName(_ name: String) -> Bool {
        if name.hasPrefix(TemporaryFiles.prefix), name.hasSuffix(TemporaryFiles.suffix) { return true }
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")),
            AttachmentTypes.fileExtensions.contains(String(name[name.index(after: dot)...])),
            let dash = name[..<dot].utf8.lastIndex(of: UInt8(ascii: "-"))
        else { return false }
        let stem = name.utf8[..<dash], tag = name.utf8[name.index(after: dash)..<dot]
        let isTagDigit = { (byte: UInt8) in (48...57).contains(byte) || (97...122).contains(byte) }
        let isStemByte = { (byte: UInt8) in
            isTagDigit(byte) || (65...90).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return tag.count == FileNameTag.length && tag.allSatisfy(isTagDigit) && tag.contains(where: { $0 >= 97 })
            && stem.count <= 48 && stem.allSatisfy(isStemByte)
    }

    /// A safe, short file name stem from a URL path component ("attachment" when nothing is left).
    static func stem(of component: String) -> String {
        let withoutSuffix = component.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let safe = withoutSuffix.utf8.lazy.filter { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
        let stem = String(decoding: Array(safe.prefix(48)), as: UTF8.self)
        return stem.isEmpty ? "attachment" : stem
    }
}

/// link(2) of `source` (a final symbolic link linked as itself, never followed) to
/// `destination`; its error, or `nil`.
private func hardLink(_ source: String, _ destination: String) -> Errno? {
    do {
        try Syscalls.link(FilePath(source), in: nil, to: FilePath(destination), in: nil)
        return nil
    } catch {
        return error
    }
}
