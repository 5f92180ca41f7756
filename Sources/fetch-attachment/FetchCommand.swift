import ArgumentParser
import AttachmentFetcher
import Foundation
import Logging

/// `fetch-attachment [PAYLOAD]`: one payload from a file or standard input.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Process one payload (the default command)."
    )

    @Argument(help: "The payload file, or '-' (the default) for standard input.")
    var payload: String = "-"

    @OptionGroup var options: FetchOptions

    func validate() throws {
        try options.validate()
        if payload != "-", !FileManager.default.isReadableFile(atPath: payload) {
            throw ValidationError("cannot read the payload file '\(payload)'")
        }
    }

    func run() async throws {
        let bytes: Data
        do {
            bytes = try PayloadInput.read(payload)
        } catch {
            throw ValidationError("cannot read the payload: \(error.localizedDescription)")
        }
        let outcome: Outcome
        do {
            outcome = try await withAttachmentFetcher(
                configuration: options.fetcherConfiguration(), logger: options.logger()
            ) { fetcher in
                await fetcher.process(bytes)
            }
        } catch let error as AttachmentFetcherError {
            outcome = Outcome(
                status: .original, reason: .storage, detail: error.description, vendor: nil, attachments: [],
                warnings: [], elapsed: .zero, payload: bytes)
        }
        OutcomePrinter(json: options.json).print(outcome)
        throw ExitCode(outcome.status == .attached ? 0 : 1)
    }
}

/// The options every fetching command shares.
struct FetchOptions: ParsableArguments {
    @Option(name: .customLong("output-dir"), help: "Where attachment files go (created if missing). Default: $XDG_CACHE_HOME/attachment-fetcher/attachments or ~/.cache/attachment-fetcher/attachments.")
    var outputDirectory: String?

    @Option(help: "Seconds a payload may take, from the moment it is read (iOS gives about 30).")
    var deadline: Double = 30

    @Flag(help: "Print exactly one JSON object per outcome on standard output.")
    var json = false

    @Flag(name: .shortAndLong, help: "Log each outcome to standard error.")
    var verbose = false

    func validate() throws {
        guard deadline.isFinite, deadline > 0, deadline <= 3_600 else {
            throw ValidationError("--deadline must be a number of seconds above 0 and at most 3600")
        }
        if let outputDirectory, outputDirectory.isEmpty {
            throw ValidationError("--output-dir must not be empty")
        }
    }

    func fetcherConfiguration() -> AttachmentFetcher.Configuration {
        AttachmentFetcher.Configuration(
            outputDirectory: outputDirectory ?? DefaultPaths.attachments,
            deadline: .milliseconds(Int64((deadline * 1_000).rounded())))
    }

    func logger() -> Logger {
        let verbose = self.verbose
        var logger = Logger(label: "fetch-attachment") { label -> any LogHandler in
            verbose ? StreamLogHandler.standardError(label: label) : SwiftLogNoOpLogHandler()
        }
        logger.logLevel = verbose ? .debug : .critical
        return logger
    }
}

/// Reads a payload from a path or from standard input ('-').
enum PayloadInput {
    static func read(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }
}

/// Default locations under the user's cache directory.
enum DefaultPaths {
    /// `$XDG_CACHE_HOME/attachment-fetcher`, or `~/.cache/attachment-fetcher`.
    static var root: String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/attachment-fetcher" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.cache/attachment-fetcher"
    }

    /// Where attachment files go by default.
    static var attachments: String { root + "/attachments" }
}
