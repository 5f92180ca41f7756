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

    /// The most either stream may hold before the run fails: tests print far less.
    static let outputLimit = 256 << 20

    /// Runs `executable` (a product of this package, or an absolute path) with `arguments`,
    /// feeding `stdin`, and waits for it: at most `timeout`, after which it is killed and the
    /// result says so.
    static func run(
        _ executable: String, _ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let path = executable.hasPrefix("/") ? executable : productsDirectory.appendingPathComponent(executable).path
        // Never the user's own cache: a fresh XDG_CACHE_HOME unless the test names one.
        let isolated = NSTemporaryDirectory() + "attachment-fetcher-xdg-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: isolated) }
        var overrides: [Subprocess.Environment.Key: String?] = ["XDG_CACHE_HOME": isolated]
        for (name, value) in environment { overrides[Subprocess.Environment.Key(stringLiteral: name)] = value }
        let variables = overrides
        // Standard input comes from a file rather than a pipe: a program that stops reading early
        // (an oversized payload, a refused argument) then leaves no writer behind, and
        // swift-subprocess 1.0's pipe writer traps when its write fails.
        let inputPath = isolated + "-stdin"
        try stdin.write(to: URL(fileURLWithPath: inputPath))
        defer { try? FileManager.default.removeItem(atPath: inputPath) }
        let input = try FileDescriptor.open(FilePath(inputPath), .readOnly)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                let result = try await Subprocess.run(
                    .path(FilePath(path)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
                    input: .fileDescriptor(input, closeAfterSpawningProcess: true), output: .bytes(limit: outputLimit),
                    error: .bytes(limit: outputLimit))
                let status: Int32
                switch result.terminationStatus {
                case .exited(let code): status = code
                case .signaled(let signal): status = signal
                }
                return Result(
                    status: status, stdout: String(decoding: result.standardOutput, as: UTF8.self),
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
        let path = executable.hasPrefix("/") ? executable : productsDirectory.appendingPathComponent(executable).path
        var overrides: [Subprocess.Environment.Key: String?] = [:]
        for (name, value) in environment { overrides[Subprocess.Environment.Key(stringLiteral: name)] = value }
        let variables = overrides
        func status(_ termination: TerminationStatus) -> Int32 {
            switch termination {
            case .exited(let code): code
            case .signaled(let signal): signal
            }
        }
        if let stdin {
            // Fixed input from a file (see `run`), output discarded.
            let inputPath = NSTemporaryDirectory() + "attachment-fetcher-stdin-" + UUID().uuidString
            try stdin.write(to: URL(fileURLWithPath: inputPath))
            defer { try? FileManager.default.removeItem(atPath: inputPath) }
            let input = try FileDescriptor.open(FilePath(inputPath), .readOnly)
            let result = try await Subprocess.run(
                .path(FilePath(path)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
                input: .fileDescriptor(input, closeAfterSpawningProcess: true), output: .discarded, error: .discarded
            ) { execution in
                try await body(
                    RunningProgram(
                        processIdentifier: execution.processIdentifier.value, writer: nil, lines: nil,
                        signal: { try? execution.send(signal: $0) }))
            }
            return (status(result.terminationStatus), result.closureResult)
        }
        let result = try await Subprocess.run(
            .path(FilePath(path)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
            input: .inputWriter, output: .sequence, error: .discarded
        ) { execution in
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            async let drained: Void = {
                // Every output line goes to the stream; reading it to its end keeps the pipe clear.
                if let sequence = try? execution.standardOutput.strings() {
                    do { for try await line in sequence { continuation.yield(line) } } catch {}
                }
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
        return (status(result.terminationStatus), result.closureResult)
    }
}
