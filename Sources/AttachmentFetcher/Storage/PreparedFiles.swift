import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A few nameless temporary files (`O_TMPFILE`) made ahead of need in one directory, so that the
/// engine's thread takes a ready descriptor instead of creating the file itself.
///
/// Creating a file is the costliest step of a small transfer on a disk: ext4 searches its bitmaps
/// for a free inode, skipping those freed in the last seconds. Made on the engine's thread, that
/// search holds up every transfer, and the engine's thread becomes the run's critical path. Made
/// here, on the process's thread for work ahead of need (`BlockingIO.startAhead`), it runs beside
/// the engine on another core. (Measured in docs/performance.md, "On disk".)
///
/// Neither `take()` nor `file()` waits for a refill: with no file ready, `take()` answers `nil`
/// and `file()` makes one on the spot, as the engine did before. A take that leaves half of
/// `capacity` or fewer ready asks for a refill; one refill runs at a time and stops at `capacity`
/// ready, after `capacity` made, or at the first error (out of descriptors, a full disk), which
/// the next `file()` then meets and reports; on a file system without `O_TMPFILE` no file is made
/// ahead again (`file()` then makes named ones). The files have no name, so a crash leaves
/// nothing; `close()` closes those still held.
///
/// Given the directory open (the cache's `tmp/`), every file is made through that descriptor,
/// named ones too: a directory whose path is later swapped for a symbolic link still gets them,
/// and the link's target none.
final class PreparedFiles: Sendable {
    /// The directory the files are made in (when `handle` is given, its name for messages).
    let directory: String
    /// The directory, open, owned by these files (closed with them), if given.
    private let handle: FileDescriptor?
    /// How many files are kept ready at most.
    let capacity: Int
    /// The files' mode (less the umask).
    let permissions: mode_t
    /// How many ready files were taken.
    let taken = Atomic<Int>(0)

    private struct State {
        var ready: [FileDescriptor] = []
        var refilling = false
        var closed = false
    }
    private let state = Locked(State())

    /// Called on the refill's thread after each file it makes ready (for tests: a consumer that
    /// takes each file as soon as it is made).
    private let afterEachFile: (@Sendable () -> Void)?

    /// Files made in `directory`, through `handle` (its open descriptor, which these files then
    /// own) when given.
    init(
        directory: String, handle: FileDescriptor? = nil, capacity: Int, permissions: mode_t = 0o600,
        afterEachFile: (@Sendable () -> Void)? = nil
    ) {
        self.directory = directory
        self.handle = handle
        self.capacity = capacity
        self.permissions = permissions
        self.afterEachFile = afterEachFile
    }

    deinit {
        close()
        try? handle?.close()
    }

    /// A ready file, open for reading and writing, or `nil`; asks for a refill when half or fewer
    /// are left.
    func take() -> FileDescriptor? {
        guard capacity > 0 else { return nil }
        let (file, refill) = state.withLock { state -> (FileDescriptor?, Bool) in
            guard !state.closed else { return (nil, false) }
            let file = state.ready.popLast()
            // Refilled from half empty: one trip to the pool per `capacity / 2` files.
            let refill = !state.refilling && state.ready.count <= capacity / 2
            if refill { state.refilling = true }
            return (file, refill)
        }
        if refill { BlockingIO.startAhead { [weak self] in self?.refill() } }
        if file != nil { taken.add(1, ordering: .relaxed) }
        return file
    }

    /// A file for a body: a ready one, or one made now (nameless where the file system allows,
    /// see `TemporaryFiles.create`). Its path, for a nameless file, is its descriptor's.
    func file() -> Result<(file: FileDescriptor, path: String), TransferFailure> {
        if let file = take() { return .success((file, TemporaryFiles.anonymousPath(of: file))) }
        return TemporaryFiles.create(in: directory, relativeTo: handle, anonymous: true, permissions: permissions)
    }

    /// Removes a body's file `file()` made named (where the file system has no `O_TMPFILE`),
    /// as it was made: through the directory's descriptor when there is one.
    func remove(_ path: String) { TemporaryFiles.remove(path, madeIn: directory, relativeTo: handle) }

    /// How many files are ready now.
    var count: Int { state.withLock { $0.ready.count } }

    /// Whether a refill is asked for or running.
    var isRefilling: Bool { state.withLock { $0.refilling } }

    /// Closes the files still held; later takes answer `nil`.
    func close() {
        let files = state.withLock { state -> [FileDescriptor] in
            state.closed = true
            defer { state.ready = [] }
            return state.ready
        }
        for file in files { try? file.close() }
    }

    /// Makes files until `capacity` are ready, `capacity` are made, or one cannot be made. It
    /// stops being the refill under the same lock as it finds there is nothing more to do, so
    /// that a take meanwhile either sees it running or starts the next.
    ///
    /// Bounded by the files it makes, not only by those ready: an engine that takes each file as
    /// soon as it is made would otherwise keep the thread for as long as it is busy, and every
    /// other fetcher's refills (on the blocking pool, where they ran before, every cache commit)
    /// waited for it to fall idle.
    private func refill() {
        var made = 0
        while state.withLock({ state in
            let more = !state.closed && state.ready.count < capacity && made < capacity
            if !more { state.refilling = false }
            return more
        }) {
            made += 1
            let file: FileDescriptor
            do {
                file = try TemporaryFiles.openAnonymous(in: directory, relativeTo: handle, permissions: permissions)
            } catch {
                state.withLock { state in
                    state.refilling = false
                    // A file system without nameless files never gets them: no more refills.
                    if Syscalls.lacksAnonymousFiles(error) { state.closed = true }
                }
                return
            }
            let kept = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.ready.append(file)
                return true
            }
            if !kept { try? file.close() }
            afterEachFile?()
        }
    }
}
