import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place the command calls the operating system, as the library's `Syscalls` is for the
/// library: its input files and standard streams, the checks of paths named on the command line,
/// and the process's signal disposition and exit.
///
/// Descriptors are swift-system's `FileDescriptor`, whose `read`, `write`, `seek` and `close`
/// already retry `EINTR` and throw `Errno`; failures are `Errno`, whose `description` is the
/// system's own words ("No such file or directory").
enum CommandSyscalls {
    // MARK: Files

    /// Opens `path` for reading; `-` is standard input, which is not opened again (and must not
    /// be closed).
    static func openForReading(_ path: String) throws(Errno) -> FileDescriptor {
        if path == "-" { return .standardInput }
        return try typed { try FileDescriptor.open(FilePath(path), .readOnly) }
    }

    /// Closes `descriptor` unless it is standard input.
    static func closeInput(_ descriptor: FileDescriptor) {
        if descriptor != .standardInput { try? descriptor.close() }
    }

    /// `read(2)` into `buffer`: the number of bytes read, 0 at the end of the input.
    static func read(_ descriptor: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try typed { try descriptor.read(into: buffer) }
    }

    /// At most `limit` bytes of the regular file at `path`, or `nil` when there is none there: a
    /// symbolic link is not followed, and a FIFO, device or socket is not read (opened without
    /// blocking, then checked with `fstat(2)`), so that whoever can write in the file's directory
    /// cannot have another file read in its place, nor hold the process on it.
    static func readRegularFile(_ path: String, upTo limit: Int) -> [UInt8]? {
        guard let descriptor = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.noFollow, .nonBlocking, .closeOnExec])
        else { return nil }
        return try? descriptor.closeAfter { () throws -> [UInt8]? in
            guard let status = status(of: descriptor), status.st_mode & S_IFMT == S_IFREG else { return nil }
            // Sized by the file (one byte more, to see it grow), never past `limit`.
            let size = min(limit, Int(clamping: status.st_size) + 1)
            var bytes = [UInt8](repeating: 0, count: size)
            var count = 0
            while count < size {
                let read = try bytes[count...].withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if read == 0 { break }
                count += read
            }
            return Array(bytes[..<count])
        }
    }

    /// Writes `bytes` to `path`, created (0644, less the umask) or truncated: every write and
    /// the close checked, so that a failure is the system's own `Errno` ("Permission denied",
    /// "No space left on device"), not Foundation's "could not be completed".
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(Errno) {
        try typed {
            let descriptor = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            _ = try descriptor.closeAfter { try descriptor.writeAll(bytes) }
        }
    }

    /// `write(2)` of `bytes`: the number written, which may be fewer.
    static func write(_ descriptor: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try typed { try descriptor.write(bytes) }
    }

    /// The offset of `descriptor`, or `nil` when it cannot seek.
    static func offset(of descriptor: FileDescriptor) -> Int64? {
        try? descriptor.seek(offset: 0, from: .current)
    }

    /// Moves `descriptor` to `offset` from its start.
    static func seek(_ descriptor: FileDescriptor, to offset: Int64) {
        _ = try? descriptor.seek(offset: offset, from: .start)
    }

    /// Whether `descriptor` is a regular file (`fstat(2)`).
    static func isRegularFile(_ descriptor: FileDescriptor) -> Bool { fileType(of: descriptor) == S_IFREG }

    /// Whether `descriptor` is a directory (`fstat(2)`): a shell's `< dir` opens one.
    static func isDirectory(_ descriptor: FileDescriptor) -> Bool { fileType(of: descriptor) == S_IFDIR }

    /// The `S_IFMT` bits of `descriptor`'s mode, or `nil` when `fstat(2)` fails.
    private static func fileType(of descriptor: FileDescriptor) -> mode_t? {
        status(of: descriptor).map { $0.st_mode & S_IFMT }
    }

    /// `fstat(2)` of `descriptor`, or `nil` when it fails.
    private static func status(of descriptor: FileDescriptor) -> stat? {
        var status = stat()
        return fstat(descriptor.rawValue, &status) == 0 ? status : nil
    }

    /// The device and inode of the file at `path` (`stat(2)`, following links), or `nil` if there
    /// is none: two paths name the same file when these are equal.
    static func identity(of path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    /// Whether `path` names a symbolic link (`lstat(2)`).
    static func isSymbolicLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// `access(2)`: throws unless this process may `mode` (`R_OK`, `W_OK | X_OK`…) `path`.
    static func checkAccess(_ path: String, _ mode: Int32) throws(Errno) {
        guard access(path, mode) == 0 else { throw Errno(rawValue: errno) }
    }

    // MARK: Terminals, signals, the process

    /// Whether `descriptor` is a terminal.
    static func isTerminal(_ descriptor: FileDescriptor) -> Bool { isatty(descriptor.rawValue) == 1 }

    /// A write to a reader that went away becomes `EPIPE`, not a death by `SIGPIPE`.
    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    /// Whether `descriptor` was not open (`EBADF`).
    static func isClosed(_ descriptor: FileDescriptor) -> Bool {
        fcntl(descriptor.rawValue, F_GETFD) == -1 && errno == EBADF
    }

    /// Opens `/dev/null` as `descriptor`, so that no file opened later takes its number.
    static func attachNull(to descriptor: FileDescriptor) {
        guard let null = try? FileDescriptor.open("/dev/null", .writeOnly) else { return }
        if null != descriptor {
            _ = try? null.duplicate(as: descriptor)
            try? null.close()
        }
    }

    /// Flushes what C's stdio holds; the error of a flush that failed (`EIO` when stdio gave none).
    static func flushStandardIO() -> Errno? {
        fflush(nil) == 0 ? nil : Errno(rawValue: errno == 0 ? EIO : errno)
    }

    /// Ends the process with `status` (`exit(3)`: stdio flushed, `atexit` handlers run).
    static func exit(_ status: Int32) -> Never { processExit(status) }

    /// `body`'s `Errno`, as a typed throw (swift-system's methods throw it untyped).
    private static func typed<Result>(_ body: () throws -> Result) throws(Errno) -> Result {
        do {
            return try body()
        } catch let error as Errno {
            throw error
        } catch {
            throw Errno.ioError
        }
    }
}

/// `exit(3)`, under a name `CommandSyscalls.exit` does not shadow.
private func processExit(_ status: Int32) -> Never { exit(status) }
