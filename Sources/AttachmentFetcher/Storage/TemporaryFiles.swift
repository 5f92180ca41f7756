import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names, creation and removal of the temporary files bodies stream into.
///
/// A named temporary file is locked (`flock`) by the process writing it for as long as that
/// process lives: a later start-up, in this PID namespace or another, tells a crash's leftovers
/// from a living writer's file by trying that lock, never by a process id. A body the cache
/// keeps streams into a nameless file (`O_TMPFILE`) instead, so that a crash leaves nothing at all.
enum TemporaryFiles {
    /// Temporary files start with this prefix and end with `suffix`, so that a crash leaves
    /// files that are easy to recognise and clean up.
    static let prefix = ".attachment-"
    static let suffix = ".part"
    /// Where Foundation's atomic writes put their temporary files: reclaimed as well.
    static let foundationPrefix = ".dat.nosync"
    /// A nameless file's path: its descriptor's, valid in this process while it is open.
    static let anonymousPrefix = "/proc/self/fd/"
    /// How old an unlocked temporary file must be before it is taken for a crash's leftover:
    /// a body between its writer's `close` and its `rename` is unlocked for an instant.
    static let orphanAge: Int = 60

    /// A fresh temporary path in `directory`, unique across processes and transfers.
    static func path(in directory: String) -> String { "\(directory)/\(name())" }

    /// A fresh temporary file name, unique across processes and transfers.
    static func name() -> String { "\(prefix)\(FileNameTag.next())\(suffix)" }

    /// Creates a fresh temporary file in `directory` for a body to stream into: its descriptor,
    /// open for reading and writing (a body nothing vouched for the end of is read back), and its
    /// path. With `anonymous`, the file has no name (`O_TMPFILE`; the
    /// path is the descriptor's, `/proc/self/fd/N`) where the file system allows, made with
    /// `permissions` (less the umask), and its receiver names or closes it. With `handle`, an
    /// open descriptor of `directory`, the file is made through it (`openat`), whatever `directory`
    /// names by then (a symbolic link put in its place, say): the path only names it. Running
    /// out of descriptors is `resources`, any other error `storage`. An output directory removed
    /// while the fetcher lives is made again (`AttachmentFiles.restoreDirectory`, which makes no
    /// other directory again: not the cache's `tmp/`, made through its descriptor).
    static func create(
        in directory: String, relativeTo handle: FileDescriptor? = nil, anonymous: Bool = false, permissions: mode_t = 0o600
    ) -> Result<(file: FileDescriptor, path: String), TransferFailure> {
        if anonymous {
            do {
                let file = try AttachmentFiles.retryingInRestored(directory) { () throws(Errno) in
                    try openAnonymous(in: directory, relativeTo: handle, permissions: permissions)
                }
                return .success((file, anonymousPath(of: file)))
            } catch where Syscalls.lacksAnonymousFiles(error) {
                // Named, below.
            } catch {
                return .failure(failure(error, "cannot create a file in \(directory)"))
            }
        }
        let temporaryName = name()
        let temporaryPath = directory + "/" + temporaryName
        do {
            let file = try AttachmentFiles.retryingInRestored(directory) { () throws(Errno) in
                try Syscalls.open(
                    FilePath(handle == nil ? temporaryPath : temporaryName), in: handle, flags: O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW,
                    permissions: 0o644)
            }
            // Held until the file is closed: proof that its writer lives.
            _ = try? Syscalls.tryFileLock(file, exclusive: true)
            return .success((file, temporaryPath))
        } catch {
            return .failure(failure(error, "cannot create \(temporaryPath)"))
        }
    }

    /// A nameless file (`O_TMPFILE`) in `directory` (through `handle`, its open descriptor, when
    /// given), open for reading and writing.
    static func openAnonymous(in directory: String, relativeTo handle: FileDescriptor? = nil, permissions: mode_t) throws(Errno) -> FileDescriptor {
        try Syscalls.open(FilePath(handle == nil ? directory : "."), in: handle, flags: Syscalls.temporaryFileFlag | O_RDWR, permissions: permissions)
    }

    /// `resources` when the process or the system is out of descriptors, else `storage`.
    static func failure(_ error: Errno, _ what: String) -> TransferFailure {
        TransferFailure(
            reason: FileDescriptorBudget.isExhaustion(error.rawValue) ? .resources : .storage, detail: "\(what): \(error)")
    }

    /// Whether `name` is a temporary file this library (or Foundation, for it) makes.
    static func isTemporary(_ name: String) -> Bool {
        (name.hasPrefix(prefix) && name.hasSuffix(suffix)) || name.hasPrefix(foundationPrefix)
    }

    /// Removes the temporary files in `directory` that a crash or a kill left: those no living
    /// process holds locked, older than `orphanAge` seconds. Returns how many went.
    @discardableResult
    static func removeOrphans(in directory: String) -> Int {
        guard let handle = try? Syscalls.open(FilePath(directory), flags: O_RDONLY | O_DIRECTORY) else { return 0 }
        defer { try? handle.close() }
        return removeOrphans(in: handle)
    }

    /// The same, in an open directory.
    @discardableResult
    static func removeOrphans(in directory: FileDescriptor, minimumAge: Int = orphanAge) -> Int {
        var removed = 0
        let now = time(nil)
        for name in (try? Syscalls.names(in: directory)) ?? [] where isTemporary(name) {
            guard let file = try? Syscalls.open(FilePath(name), in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else {
                continue
            }
            defer { try? file.close() }
            guard let status = try? Syscalls.status(of: file), status.type == .regular,
                now - status.st_mtim.tv_sec >= minimumAge,
                (try? Syscalls.tryFileLock(file, exclusive: true)) == true
            else { continue }
            if (try? Syscalls.unlink(FilePath(name), in: directory)) != nil { removed += 1 }
        }
        return removed
    }

    /// Whether the temporary file `name` in `directory` may be being written: changed within
    /// `orphanAge` seconds (a writer that has just made it may not hold its lock yet, and trying
    /// the lock then would take it from the writer), or locked by its writer, a living process
    /// (see `create`).
    static func isHeld(_ name: String, in directory: FileDescriptor) -> Bool {
        guard let file = try? Syscalls.open(FilePath(name), in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else { return false }
        defer { try? file.close() }
        guard let status = try? Syscalls.status(of: file) else { return false }
        if time(nil) - status.st_mtim.tv_sec < orphanAge { return true }
        return (try? Syscalls.tryFileLock(file, exclusive: true)) == false
    }

    /// The path of the nameless file open as `file`: its descriptor's, valid in this process.
    static func anonymousPath(of file: FileDescriptor) -> String { anonymousPrefix + String(file.rawValue) }

    /// Whether `path` is a nameless file's (`/proc/self/fd/N`), not a name in a directory.
    static func isAnonymous(_ path: String) -> Bool { path.hasPrefix(anonymousPrefix) }

    /// Removes `path`, ignoring a file that is already gone (and a nameless file, which goes
    /// with its last descriptor). A file `create` made in `directory` through `handle` is
    /// removed through it too.
    static func remove(_ path: String, madeIn directory: String? = nil, relativeTo handle: FileDescriptor? = nil) {
        guard !isAnonymous(path) else { return }
        let file = FilePath(path)
        if let handle, let directory, file.removingLastComponent().string == directory, let name = file.lastComponent {
            try? Syscalls.unlink(FilePath(name.string), in: handle)
        } else {
            try? Syscalls.unlink(file)
        }
    }
}
