import ArgumentParser
import Foundation
import Synchronization
import SystemPackage

/// Standard output and standard error, written through `write(2)` with every failure kept: a
/// write that fails (a closed or full stream, a reader gone) is never a crash and never lost
/// silently. When the command ends, a failed write makes the exit status
/// `StandardStreams.writeErrorStatus`, after the failure is reported on standard error (if that
/// one still works).
final class CheckedStream: Sendable {
    /// The file descriptor written to.
    let descriptor: FileDescriptor
    /// "standard output" or "standard error", for the message.
    let name: String
    /// `errno` of the first failed write; 0 while every write succeeded.
    private let firstError = Atomic<Int32>(0)

    init(descriptor: FileDescriptor, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    /// Whether a write has failed; later writes are not tried.
    var failed: Bool { firstError.load(ordering: .relaxed) != 0 }

    /// The first failed write's error, if any.
    var error: Errno? {
        let error = firstError.load(ordering: .relaxed)
        return error == 0 ? nil : Errno(rawValue: error)
    }

    /// Marks the stream as failed with `error` (the first failure is kept).
    func fail(_ error: Errno) {
        _ = firstError.compareExchange(expected: 0, desired: error.rawValue, ordering: .relaxed)
    }

    /// Writes all of `bytes` (partial writes continued, interrupted ones retried); `false` once
    /// any write on this stream has failed.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard !failed else { return false }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(Errno) in
                    try CommandSyscalls.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[written...]))
                }
            }
            switch result {
            case .success(let count): written += count
            case .failure(let error):
                fail(error)
                return false
            }
        }
        return true
    }

    /// Writes the UTF-8 of `text`.
    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Writes `text`, lines for a person, and a line break: lines wider than this stream's
    /// terminal (80 columns when it is none) wrapped (see `LineWrapping`).
    @discardableResult
    func writeWrapped(_ text: String) -> Bool {
        write(LineWrapping.wrapped(text, width: LineWrapping.width(of: descriptor)) + "\n")
    }
}

/// The process's standard output and error, and what the command's exit makes of their failures.
enum StandardStreams {
    /// Exit status when a write on standard output or standard error failed: `EX_IOERR` of
    /// sysexits(3), beside the `EX_USAGE` (64) of a bad command line.
    static let writeErrorStatus: Int32 = 74

    static let output = CheckedStream(descriptor: .standardOutput, name: "standard output")
    static let error = CheckedStream(descriptor: .standardError, name: "standard error")

    /// Run first: a write to a reader that went away becomes `EPIPE`, a write error, rather than
    /// a silent death by `SIGPIPE`. A standard stream that was closed when the process started
    /// counts as failed, and `/dev/null` takes its descriptor, so that no file opened later
    /// (an attachment, the cache's index) receives what was meant for it.
    /// Standard input too: a payload read from it then fails, in words that say it was closed.
    static func prepare() {
        CommandSyscalls.ignoreBrokenPipes()
        for stream in [output, error] where CommandSyscalls.isClosed(stream.descriptor) {
            stream.fail(.badFileDescriptor)
            CommandSyscalls.attachNull(to: stream.descriptor)
        }
        if CommandSyscalls.isClosed(.standardInput) {
            inputWasClosed.store(true, ordering: .relaxed)
            CommandSyscalls.attachNull(to: .standardInput)
        }
    }

    /// Whether standard input was closed when the process started.
    static let inputWasClosed = Atomic<Bool>(false)

    /// Why reading `path` failed with `error`, in words: a closed standard input is named so
    /// (its number then holds a write-only `/dev/null`, whose read fails with `EBADF`).
    static func readFailure(of path: String, _ error: Errno) -> String {
        path == "-" && inputWasClosed.load(ordering: .relaxed) ? "standard input is closed" : "\(error)"
    }

    /// Flushes what C's stdio may hold (this program prints through `StandardStreams`, see
    /// `print(_:)` below, but a library might not); then, when a write has failed, says so on
    /// standard error (when it can) and returns `writeErrorStatus`; otherwise `status`.
    static func finalStatus(_ status: Int32) -> Int32 {
        if let failure = CommandSyscalls.flushStandardIO() { output.fail(failure) }
        guard output.failed || error.failed else { return status }
        for stream in [output, error] {
            guard let failure = stream.error else { continue }
            error.write("fetch-attachment: cannot write to \(stream.name): \(failure)\n")
        }
        return writeErrorStatus
    }

    /// Ends the process with `finalStatus(status)`.
    static func exit(_ status: Int32) -> Never {
        let status = finalStatus(status)
        PeakMemoryReport.write()
        CommandSyscalls.exit(status)
    }
}

/// The standard library's `print`, for one string, through `StandardStreams.output`: within
/// this program, a `print("…")` is checked like every other write to standard output.
func print(_ text: String) {
    StandardStreams.output.write(text + "\n")
}

/// A test hook: with `FETCH_ATTACHMENT_PEAK_RSS_FILE` set, the process's peak resident set size
/// (`VmHWM` of /proc/self/status, in KiB: this program's own, even when it was spawned from a
/// large process) is written to that file as it exits, so that tests can hold memory to a bound.
enum PeakMemoryReport {
    static func write() {
        guard let path = ProcessInfo.processInfo.environment["FETCH_ATTACHMENT_PEAK_RSS_FILE"],
            let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(separator: " ").dropFirst().first
        else { return }
        try? Data("\(kib)\n".utf8).write(to: URL(fileURLWithPath: path))
    }
}
