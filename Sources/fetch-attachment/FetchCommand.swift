import ArgumentParser
import AttachmentFetcher
import Foundation
import Logging
import SystemPackage

/// `fetch-attachment [PAYLOAD]`: one payload from a file or standard input; or, with
/// `--batch FILE`, one payload per line, all at once through one fetcher.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Process one payload, or a batch with --batch (the default command)."
    )

    @Argument(help: "The payload file, or '-' (the default) for standard input.")
    var payload: String?

    @Option(help: ArgumentHelp("Process a campaign: one JSON payload per line of FILE ('-' for standard input).", valueName: "file"))
    var batch: String?

    @Option(parsing: .unconditional, help: "With --batch: how many payloads are processed at once. The default comes from the open-file limit (raised to its hard limit first): (limit - 64) / 6, at most 1024, so 160 at a limit of 1024; here \(FileDescriptorBudget.concurrency()).")
    var concurrency: Int?

    @Option(help: ArgumentHelp("With --batch: write a self-contained HTML campaign report to FILE.", valueName: "file"))
    var report: String?

    @OptionGroup var options: FetchOptions

    func validate() throws {
        try options.validate()
        if batch != nil, payload != nil {
            throw ValidationError("give either a PAYLOAD or --batch FILE, not both")
        }
        if report != nil, batch == nil { throw ValidationError("--report goes with --batch") }
        if let report, report.isEmpty { throw ValidationError("--report must not be empty") }
        if report == "-" {
            throw ValidationError("--report writes a file, and '-' names none (standard output carries the outcomes)")
        }
        // The campaign is read while the report is written only at the end: the same file would
        // be replaced by the report and the campaign lost.
        if let report, let batch, batch != "-", let identity = CommandSyscalls.identity(of: report),
            identity == CommandSyscalls.identity(of: batch)
        {
            throw ValidationError("--report \(TerminalText.escaped(report)) is the campaign itself (--batch \(TerminalText.escaped(batch)))")
        }
        if let concurrency {
            guard (1...1_000_000).contains(concurrency) else {
                throw ValidationError("--concurrency must be between 1 and 1000000")
            }
            // One payload runs alone: a concurrency given for it would be silently ignored.
            if batch == nil { throw ValidationError("--concurrency goes with --batch") }
        }
    }

    func run() async throws {
        // The files named are used only once the command line is known to be right: a file that
        // cannot be read is exit 66, a report that cannot be written 73, a bad command line 64
        // (see `UnusableFile`).
        try options.checkInputs()
        // Checked now: a report written only at the end of a campaign must not be lost to a typo.
        if let report, let problem = PathCheck.writeProblem(report) {
            throw UnusableFile.uncreatable("cannot write the report \(TerminalText.escaped(report)): \(problem)")
        }
        for path in [payload ?? "-", batch].compactMap({ $0 }) {
            guard path != "-" else {
                if CommandSyscalls.isDirectory(.standardInput) {
                    throw UnusableFile.unreadable("standard input is a directory, not a payload file")
                }
                continue
            }
            guard !PathCheck.isDirectory(path) else {
                throw UnusableFile.unreadable("'\(TerminalText.escaped(path))' is a directory, not a payload file")
            }
            if let problem = PathCheck.readProblem(path) {
                throw UnusableFile.unreadable("cannot read '\(TerminalText.escaped(path))': \(problem)")
            }
        }
        if let batch {
            throw ExitCode(try await BatchRunner(options: options, concurrency: concurrency ?? FileDescriptorBudget.concurrency(), reportPath: report).run(input: batch))
        }
        let payload = self.payload ?? "-"
        if payload == "-", CommandSyscalls.isTerminal(.standardInput) {
            StandardStreams.error.writeWrapped(
                "fetch-attachment: reading a payload from standard input (end it with Ctrl-D; --help for usage)")
        }
        let configuration = options.fetcherConfiguration()
        let input: PayloadInput.Result
        do {
            input = try PayloadInput.read(payload, limit: configuration.maximumPayloadBytes)
        } catch {
            throw UnusableFile.unreadable("cannot read the payload: \(error)")
        }
        let bytes = input.bytes
        if let pretty = input.prettyPrintedBytes {
            StandardStreams.error.writeWrapped(
                "note: \(payload == "-" ? "standard input" : TerminalText.escaped(payload)) is pretty-printed (\(pretty) bytes): read as its compact form, \(bytes.count) bytes, the size APNs and FCM count")
        }
        let printer = OutcomePrinter(json: options.json)
        let outcome: Outcome
        if input.exceedsLimit {
            outcome = PayloadInput.tooLargeOutcome(
                limit: configuration.maximumPayloadBytes, what: payload == "-" ? "standard input" : "the payload file")
            printer.print(outcome)
        } else {
            do {
                outcome = try await CommandFetcher.with(configuration: configuration, logger: options.logger()) { fetcher in
                    BatchSummary.writeCacheNotes(for: fetcher)
                    let outcome = await fetcher.process(bytes)
                    // At once, before the fetcher's shutdown.
                    printer.print(outcome)
                    BatchSummary.writeCacheWriteNote(for: fetcher)
                    return outcome
                }
            } catch let error as AttachmentFetcherError {
                outcome = PayloadInput.unusableOutcome(error, payload: bytes, configuration: configuration)
                printer.print(outcome)
            }
        }
        if outcome.reason == .addressRefused {
            StandardStreams.error.writeWrapped(BatchSummary.addressRefusedHint(proxy: configuration.proxy))
        }
        if BatchSummary.hidesNetworkDetail(outcome) { StandardStreams.error.writeWrapped(BatchSummary.hiddenNetworkDetailHint) }
        throw ExitCode(outcome.status == .attached ? 0 : 1)
    }
}

