import Foundation
import Subprocess
import SystemPackage

/// Runs a built executable of this package (found beside the test binary), or any program by
/// absolute path, through swift-subprocess, and collects what it prints.
struct CommandRunner {
    struct Result {
        /// The exit status, or the number of the signal that ended the program (as Foundation's
        /// `Process.terminationStatus` gives it).
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The directory of the products being tested (`.build/<triple>/debug`).
    static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The path of the `fetch-attachment` being tested, for a test that runs it through a shell
    /// or another program (`unshare`, `setpriv`).
    static var fetchAttachmentPath: String { productsDirectory.appendingPathComponent("fetch-attachment").path }

    /// The most either stream may hold before the run fails: tests print far less.
    static let outputLimit = 256 << 20

    /// Runs `executable` (a product of this package, or an absolute path) with `arguments`,
    /// feeding `stdin`, in `workingDirectory` (this process's if `nil`), and waits for it: at most `timeout`, after which it is killed and the
    /// result says so.
    static func run(
        _ executable: String, _ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:],
        workingDirectory: String? = nil, timeout: Duration = .seconds(60)
    ) async throws -> Result {
        // Never the user's own cache: a fresh XDG_CACHE_HOME unless the test names one.
        let isolated = NSTemporaryDirectory() + "attachment-fetcher-xdg-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: isolated) }
        let variables = Self.environment(["XDG_CACHE_HOME": isolated].merging(environment) { $1 })
        let (input, inputPath) = try Self.inputFile(stdin)
        defer { try? FileManager.default.removeItem(atPath: inputPath) }
        let path = Self.path(of: executable)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                let result = try await Subprocess.run(
                    .path(path), arguments: Arguments(arguments), environment: variables,
                    workingDirectory: workingDirectory.map { FilePath($0) },
                    input: .fileDescriptor(input, closeAfterSpawningProcess: true), output: .bytes(limit: outputLimit),
                    error: .bytes(limit: outputLimit))
                return Result(
                    status: Self.status(result.terminationStatus), stdout: String(decoding: result.standardOutput, as: UTF8.self),
                    stderr: String(decoding: result.standardError, as: UTF8.self))
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()  // kills the program if the time ran out first
            return first ?? Result(status: SIGKILL, stdout: "", stderr: "\(executable) did not end within \(timeout)")
        }
    }

    /// A product of this package by name, or an absolute path as it is.
    private static func path(of executable: String) -> FilePath {
        FilePath(executable.hasPrefix("/") ? executable : productsDirectory.appendingPathComponent(executable).path)
    }

    /// This process's environment with `overrides`.
    private static func environment(_ overrides: [String: String]) -> Subprocess.Environment {
        var keys: [Subprocess.Environment.Key: String?] = [:]
        for (name, value) in overrides { keys[Subprocess.Environment.Key(stringLiteral: name)] = value }
        return .inherit.updating(keys)
    }

    /// `data` in a temporary file, open for reading: a program's standard input comes from a
    /// file rather than a pipe, because a program that stops reading early (an oversized
    /// payload, a refused argument) would leave a pipe writer behind, and swift-subprocess 1.0's
    /// traps when its write fails. The caller removes the file (its path is returned).
    private static func inputFile(_ data: Data) throws -> (FileDescriptor, String) {
        let path = NSTemporaryDirectory() + "attachment-fetcher-stdin-" + UUID().uuidString
        try data.write(to: URL(fileURLWithPath: path))
        return (try FileDescriptor.open(FilePath(path), .readOnly), path)
    }

    /// The exit status, or the number of the signal that ended the program.
    private static func status(_ termination: TerminationStatus) -> Int32 {
        switch termination {
        case .exited(let code): code
        case .signaled(let signal): signal
        }
    }
}

/// A program kept running while a test talks to it (swift-subprocess's closure form: it lives
/// only as long as the closure, and is killed if the closure leaves it running).
struct RunningProgram: Sendable {
    /// The program's process id.
    let processIdentifier: pid_t
    fileprivate let writer: StandardInputWriter?
    fileprivate let lines: AsyncStream<String>?
    fileprivate let signal: @Sendable (Subprocess.Signal) -> Void

    /// Writes `data` to the program's standard input.
    func write(_ data: Data) async throws { _ = try await writer?.write(Array(data)) }

    /// Closes the program's standard input.
    func finishInput() async throws { try await writer?.finish() }

    /// The next line the program printed on standard output, or `nil` at its end or when
    /// `timeout` passes first.
    func nextLine(within timeout: Duration) async -> String? {
        guard let lines else { return nil }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                var iterator = lines.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Sends the program a signal (SIGKILL, SIGTERM…).
    func send(_ signal: Int32) { self.signal(Subprocess.Signal(rawValue: signal)) }
}

extension CommandRunner {
    /// Runs `executable` while `body` talks to it, then waits for it to end: `body` sends it a
    /// signal or closes its input. Standard output is read line by line when `readLines`, else
    /// discarded, as standard error always is. Returns the exit status (or the signal's number)
    /// and what `body` returned.
    static func withRunning<Value: Sendable>(
        _ executable: String, _ arguments: [String], stdin: Data? = nil, readLines: Bool = false,
        environment: [String: String] = [:],
        _ body: @Sendable (RunningProgram) async throws -> Value
    ) async throws -> (status: Int32, value: Value) {
        let path = Self.path(of: executable)
        let variables = Self.environment(environment)
        if let stdin {
            // Fixed input from a file (see `inputFile`), output discarded.
            let (input, inputPath) = try Self.inputFile(stdin)
            defer { try? FileManager.default.removeItem(atPath: inputPath) }
            let result = try await Subprocess.run(
                .path(path), arguments: Arguments(arguments), environment: variables,
                input: .fileDescriptor(input, closeAfterSpawningProcess: true), output: .discarded, error: .discarded
            ) { execution in
                try await body(
                    RunningProgram(
                        processIdentifier: execution.processIdentifier.value, writer: nil, lines: nil,
                        signal: { try? execution.send(signal: $0) }))
            }
            return (Self.status(result.terminationStatus), result.closureResult)
        }
        let result = try await Subprocess.run(
            .path(path), arguments: Arguments(arguments), environment: variables,
            input: .inputWriter, output: .sequence, error: .discarded
        ) { execution in
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            async let drained: Void = {
                // Every output line goes to the stream; reading it to its end keeps the pipe clear.
                do { for try await line in execution.standardOutput.strings() { continuation.yield(line) } } catch {}
                continuation.finish()
            }()
            let program = RunningProgram(
                processIdentifier: execution.processIdentifier.value, writer: execution.standardInputWriter,
                lines: readLines ? lines : nil, signal: { try? execution.send(signal: $0) })
            let value = try await body(program)
            try? await execution.standardInputWriter.finish()
            await drained
            return value
        }
        return (Self.status(result.terminationStatus), result.closureResult)
    }
}

extension String {
    /// `fetch-attachment`'s human output as it was before it was wrapped to the terminal's width:
    /// each continuation line joined to the line it continues by one space. A continuation is
    /// indented at least three columns deeper than the start of the line it continues (under the
    /// text after its label, or four in); a nested line is two deeper, and stays a line.
    var unwrapped: String {
        var lines: [String] = []
        var indent = 0
        for line in split(separator: "\n", omittingEmptySubsequences: false) {
            let depth = line.prefix { $0 == " " }.count
            if let last = lines.last, depth < line.count, depth >= indent + 3 {
                lines[lines.count - 1] = last + " " + line.dropFirst(depth)
            } else {
                lines.append(String(line))
                indent = depth
            }
        }
        return lines.joined(separator: "\n")
    }
}
