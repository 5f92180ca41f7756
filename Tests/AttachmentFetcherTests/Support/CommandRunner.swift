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