/// The options every fetching command shares.
struct FetchOptions: ParsableArguments {
    @Option(name: .customLong("output-dir"), help: "Where attachment files go (created if missing). Default: attachments/ in the cache directory ($XDG_CACHE_HOME/attachment-fetcher/attachments or ~/.cache/attachment-fetcher/attachments unless --cache-dir).")
    var outputDirectory: String?

    @Option(name: .customLong("timeout"), parsing: .unconditional, help: ArgumentHelp("Seconds a payload may take, from the moment it is read: above 0, at most 3600 (default 30, about what iOS gives).", valueName: "seconds"))
    var timeoutSeconds: Double?

    /// `--timeout`'s old name, still accepted.
    @Option(name: .customLong("deadline"), parsing: .unconditional, help: .hidden)
    var deadlineSeconds: Double?

    /// Seconds each payload may take: `--timeout`, or `--deadline`, or 30.
    var timeout: Double { timeoutSeconds ?? deadlineSeconds ?? 30 }

    @Flag(help: "Print exactly one JSON object per outcome on standard output.")
    var json = false

    @Option(help: ArgumentHelp("Verify TLS origins against the certificate authorities in this PEM file instead of the system's (as curl's --cacert).", valueName: "file"))
    var cacert: String?

    @Flag(name: .shortAndLong, help: "Log each outcome to standard error.")
    var verbose = false

    @Option(help: ArgumentHelp("Judge every payload's file by these platforms' rules, each with its own verdict (a preflight): 'ios', 'android' or 'ios,android' (or --platform ios --platform android); 'linux' for a Linux client that shows the notification itself (any image, sound or video iOS or Android shows, within the size limits, whatever the payload's shape: no mutable-content rule, no vendor's file name). The outcome and the exit status are the payload's own platform's verdict (its users receive it), the others saying what they would show of the same file; a list without that platform leaves it unjudged, and the outcome is attached when a listed platform shows a file. Default: the payload's own platform.", valueName: "list"))
    var platform: [String] = []

    @Option(name: .customLong("max-redirects"), parsing: .unconditional, help: "How many redirects a download may follow, as URLSession does.")
    var maximumRedirects: Int = 20

    @Option(name: .customLong("max-attachments"), parsing: .unconditional, help: "The most attachments one payload may fetch (distinct URLs, in payload order; default 4).")
    var maximumAttachments: Int?

    @OptionGroup var cache: CacheOptions

    @Flag(name: .customLong("no-cache"), help: "Use no cache: every payload downloads its own copy.")
    var noCache = false

    @OptionGroup(title: "Network") var network: NetworkOptions

