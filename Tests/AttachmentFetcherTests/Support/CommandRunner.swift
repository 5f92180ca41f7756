import Foundation

/// Runs a built executable of this package (found beside the test binary) and collects what
/// it prints.
struct CommandRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The directory of the products being tested (`.build/<triple>/debug`).
    static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Runs `executable` (a product of this package, or an absolute path) with `arguments`, feeding `stdin`, and waits (at most `timeout`) for it.
    static func run(
        _ executable: String, _ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable.hasPrefix("/")
            ? URL(fileURLWithPath: executable) : productsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        // Never the user's own cache: a fresh XDG_CACHE_HOME unless the test names one.
        let isolated = ["XDG_CACHE_HOME": NSTemporaryDirectory() + "attachment-fetcher-xdg-" + UUID().uuidString]
        process.environment = ProcessInfo.processInfo.environment.merging(isolated) { $1 }.merging(environment) { $1 }
        defer { try? FileManager.default.removeItem(atPath: isolated["XDG_CACHE_HOME"]!) }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
        // Read both pipes to the end (so a full pipe never blocks the child) on Dispatch threads:
        // a blocking read on Swift's cooperative pool (two threads here) would stall every other test.
        async let out = readToEnd(output.fileHandleForReading)
        async let err = readToEnd(errors.fileHandleForReading)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while process.isRunning, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { process.terminate() }
        let (stdout, stderr) = await (out, err)
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    private static func readToEnd(_ handle: FileHandle) async -> Data {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: handle.readDataToEndOfFile()) }
        }
    }
}
