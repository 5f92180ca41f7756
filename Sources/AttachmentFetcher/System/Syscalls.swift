import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place the library calls the operating system for files (and for the few calls on
/// libcurl's sockets that `EngineHoldBreaker` makes).
///
/// Every call returns its result or throws its `Errno`; `EINTR` is retried here, once for all
/// (`retrying`). Paths are `FilePath`s; names inside a directory are opened relative to that
/// directory's descriptor. Everything else in the library calls these wrappers, never the C
/// functions. (`FileDescriptor`'s own `read`, `write` and `close` from swift-system are used
/// directly: they already throw `Errno` and retry `EINTR`.)
enum Syscalls {
    // MARK: Linux constants Swift does not import (their macros are composite or `__USE_GNU`)

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`): a file with no name until `linkat`.
    static let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY
    /// `AT_EMPTY_PATH`: `linkat` of the descriptor itself.
    static let emptyPathFlag: Int32 = 0x1000
    /// `F_OFD_SETLK`: byte-range locks owned by an open file description, not a process, so that
    /// two descriptions in one process exclude each other like two processes.
    private static let setOFDLock: Int32 = 37
    /// `F_OFD_GETLK`: which lock, if any, another open file description holds on a range.
    private static let getOFDLock: Int32 = 36

    // MARK: EINTR, once

    /// Calls `call` until it does not fail with `EINTR`; a result of -1 throws `errno`.
    @inline(__always)
    static func retrying<Result: FixedWidthInteger>(_ call: () -> Result) throws(Errno) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let error = Errno(rawValue: errno)
            if error != .interrupted { throw error }
        }
    }

    /// `retrying` for a call that needs a C path: `withPlatformString` does not pass typed
    /// errors through, so the error comes out as a value and is thrown here.
    @inline(__always)
    private static func retrying(
        _ path: FilePath, _ call: (UnsafePointer<CChar>) -> Int32
    ) throws(Errno) -> Int32 {
        let (result, error) = path.withPlatformString { path in
            while true {
                let result = call(path)
                if result != -1 { return (result, Errno(rawValue: 0)) }
                let error = Errno(rawValue: errno)
                if error != .interrupted { return (result, error) }
            }
        }
        if result == -1 { throw error }
        return result
    }

    /// The same for a call with two paths.
    @inline(__always)
    private static func retrying(
        _ first: FilePath, _ second: FilePath, _ call: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    ) throws(Errno) -> Int32 {
        try first.withPlatformString { first in
            Result { () throws(Errno) -> Int32 in try retrying(second) { call(first, $0) } }
        }.get()
    }

    // MARK: Opening

    /// `openat(2)` of `name` in `directory` (the working directory when `nil`, or any absolute
    /// path), always with `O_CLOEXEC`. A descriptor at or above `FileDescriptorBudget.ceiling()`
    /// is closed at once and the call fails with `EMFILE`, as if the table were full: the slots
    /// from there up are left for what cannot fail safely when it is.
    static func open(
        _ name: FilePath, in directory: FileDescriptor? = nil, flags: Int32, permissions: mode_t = 0o600
    ) throws(Errno) -> FileDescriptor {
        let descriptor: Int32
        do {
            descriptor = try retrying(name) { openat(directory?.rawValue ?? AT_FDCWD, $0, flags | O_CLOEXEC, permissions) }
        } catch {
            // A full table under a ceiling read before: the limit was lowered since.
            if error == .tooManyOpenFiles { FileDescriptorBudget.readCeiling() }
            throw error
        }
        guard !FileDescriptorBudget.reachesCeiling(descriptor) else {
            _ = close(descriptor)
            throw .tooManyOpenFiles
        }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Whether `error`, from an `open` with `temporaryFileFlag`, says the file system has no
    /// `O_TMPFILE`.
    static func lacksAnonymousFiles(_ error: Errno) -> Bool {
        error == .notSupported || error == .isDirectory || error == .invalidArgument
    }

    // MARK: Status

    /// `fstat(2)`.
    static func status(of descriptor: FileDescriptor) throws(Errno) -> Stat { try descriptor.stat() }

    /// `fstatat(2)` of `name` in `directory`, not following a final symbolic link.
    static func status(of name: FilePath, in directory: FileDescriptor) throws(Errno) -> Stat {
        try name.stat(relativeTo: directory, flags: .symlinkNoFollow)
    }

    /// `stat(2)` of `path`, or `lstat(2)` when not `followingLink`.
    static func status(of path: FilePath, followingLink: Bool = true) throws(Errno) -> Stat {
        try path.stat(followTargetSymlink: followingLink)
    }

    /// `access(2)`: throws unless this process may `mode` (`W_OK | X_OK`…) `path`.
    static func checkAccess(_ path: FilePath, _ mode: Int32) throws(Errno) {
        _ = try retrying(path) { access($0, mode) }
    }

    // MARK: Names

    /// `linkat(2)`: `from` in `fromDirectory` gets the second name `to` in `toDirectory`. With
    /// no flags, a final symbolic link is linked itself, not followed.
    static func link(
        _ from: FilePath, in fromDirectory: FileDescriptor?, to: FilePath, in toDirectory: FileDescriptor?, flags: Int32 = 0
    ) throws(Errno) {
        _ = try retrying(from, to) {
            linkat(fromDirectory?.rawValue ?? AT_FDCWD, $0, toDirectory?.rawValue ?? AT_FDCWD, $1, flags)
        }
    }

    /// Names the open file `descriptor` as `name` in `directory`: `linkat` with `AT_EMPTY_PATH`,
    /// or through `/proc/self/fd/N` where that needs a privilege this process lacks. This is how
    /// an `O_TMPFILE` file gets its name, and how an entry an open descriptor holds gets another.
    /// A file whose every name is gone (and that was not made anonymous) cannot be named again:
    /// `ENOENT`.
    static func link(_ descriptor: FileDescriptor, as name: FilePath, in directory: FileDescriptor?) throws(Errno) {
        do {
            try link("", in: descriptor, to: name, in: directory, flags: emptyPathFlag)
        } catch where error == .noSuchFileOrDirectory || error == .notPermitted {
            try link(FilePath("/proc/self/fd/\(descriptor.rawValue)"), in: nil, to: name, in: directory, flags: AT_SYMLINK_FOLLOW)
        }
    }

    /// `renameat(2)`.
    static func rename(_ from: FilePath, in fromDirectory: FileDescriptor?, to: FilePath, in toDirectory: FileDescriptor?) throws(Errno) {
        _ = try retrying(from, to) { renameat(fromDirectory?.rawValue ?? AT_FDCWD, $0, toDirectory?.rawValue ?? AT_FDCWD, $1) }
    }

    /// `unlinkat(2)` of a file (not a directory).
    static func unlink(_ name: FilePath, in directory: FileDescriptor? = nil) throws(Errno) {
        _ = try retrying(name) { unlinkat(directory?.rawValue ?? AT_FDCWD, $0, 0) }
    }

    /// `unlinkat(2)` of an empty directory.
    static func removeDirectory(_ name: FilePath, in directory: FileDescriptor? = nil) throws(Errno) {
        _ = try retrying(name) { unlinkat(directory?.rawValue ?? AT_FDCWD, $0, AT_REMOVEDIR) }
    }

    /// `mkdirat(2)`; an existing directory is no error.
    static func makeDirectory(_ name: FilePath, in directory: FileDescriptor? = nil, permissions: mode_t = 0o755) throws(Errno) {
        do {
            _ = try retrying(name) { mkdirat(directory?.rawValue ?? AT_FDCWD, $0, permissions) }
        } catch where error == .fileExists {}
    }

    /// `mkdir -p`: makes `path` and each missing directory above it (mode 0755 less the umask).
    /// An existing directory is no error; an existing file of another type throws `ENOTDIR`, so
    /// the caller's message says what is wrong with the path (`Not a directory`, `Permission
    /// denied`, `Read-only file system`…).
    static func makeDirectories(_ path: FilePath) throws(Errno) {
        var prefix = FilePath(root: path.root)
        for component in path.components {
            prefix.append(component)
            try makeDirectory(prefix)
        }
        guard try status(of: path).type == .directory else { throw .notDirectory }
    }

    /// The names in the directory `directory` (without `.` and `..`). The descriptor stays open
    /// and usable.
    static func names(in directory: FileDescriptor) throws(Errno) -> [String] {
        let copy = try retrying { dup(directory.rawValue) }
        guard let stream = fdopendir(copy) else {
            let error = Errno(rawValue: errno)
            _ = close(copy)
            throw error
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// `fstatvfs(2)`: the bytes this process may still write on the file system of `descriptor`:
    /// the free blocks, those reserved for the superuser included when it is root (ext4 keeps
    /// 5 % for it), the blocks available to anyone otherwise.
    static func availableBytes(onFileSystemOf descriptor: FileDescriptor) throws(Errno) -> Int {
        var status = statvfs()
        _ = try retrying { fstatvfs(descriptor.rawValue, &status) }
        let blocks = geteuid() == 0 ? UInt64(status.f_bfree) : UInt64(status.f_bavail)
        return Int(clamping: blocks.multipliedReportingOverflow(by: UInt64(status.f_frsize)).partialValue)
    }

    /// `realpath(3)`: `path` with every symbolic link, `.` and `..` resolved; `nil` when some
    /// part of it does not exist or cannot be searched.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The process's file mode creation mask, from `/proc/self/status` (`umask(2)` can only read
    /// it by changing it, under the feet of every thread making files); 0o022 where that file
    /// does not say (Linux before 4.7).
    static let fileCreationMask: mode_t = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return 0o022 }
        return mask & 0o777
    }()

    // MARK: Attributes

    /// `fchmod(2)`.
    static func setPermissions(of descriptor: FileDescriptor, _ mode: mode_t) throws(Errno) {
        _ = try retrying { fchmod(descriptor.rawValue, mode) }
    }

    /// `fsetxattr(2)`: sets the extended attribute `name` of the open file.
    static func setAttribute(_ name: String, of descriptor: FileDescriptor, to value: [UInt8]) throws(Errno) {
        guard let call = ExtendedAttributes.set else { throw .notSupported }
        _ = try value.withUnsafeBytes { bytes in
            Result { () throws(Errno) in try retrying { call(descriptor.rawValue, name, bytes.baseAddress, bytes.count, 0) } }
        }.get()
    }

    /// `fgetxattr(2)`: the extended attribute `name` of the open file, at most `limit` bytes;
    /// `nil` when the file has none.
    static func attribute(_ name: String, of descriptor: FileDescriptor, limit: Int = 4096) throws(Errno) -> [UInt8]? {
        guard let call = ExtendedAttributes.get else { throw .notSupported }
        var value = [UInt8](repeating: 0, count: limit)
        do {
            let count = try value.withUnsafeMutableBytes { bytes in
                Result { () throws(Errno) in try retrying { call(descriptor.rawValue, name, bytes.baseAddress, bytes.count) } }
            }.get()
            return Array(value.prefix(count))
        } catch where error == .noData {
            return nil
        }
    }

    // MARK: Locks

    /// A non-blocking byte-range lock (`F_OFD_SETLK`) on `length` bytes (one by default) from
    /// `offset` of `descriptor`: `true` when taken, `false` when another open file description
    /// holds one there. Released by `unlock`, or when the description is closed (so when its
    /// process ends, however it ends). A lock this description already holds there changes type
    /// in place, never let go between.
    static func tryLock(_ descriptor: FileDescriptor, at offset: Int64, length: Int64 = 1, exclusive: Bool = true) throws(Errno) -> Bool {
        var lock = range(at: offset, length: length, type: exclusive ? F_WRLCK : F_RDLCK)
        do {
            _ = try retrying { fcntl(descriptor.rawValue, setOFDLock, &lock) }
            return true
        } catch where error == .resourceTemporarilyUnavailable || error == .permissionDenied {
            return false
        }
    }

    /// Releases the byte-range lock of `length` bytes at `offset`.
    static func unlock(_ descriptor: FileDescriptor, at offset: Int64, length: Int64 = 1) {
        var lock = range(at: offset, length: length, type: F_UNLCK)
        _ = try? retrying { fcntl(descriptor.rawValue, setOFDLock, &lock) }
    }

    /// The lock another open file description holds over the byte at `offset` of `descriptor`
    /// (`F_OFD_GETLK`): its type (`F_RDLCK` or `F_WRLCK`, or `F_UNLCK` when there is none), first
    /// byte and length. This description's own locks are not reported.
    static func lockHeld(_ descriptor: FileDescriptor, at offset: Int64) throws(Errno) -> (type: Int32, start: Int64, length: Int64) {
        var lock = range(at: offset, length: 1, type: F_WRLCK)
        _ = try retrying { fcntl(descriptor.rawValue, getOFDLock, &lock) }
        return (Int32(lock.l_type), Int64(lock.l_start), Int64(lock.l_len))
    }

    /// The range of `length` bytes at `offset`, for a lock of `type` (`F_WRLCK`, `F_RDLCK`, `F_UNLCK`).
    private static func range(at offset: Int64, length: Int64, type: Int32) -> Glibc.flock {
        var lock = Glibc.flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(offset)
        lock.l_len = off_t(length)
        return lock
    }

    /// `flock(2)` without waiting: `true` when taken, `false` when held elsewhere.
    static func tryFileLock(_ descriptor: FileDescriptor, exclusive: Bool) throws(Errno) -> Bool {
        do {
            _ = try retrying { fileLock(descriptor.rawValue, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) }
            return true
        } catch where error == .wouldBlock {
            return false
        }
    }

    // MARK: libcurl's sockets (see `CurlSockets` and `EngineHoldBreaker`)

    /// `close(2)` of a socket libcurl is done with: whether it closed. Not retried on `EINTR`:
    /// on Linux the descriptor is gone whatever `close` returns.
    static func closeSocket(_ socket: Int32) -> Bool {
        close(socket) == 0
    }

    /// `shutdown(2)` of both directions of a connected socket: whoever reads it gets its end at
    /// once, and the peer a FIN. The descriptor stays open, its owner's to close.
    @discardableResult
    static func shutDownSocket(_ socket: Int32) -> Bool {
        shutdown(socket, Int32(SHUT_RDWR)) == 0
    }

    /// The bytes read from a TCP socket so far: those it received (`TCP_INFO`'s
    /// `tcpi_bytes_received`, Linux 4.1 and later) less those still waiting to be read
    /// (`SIOCINQ`); `nil` for a socket that is not TCP, or a kernel that does not say.
    static func bytesRead(fromSocket socket: Int32) -> UInt64? {
        // Glibc's `struct tcp_info` ends before the field; the kernel's only ever grows.
        var info = [UInt8](repeating: 0, count: tcpInfoBytesReceivedOffset + 8)
        var length = socklen_t(info.count)
        guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0, Int(length) >= info.count else {
            return nil
        }
        var waiting: Int32 = 0
        guard withUnsafeMutablePointer(to: &waiting, { ioctl(socket, UInt(FIONREAD), $0) }) == 0, waiting >= 0 else {
            return nil
        }
        let received = info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: tcpInfoBytesReceivedOffset, as: UInt64.self) }
        return received &- UInt64(waiting)
    }

    /// Where `tcpi_bytes_received` lies in the kernel's `struct tcp_info` (linux/tcp.h).
    private static let tcpInfoBytesReceivedOffset = 128

    /// The local and remote ports of a connected IPv4 or IPv6 socket (`getsockname`,
    /// `getpeername`); `nil` for another kind, or an unconnected one.
    static func ports(ofSocket socket: Int32) -> (local: Int, peer: Int)? {
        func port(_ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int? {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let result = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(socket, $0, &length) }
            }
            let family = Int32(address.ss_family)
            guard result == 0, family == AF_INET || family == AF_INET6 else { return nil }
            // `sin_port` and `sin6_port` alike: the two bytes after the family, in network order.
            return withUnsafeBytes(of: address) { Int($0[2]) << 8 | Int($0[3]) }
        }
        guard let local = port({ getsockname($0, $1, $2) }), let peer = port({ getpeername($0, $1, $2) }) else { return nil }
        return (local, peer)
    }

    // MARK: Limits

    /// The soft and hard limits on open files (`getrlimit(RLIMIT_NOFILE)`); `nil` for an
    /// unlimited one.
    static func openFileLimits() throws(Errno) -> (soft: Int?, hard: Int?) {
        var limit = rlimit()
        _ = try retrying { getrlimit(fileLimitResource, &limit) }
        func value(_ raw: rlim_t) -> Int? { raw == unlimited ? nil : Int(clamping: raw) }
        return (value(limit.rlim_cur), value(limit.rlim_max))
    }

    /// Raises the soft limit on open files to the hard one (`setrlimit`), at most to `ceiling`.
    static func raiseOpenFileLimit(ceiling: Int? = nil) throws(Errno) {
        var limit = rlimit()
        _ = try retrying { getrlimit(fileLimitResource, &limit) }
        var target = limit.rlim_max
        if let ceiling, target == unlimited || target > rlim_t(ceiling) { target = rlim_t(ceiling) }
        guard limit.rlim_cur != unlimited, limit.rlim_cur < target else { return }
        limit.rlim_cur = target
        _ = try retrying { setrlimit(fileLimitResource, &limit) }
    }

    // MARK: Locale

    /// Gives the calling thread a UTF-8 character type (`newlocale(3)` and `uselocale(3)`: this
    /// thread's alone, the process's locale untouched). libcurl turns a redirect's non-ASCII
    /// host into its IDNA form through libidn2, which reads the text in the thread's locale; a
    /// process that never called `setlocale` is in "C", where that fails. Returns whether it took.
    @discardableResult
    static func useUTF8CharacterTypeOnThisThread() -> Bool {
        guard let locale = utf8CharacterType else { return false }
        return uselocale(locale) != nil
    }

    /// The "C.UTF-8" character type, made once for every engine thread (a locale is never
    /// freed while a thread may use it); `nil` where the C library has no such locale.
    /// `LC_CTYPE_MASK` is a macro Swift does not import.
    nonisolated(unsafe) private static let utf8CharacterType = newlocale(Int32(1) << LC_CTYPE, "C.UTF-8", nil)

    #if canImport(Glibc)
    /// `RLIM_INFINITY`, which Swift does not import from Glibc (its macro is `-1`).
    private static let unlimited = rlim_t.max
    private static let fileLimitResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let unlimited = RLIM_INFINITY
    private static let fileLimitResource = RLIMIT_NOFILE
    #endif
}

/// `fgetxattr` and `fsetxattr`, looked up once in the C library: Swift's Glibc module does not
/// export `<sys/xattr.h>`. `nil` where the C library lacks them.
private enum ExtendedAttributes {
    typealias Get = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    typealias Set = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32

    static let get: Get? = symbol("fgetxattr").map { unsafeBitCast($0, to: Get.self) }
    static let set: Set? = symbol("fsetxattr").map { unsafeBitCast($0, to: Set.self) }

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
    }
}

/// `flock(2)`, under a name the `flock` struct does not shadow.
private func fileLock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
    flock(descriptor, operation)
}