    func validate() throws {
        try network.validate()
        try TimeoutOption.validate(timeout: timeoutSeconds, deadline: deadlineSeconds, maximum: 3_600)
        if let outputDirectory, outputDirectory.isEmpty {
            throw ValidationError("--output-dir must not be empty")
        }
        // The default output directory is the cache's, managed by `cache clear`: a link planted
        // there would send every attachment where it points.
        if outputDirectory == nil, CommandSyscalls.isSymbolicLink(cache.attachmentsDirectory) {
            throw ValidationError(
                "\(TerminalText.escaped(cache.attachmentsDirectory)) is a symbolic link, not the cache's output directory: remove it, or give --output-dir")
        }
        _ = try platforms()
        guard (0...100).contains(maximumRedirects) else { throw ValidationError("--max-redirects must be between 0 and 100") }
        if let maximumAttachments, maximumAttachments < 1 {
            throw ValidationError("--max-attachments must be at least 1")
        }
        try cache.validate()
        // Options of a cache that is not used would be silently ignored.
        if noCache {
            if cache.maximumBytes != nil { throw ValidationError("--cache-max-bytes sets the cache's budget, and --no-cache uses no cache: drop one") }
            if cache.allowsSharedDirectory { throw ValidationError("--allow-shared-cache-dir is about the cache, and --no-cache uses no cache: drop one") }
        }
    }

    /// Checks the files the options name for reading, once the command line is valid:
    /// `UnusableFile` (exit 66) for one that cannot be read; a bad command line (64) for a
    /// `--cacert` that holds no certificate.
    func checkInputs() throws {
        guard let cacert else { return }
        let problem = PathCheck.isDirectory(cacert) ? "it is a directory" : PathCheck.readProblem(cacert)
        if let problem {
            throw UnusableFile.unreadable("--cacert \(TerminalText.escaped(cacert)) is not a readable file: \(problem)")
        }
        // libcurl would take any file and then fail every HTTPS download.
        let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: cacert)).read(upToCount: 1 << 20)) ?? nil
        guard let head, String(decoding: head, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw UnusableFile.invalid("--cacert \(TerminalText.escaped(cacert)) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
    }

    func fetcherConfiguration() -> PushAttachmentFetcher.Configuration {
        var configuration = PushAttachmentFetcher.Configuration(
            outputDirectory: outputDirectory ?? cache.attachmentsDirectory,
            timeout: TimeoutOption.duration(timeout))
        configuration.cache = noCache ? nil : cache.configuration()
        configuration.trustedCertificatesFile = cacert
        configuration.platforms = (try? platforms()) ?? []
        configuration.maximumRedirects = maximumRedirects
        if let maximumAttachments { configuration.maximumAttachmentsPerPayload = maximumAttachments }
        network.apply(to: &configuration)
        return configuration
    }

    /// `--platform`'s lists, each platform once, in the order given: the option may be given
    /// more than once, and every list counts (as `--allow-network` and `--resolve` do).
    func platforms() throws -> [Platform] {
        var platforms: [Platform] = []
        for name in platform.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let known = Platform(rawValue: trimmed) else {
                throw ValidationError("--platform: unknown platform '\(name)' (use ios, android, ios,android or linux)")
            }
            if !platforms.contains(known) { platforms.append(known) }
        }
        return platforms
    }

    func logger() -> Logger {
        let verbose = self.verbose
        var logger = Logger(label: "fetch-attachment") { label -> any LogHandler in
            verbose ? EscapingLogHandler(label: label) : SwiftLogNoOpLogHandler()
        }
        logger.logLevel = verbose ? .debug : .critical
        return logger
    }
}

/// `--timeout SECONDS` (or its old name `--deadline`), checked and converted the same way by every
/// command.
enum TimeoutOption {
    static func validate(timeout: Double?, deadline: Double?, maximum: Double) throws {
        if timeout != nil, deadline != nil {
            throw ValidationError("--deadline is the old name of --timeout: give --timeout only")
        }
        guard let seconds = timeout ?? deadline else { return }
        guard seconds.isFinite, seconds > 0, seconds <= maximum else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most \(Int(maximum))")
        }
        // Timeouts are kept in whole milliseconds: a smaller one would be no time at all.
        guard (seconds * 1_000).rounded() >= 1 else {
            throw ValidationError("--timeout must be at least 0.001 seconds (1 ms); \(seconds) rounds to 0 ms")
        }
    }

    static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1_000).rounded())) }
}

