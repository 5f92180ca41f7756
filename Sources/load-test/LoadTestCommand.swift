import ArgumentParser
import Foundation
import MockCDN
import MockCDNTLS

/// `load-test`: replays synchronised download spikes against an in-process mock CDN and measures
/// `fetch-attachment --batch` (and, where a scenario says so, `curl --parallel` and the URLSession
/// baseline) as child processes, each measured alone.
@main
struct LoadTestCommand: AsyncParsableCommand {
    /// The command, its default subcommand and the hidden hard-link floor.
    static let configuration = CommandConfiguration(
        commandName: "load-test",
        abstract: "Measure fetch-attachment against curl and URLSession under download spikes on a loopback mock CDN.",
        subcommands: [RunLoadTest.self, HardlinkFloorCommand.self],
        defaultSubcommand: RunLoadTest.self
    )
}

/// The load test itself (the default subcommand).
struct RunLoadTest: AsyncParsableCommand {
    /// Help text.
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scenarios (the default command).",
        discussion: """
            Scenarios: same-url, distinct-urls, videos, fault-mix, warm-cache (all five by default) and smoke. \
            distinct-urls runs fetch-attachment twice, with the CLI's defaults (a cache, fresh for each run) and \
            with --no-cache, beside curl --parallel and URLSession. Files and caches go to a scratch directory \
            on disk, in the working directory or --work-dir, or on tmpfs with --tmpfs. \
            The mock CDN runs in this process on 127.0.0.1; fetch-attachment and urlsession-fetch are taken from \
            the directory of this binary (or --bin-dir), curl from /usr/bin (needed by distinct-urls only). Every child is measured alone: wall time around \
            spawn→exit, CPU time (user + system) from wait4, peak RSS through GNU time when installed. \
            Exit status: 0 when every behaviour check passed (speed targets never change it), 1 when one failed \
            or a tool is missing, 64 for a bad command line (checked before anything runs, --svg's path too).
            """
    )

    /// The scenarios to run, in order.
    @Option(name: .customLong("scenario"), help: "A scenario to run (repeatable). Default: all but smoke.")
    var scenarios: [ScenarioName] = []

    /// Measured runs per contender.
    @Option(help: "Measured runs per contender; the table shows the median and the min–max range.")
    var runs: Int = 1

    /// Put the scratch directory on tmpfs.
    @Flag(help: """
        Put the scratch directory (every contender's files, and fetch-attachment's caches) under /dev/shm (tmpfs) \
        instead of on disk, to remove disk noise.
        """)
    var tmpfs = false

    /// Where the scratch directory is made when it is on disk.
    @Option(name: .customLong("work-dir"), help: """
        Make the scratch directory (every contender's files, and fetch-attachment's caches, on one file system) in DIR; \
        default: the working directory. A directory of its own is made there and removed afterwards.
        """)
    var workDirectory: String?

    /// Serve HTTPS.
    @Flag(help: """
        Serve HTTPS (HTTP/2 to clients that offer it) with a certificate for 127.0.0.1 made by openssl; \
        fetch-attachment and curl trust it through --cacert. URLSession is left out: Foundation on Linux \
        trusts only the system's certificate authorities.
        """)
    var tls = false

    /// Where to write the latency CDF.
    @Option(help: """
        Write an SVG latency CDF of fetch-attachment's distinct-urls run (the CLI's defaults, cache on) with the \
        median wall time (else the first scenario's) to PATH.
        """)
    var svg: String?

    /// JSON instead of the table on standard output.
    @Flag(help: "Print a JSON document of everything on standard output (the table then goes to standard error).")
    var json = false

    /// Multiplies payload counts.
    @Option(help: """
        Multiply every payload count by F, e.g. 0.1 for a quick run; smoke and custom are excepted (custom runs \
        exactly --payloads).
        """)
    var scale: Double = 1

    /// Transfers per host for the baselines.
    @Option(help: """
        Transfers per host for the baselines (curl --parallel-max, URLSession's window and connections per host); \
        keep it equal to fetch-attachment's per-host limit (48 by default).
        """)
    var concurrency: Int = 48

    /// fetch-attachment's --concurrency.
    @Option(name: .customLong("batch-concurrency"), help: "Pass --concurrency N (payloads in flight) to fetch-attachment; default: its own default.")
    var batchConcurrency: Int?

    /// The `custom` scenario's spike.
    /// Each `nil` when not given: a custom option given without `--scenario custom` shapes
    /// nothing, and is refused.
    @Option(name: .customLong("payloads"), help: "custom: payloads in all (default 1000).")
    var payloadsOption: Int?
    @Option(name: .customLong("urls"), help: "custom: distinct URLs the payloads share (default 1).")
    var urlsOption: Int?
    @Option(name: .customLong("bytes"), help: "custom: bytes per asset (default 100000).")
    var bytesOption: Int?
    @Option(name: .customLong("media-type"), help: "custom: asset type (jpg png gif mp3 m4a wav aiff mp4 mpg avi; default jpg).")
    var mediaTypeOption: String?
    @Option(name: .customLong("fault-percent"), help: "custom: percent of payloads whose URL injects a fault (default 0).")
    var faultPercentOption: Int?
    var payloads: Int { payloadsOption ?? 1_000 }
    var urls: Int { urlsOption ?? 1 }
    var bytes: Int { bytesOption ?? 100_000 }
    var mediaType: String { mediaTypeOption ?? "jpg" }
    var faultPercent: Int { faultPercentOption ?? 0 }
    @Option(name: .customLong("timeout"), help: "custom: seconds each payload may take (default 30).")
    var timeoutSeconds: Double?
    /// `--timeout`'s old name, still accepted.
    @Option(name: .customLong("deadline"), help: .hidden)
    var deadlineSeconds: Double?
    /// Seconds each payload of a custom spike may take: `--timeout`, or `--deadline`, or 30.
    var payloadTimeout: Double { timeoutSeconds ?? deadlineSeconds ?? 30 }
    @Option(name: .customLong("window"), help: "custom: seconds over which payloads are handed in evenly (0, the default: all at once).")
    var windowOption: Double?
    var window: Double { windowOption ?? 0 }

    /// Where fetch-attachment and urlsession-fetch are (default: beside this binary).
    @Option(name: .customLong("bin-dir"), help: ArgumentHelp(
        "Take fetch-attachment and urlsession-fetch from DIR (e.g. .build/debug); default: the directory of this binary.",
        valueName: "dir"))
    var binDirectory: String?

    /// Checks the numbers.
    func validate() throws {
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be between 1 and 50") }
        guard scale.isFinite, scale > 0, scale <= 10 else { throw ValidationError("--scale must be above 0 and at most 10") }
        guard (1...1_024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024") }
        if let batchConcurrency, !(1...1_000_000).contains(batchConcurrency) {
            throw ValidationError("--batch-concurrency must be between 1 and 1000000")
        }
        guard (1...1_000_000).contains(payloads), (1...1_000_000).contains(urls), (1...50_000_000).contains(bytes) else {
            throw ValidationError("--payloads and --urls must be 1...1000000, --bytes 1...50000000")
        }
        guard SyntheticMedia.mediaExtensions.contains(mediaType) else {
            throw ValidationError("--media-type must be one of \(SyntheticMedia.mediaExtensions.joined(separator: " "))")
        }
        guard (0...100).contains(faultPercent) else { throw ValidationError("--fault-percent must be 0...100") }
        if timeoutSeconds != nil, deadlineSeconds != nil {
            throw ValidationError("--deadline is the old name of --timeout: give --timeout only")
        }
        guard payloadTimeout.isFinite, payloadTimeout > 0, payloadTimeout <= 3_600 else {
            throw ValidationError("--timeout must be above 0 and at most 3600")
        }
        guard window.isFinite, window >= 0, window <= 3_600 else { throw ValidationError("--window must be 0...3600 seconds") }
        if let svg { try Self.checkWritable(svg) }
        if tmpfs, workDirectory != nil { throw ValidationError("--tmpfs and --work-dir cannot be given together") }
        let customOnly: [(String, Bool)] = [
            ("--payloads", payloadsOption != nil), ("--urls", urlsOption != nil), ("--bytes", bytesOption != nil),
            ("--media-type", mediaTypeOption != nil), ("--fault-percent", faultPercentOption != nil),
            ("--timeout", timeoutSeconds != nil || deadlineSeconds != nil), ("--window", windowOption != nil),
        ]
        let given = customOnly.filter(\.1).map(\.0)
        if !given.isEmpty, !scenarios.contains(.custom) {
            throw ValidationError("\(given.joined(separator: ", ")) shape\(given.count == 1 ? "s" : "") the custom scenario only: add --scenario custom")
        }
    }

    /// Starts the mock CDN, runs the scenarios, prints the report.
    func run() async throws {
        let selected = scenarios.isEmpty ? ScenarioName.defaultSet : scenarios
        let tools = Tools.locate(directory: binDirectory)
        // Only distinct-urls runs the baselines.
        let needsURLSession = selected.contains(.distinctURLs) && !tls
        let needsCurl = selected.contains(.distinctURLs)
        for path in [tools.fetchAttachment] + (needsURLSession ? [tools.urlsessionFetch] : [])
        where !FileManager.default.isExecutableFile(atPath: path) {
            // Not the command line's fault: no usage text, exit 1.
            let product = URL(fileURLWithPath: path).lastPathComponent
            throw SpawnError(
                description: "\(path) is missing: build it first (swift build --product \(product)), "
                    + "or give the directory it is in with --bin-dir")
        }
        if needsCurl, !FileManager.default.isExecutableFile(atPath: tools.curl) {
            throw SpawnError(description: "\(tools.curl) is missing: distinct-urls runs curl as a baseline (apt-get install curl)")
        }
        let scratch = try makeScratchDirectory()
        let certificate: SelfSignedCertificate?
        do {
            certificate = tls ? try await SelfSignedCertificate.make(in: scratch) : nil
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
        let settings = Settings(
            scale: scale, runs: runs, concurrency: concurrency, batchConcurrency: batchConcurrency, tmpfs: tmpfs,
            trustedCertificate: certificate?.certificatePath, scratch: scratch,
            rssMethod: ChildRunner.gnuTime == nil ? "wait4" : "gnu-time",
            custom: CustomSpike(
                payloads: payloads, urls: urls, bytes: bytes, mediaType: mediaType, faultPercent: faultPercent,
                deadline: payloadTimeout, window: window))
        let startedAt = ISO8601DateFormatter().string(from: Date())
        let server: MockCDNServer
        do {
            server = try await MockCDNServer.start(
                host: "127.0.0.1", port: 0, eventLoopThreads: 2,
                tls: certificate.map { .init(certificateChainPath: $0.certificatePath, privateKeyPath: $0.privateKeyPath) })
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
        let harness = Harness(server: server, tools: tools, settings: settings)
        if ChildRunner.gnuTime == nil {
            harness.log("note: /usr/bin/time (GNU time) is missing: peak RSS comes from wait4 and may include load-test's own peak")
        }
        var reports: [ScenarioReport] = []
        var plotted: (name: ScenarioName, latencies: [Double])?
        do {
            for scenario in selected {
                harness.log("[\(scenario.rawValue)] \(scenario.summary)")
                let (report, latencies) = try await harness.run(scenario)
                reports.append(report)
                if !latencies.isEmpty, plotted == nil || (scenario == .distinctURLs && plotted?.name != .distinctURLs) {
                    plotted = (scenario, latencies)
                }
            }
        } catch {
            try? await server.shutdown()
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
        try? await server.shutdown()
        try? FileManager.default.removeItem(atPath: scratch)

        let checks = reports.flatMap(\.checks)
        let document = LoadTestDocument(
            startedAt: startedAt, settings: settings, machine: .current(), scenarios: reports,
            behaviourPassed: checks.allSatisfy { $0.kind != "behaviour" || $0.passed },
            targetsMet: checks.allSatisfy { $0.kind != "target" || $0.passed })
        let table = MarkdownReport.render(document)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(document)
            FileHandle.standardOutput.write(data)
            FileHandle.standardOutput.write(Data("\n".utf8))
            FileHandle.standardError.write(Data(("\n" + table).utf8))
        } else {
            // Written at once, not through `print`'s buffer: when stdout and stderr go to one file,
            // the log lines below must come after the table, not inside it.
            FileHandle.standardOutput.write(Data((table + "\n").utf8))
        }
        if let svg {
            if let plotted {
                let title = "fetch-attachment latency CDF: \(plotted.name.rawValue), \(plotted.latencies.count) payloads"
                try Data(LatencyPlot.cdf(plotted.latencies, title: title).utf8).write(to: URL(fileURLWithPath: svg))
                harness.log("latency CDF written to \(svg)")
            } else {
                harness.log("no latencies to plot: \(svg) not written")
            }
        }
        throw ExitCode(document.behaviourPassed ? 0 : 1)
    }

    /// Refuses an `--svg` path that cannot be written, before anything runs: its directory must exist
    /// and take a new file, and the path must not be a directory. Opens nothing, so that nothing is
    /// left behind when the run fails.
    static func checkWritable(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw ValidationError("--svg \(path): is a directory") }
            guard access(path, W_OK) == 0 else {
                throw ValidationError("--svg \(path): cannot be written: \(String(cString: strerror(errno)))")
            }
            return
        }
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--svg \(path): no directory \(directory)")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw ValidationError("--svg \(path): cannot write in \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// A fresh directory in the working directory or `--work-dir` (or under /dev/shm with --tmpfs).
    private func makeScratchDirectory() throws -> String {
        let base = tmpfs ? "/dev/shm" : (workDirectory ?? FileManager.default.currentDirectoryPath)
        var template = Array((base + "/load-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ValidationError("cannot create a scratch directory under \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }
}

/// `load-test hardlink-floor`: the bare floor of the warm-cache scenario, run as a child and measured
/// like fetch-attachment.
struct HardlinkFloorCommand: ParsableCommand {
    /// Hidden from the help.
    static let configuration = CommandConfiguration(
        commandName: "hardlink-floor",
        abstract: "Create COUNT hard links to SOURCE in a fresh directory DIR (the warm-cache floor).",
        shouldDisplay: false
    )

    /// Links to make.
    @Option(help: "How many links.")
    var count: Int

    /// The file to link.
    @Option(help: "The file to link.")
    var source: String

    /// The directory (created; must not exist yet).
    @Option(help: "A directory to create for the links.")
    var dir: String

    /// Gives up after this many seconds.
    @Option(name: .customLong("time-limit"), help: "Stop after this many seconds.")
    var timeLimit: Double = 600

    /// Checks the numbers.
    func validate() throws {
        guard (0...10_000_000).contains(count) else { throw ValidationError("--count must be between 0 and 10000000") }
    }

    /// Makes the links; exit 0 when all were made.
    func run() throws {
        guard mkdir(dir, 0o755) == 0 else {
            throw ValidationError("cannot create \(dir): \(String(cString: strerror(errno)))")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(timeLimit * 1_000)))
        var made = 0
        var failed = 0
        var current = source
        var copies = 0
        for index in 0..<count {
            if index % 1_024 == 0, clock.now > deadline { break }
            let target = dir + "/\(index).jpg"
            if link(current, target) == 0 {
                made += 1
            } else if errno == EMLINK {
                // ext4 allows 65,000 links to one inode: do what the cache does, a fresh copy to link.
                copies += 1
                current = dir + "/.source-\(copies)"
                if (try? FileManager.default.copyItem(atPath: source, toPath: current)) != nil, link(current, target) == 0 {
                    made += 1
                } else {
                    failed += 1
                }
            } else {
                failed += 1
            }
        }
        FileHandle.standardError.write(Data("hardlink-floor: \(made) linked, \(failed) failed of \(count)\n".utf8))
        throw ExitCode(made == count ? 0 : 1)
    }
}