/// Where the shared cache is and how big it may grow.
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "The shared cache directory. Default: $XDG_CACHE_HOME/attachment-fetcher or ~/.cache/attachment-fetcher.")
    var directory: String?

    @Option(name: .customLong("cache-max-bytes"), parsing: .unconditional, help: "The cache's size budget in bytes (default 1073741824, 1 GiB); least recently used entries go first.")
    var maximumBytes: Int?

    @Flag(
        name: .customLong("allow-shared-cache-dir"),
        help: "Use a cache directory owned by another user or writable by others (refused by default: whoever can write it can plant entries every user would serve).")
    var allowsSharedDirectory = false

    func validate() throws {
        if let directory, directory.isEmpty { throw ValidationError("--cache-dir must not be empty") }
        if let maximumBytes, maximumBytes <= 0 { throw ValidationError("--cache-max-bytes must be positive") }
    }

    /// The cache's directory: `--cache-dir`, else the default; absolute, as the cache reports its
    /// own, so that `cache stats` names it and its `attachments/` alike.
    var cacheDirectory: String { FilePath.absolute(directory ?? DefaultPaths.root).string }

    /// Where attachments go without --output-dir: `attachments/` inside the cache's directory,
    /// so that each cache's `stats` counts and `clear` removes its own payloads' links (and the
    /// default cache's directory with --no-cache).
    var attachmentsDirectory: String { cacheDirectory + "/attachments" }

    func configuration() -> PushAttachmentFetcher.Configuration.Cache {
        var cache = PushAttachmentFetcher.Configuration.Cache(directory: cacheDirectory)
        if let maximumBytes { cache.maximumBytes = maximumBytes }
        cache.allowsSharedDirectory = allowsSharedDirectory
        return cache
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
}

/// A file named on the command line that cannot be used: an input missing, a directory or not
/// readable by this user (or, for one payload, a standard input that was closed), or an output
/// that cannot be created. Said in the one line `description`, without usage: the command line
/// was right, the file is not. Thrown from `run()`, once the command line was validated (a bad
/// option stays 64), and for an input before anything is made or written.
struct UnusableFile: Error, CustomStringConvertible {
    /// `EX_NOINPUT` of sysexits(3): a file to read is not there to read.
    static let noInput: Int32 = 66
    /// `EX_CANTCREAT` of sysexits(3): a file to write cannot be created.
    static let cannotCreate: Int32 = 73
    /// `EX_USAGE` of sysexits(3), as for a bad option: a file that is no file of its kind.
    static let usage: Int32 = 64

    /// The file and why it cannot be used, in the system's words.
    var description: String
    /// `noInput`, `cannotCreate` or `usage`.
    var exitStatus: Int32

    static func unreadable(_ description: String) -> Self { Self(description: description, exitStatus: noInput) }
    static func uncreatable(_ description: String) -> Self { Self(description: description, exitStatus: cannotCreate) }
    /// A file read that is not what its option takes (a `--cacert` with no certificate): 64, said
    /// without the usage of the root command, which has nothing to do with it.
    static func invalid(_ description: String) -> Self { Self(description: description, exitStatus: usage) }
}

/// Checks of paths given on the command line.
enum PathCheck {
    /// Whether `path` names a directory (following links).
    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Why the file at `path` could not be read, in the system's words, or `nil` if it could be now.
    static func readProblem(_ path: String) -> String? {
        do {
            try CommandSyscalls.checkAccess(path, R_OK)
            return nil
        } catch {
            return error.description
        }
    }

    /// Why a file could not be written at `path` (made, or replaced if it exists), or `nil` if it
    /// could be now.
    static func writeProblem(_ path: String) -> String? {
        if isDirectory(path) { return "it is a directory" }
        let parent = FilePath(path).removingLastComponent()
        let directory = parent.isEmpty ? "." : parent.string
        guard isDirectory(directory) else {
            let exists = FileManager.default.fileExists(atPath: directory)
            return "\(TerminalText.escaped(directory)) \(exists ? "is not a directory" : "does not exist")"
        }
        let exists = FileManager.default.fileExists(atPath: path)
        do {
            try CommandSyscalls.checkAccess(exists ? path : directory, exists ? W_OK : W_OK | X_OK)
            return nil
        } catch {
            return exists ? error.description : "\(TerminalText.escaped(directory)): \(error)"
        }
    }
}
