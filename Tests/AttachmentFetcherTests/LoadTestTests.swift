import Foundation
import MockCDN
import Testing

/// The parts of `load-test --json` that the smoke test reads (a mirror of the executable's own types,
/// which a test target cannot import).
private struct LoadTestDocument: Decodable {
    struct Scenario: Decodable {
        var name: String
        var payloads: Int
        var contenders: [Contender]
        var checks: [Check]
        var notes: [String]
    }

    struct Contender: Decodable {
        var name: String
        var command: String
        var runs: [Run]
    }

    struct Run: Decodable {
        var payloads: Int
        var child: Child
        var outcomes: [String: Int]
        var mismatches: Int?
        var firstMismatch: String?
        var deadlineViolations: Int?
        var missing: Int
        var originRequests: Int
        var trackedURLRequests: [Int]?
        var latencyMs: Latency?
    }

    struct Child: Decodable {
        var exitStatus: Int32
        var timedOut: Bool
        var wallSeconds: Double
        var cpuSeconds: Double?
        var peakRSSBytes: Int
    }

    struct Latency: Decodable {
        var p50: Double
        var max: Double
    }

    struct Check: Decodable {
        var name: String
        var kind: String
        var value: String
        var passed: Bool
    }

    var tool: String
    var scenarios: [Scenario]
    var behaviourPassed: Bool
}

/// Runs the built `load-test` with its CI scenario and checks behaviour only: counts, outcomes by
/// reason, deadlines and origin requests, never speed. One at a time: each checks a deadline of
/// its children, which its neighbours' load would blur.
@Suite("load-test: the smoke scenario", .serialized, .timeLimit(.minutes(2)))
struct LoadTestTests {
    /// The outcomes the smoke scenario's payloads call for, one fault or special payload each.
    private static let smokeOutcomes = [
        "attached": 92, "deadline": 1, "http-status": 2, "network": 2, "unsupported-type": 1,
        "internal-push": 1, "invalid-url": 1,
    ]

    /// Runs `load-test --scenario smoke --json` with `options` and reads its document.
    private func runSmoke(_ options: [String] = []) async throws -> LoadTestDocument {
        let result = try await CommandRunner.run(
            "load-test", ["--scenario", "smoke", "--json"] + options, timeout: .seconds(90))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        return try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
    }

    @Test("smoke: 100 payloads over 10 URLs plus faults give the expected outcomes, in time, one request per URL")
    func smoke() async throws {
        let document = try await runSmoke()
        #expect(document.tool == "load-test")
        let scenario = try #require(document.scenarios.first { $0.name == "smoke" })
        #expect(scenario.payloads == 100)
        let fetchAttachment = try #require(scenario.contenders.first { $0.name == "fetch-attachment" })
        #expect(fetchAttachment.runs.count == 1)
        let run = try #require(fetchAttachment.runs.first)

        // fetch-attachment ran to the end: exit 1 because some outcomes are (rightly) the original.
        #expect(run.child.timedOut == false)
        #expect(run.child.exitStatus == 1)
        #expect(run.payloads == 100)
        #expect(run.missing == 0)

        // Every payload got the outcome its fault calls for.
        #expect(run.outcomes == Self.smokeOutcomes)
        #expect(run.mismatches == 0, "\(run.firstMismatch ?? "")")

        // The deadline (2 s) holds for every outcome, the stalled one included.
        #expect(run.deadlineViolations == 0)
        let latency = try #require(run.latencyMs)
        #expect(latency.max <= 2_100)
        #expect(latency.max >= 1_900, "the stalled download must have waited for its deadline")

        // Coalescing: 9 payloads per shared URL, one request each; then one for each of the 7 faults
        // (stall, reset, truncate, 404, 500, HTML as JPEG, lying type); 20 requests in all (3 for the
        // redirect chain; none for the internal push or the file:// URL).
        #expect(run.trackedURLRequests == [Int](repeating: 1, count: 10) + [1, 1, 1, 1, 1, 1, 1])
        #expect(run.originRequests == 20)

        // The measurement itself is there.
        #expect(run.child.wallSeconds > 0)
        #expect(run.child.peakRSSBytes > 0)
        for check in scenario.checks where check.kind == "behaviour" {
            #expect(check.passed, "\(check.name): \(check.value)")
        }
        #expect(document.behaviourPassed)
    }

    @Test(
        "smoke over HTTPS (--tls): the same outcomes over HTTP/2, the reset and truncated streams tried three times",
        .enabled(if: SelfSignedCertificate.canBeMade))
    func smokeOverTLS() async throws {
        let document = try await runSmoke(["--tls"])
        let run = try #require(document.scenarios.first { $0.name == "smoke" }?.contenders.first?.runs.first)
        #expect(run.missing == 0)
        #expect(run.outcomes == Self.smokeOutcomes)
        #expect(run.mismatches == 0, "\(run.firstMismatch ?? "")")
        #expect(run.deadlineViolations == 0)
        // As over http, with two more tries each for the reset and the truncated stream: 24 in all.
        #expect(run.trackedURLRequests == [Int](repeating: 1, count: 10) + [1, 3, 3, 1, 1, 1, 1])
        #expect(run.originRequests == 24)
        #expect(document.behaviourPassed)
    }

    @Test("custom: a spike spread over a window through a FIFO keeps every deadline and shares each URL's download")
    func customWindow() async throws {
        let result = try await CommandRunner.run(
            "load-test",
            ["--scenario", "custom", "--payloads", "40", "--urls", "2", "--bytes", "20000", "--media-type", "gif",
             "--fault-percent", "10", "--timeout", "1", "--window", "1", "--json"],
            timeout: .seconds(90))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        let document = try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
        let run = try #require(document.scenarios.first { $0.name == "custom" }?.contenders.first?.runs.first)
        #expect(run.payloads == 40)
        #expect(run.missing == 0)
        #expect(run.deadlineViolations == 0)
        // Faults at every 10th payload: a stall, a reset, a truncation and a 404, in turn.
        #expect(run.outcomes == ["attached": 36, "deadline": 1, "network": 2, "http-status": 1])
        // Two shared URLs, one request each, plus one per fault.
        #expect(run.originRequests == 6)
        // Spread over a second: the batch took at least that long.
        #expect(run.child.wallSeconds >= 1)
        #expect(document.behaviourPassed)
    }

    @Test(
        "distinct-urls: fetch-attachment runs with the CLI's defaults (a cache) and with --no-cache, on disk under --work-dir, both against curl",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func distinctURLsWithAndWithoutCache() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("work-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Proxies that lead nowhere: the baselines would obey them, fetch-attachment does not; no child sees them.
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let nowhere = "http://127.0.0.1:\(closed.port)"
        let proxies = [
            "http_proxy": nowhere, "HTTP_PROXY": nowhere, "https_proxy": nowhere, "ALL_PROXY": nowhere, "all_proxy": nowhere,
        ]
        let result = try await CommandRunner.run(
            "load-test", ["--scenario", "distinct-urls", "--scale", "0.01", "--work-dir", work, "--json"],
            environment: proxies, timeout: .seconds(90))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        let document = try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
        let scenario = try #require(document.scenarios.first { $0.name == "distinct-urls" })
        #expect(scenario.payloads == 20)
        #expect(scenario.contenders.map(\.name) == ["fetch-attachment", "fetch-attachment --no-cache", "curl", "urlsession"])

        let cached = try #require(scenario.contenders.first { $0.name == "fetch-attachment" })
        let uncached = try #require(scenario.contenders.first { $0.name == "fetch-attachment --no-cache" })
        // The default path keeps a cache, made for the run inside the scratch directory under --work-dir
        // (the output's file system); the other runs without one.
        #expect(cached.command.contains("--cache-dir \(work)/load-test-"))
        #expect(!cached.command.contains("--no-cache"))
        #expect(uncached.command.contains("--no-cache"))
        #expect(!uncached.command.contains("--cache-dir"))
        for contender in [cached, uncached] {
            let run = try #require(contender.runs.first)
            #expect(contender.runs.count == 1)
            #expect(run.missing == 0)
            #expect(run.outcomes == ["attached": 20], "\(contender.name)")
            #expect(run.mismatches == 0, "\(run.firstMismatch ?? "")")
            // Distinct URLs: one request each, cache or not.
            #expect(run.originRequests == 20, "\(contender.name)")
        }
        for name in ["curl", "urlsession"] {
            let baseline = try #require(scenario.contenders.first { $0.name == name }?.runs.first)
            #expect(baseline.missing == 0, "\(name) went through the environment's proxy")
            #expect(baseline.originRequests == 20, "\(name)")
        }

        // Both runs of fetch-attachment are reported as ratios to the curl run of the same invocation.
        for name in ["fetch-attachment", "fetch-attachment --no-cache"] {
            let check = try #require(scenario.checks.first { $0.name == "throughput \(name) / curl" })
            #expect(check.kind == "target")
            #expect(check.value.hasSuffix("×"), "\(check.value)")
            #expect(scenario.notes.contains { $0.hasPrefix("\(name) / curl (medians): throughput ") })
        }
        #expect(document.behaviourPassed)
        // The report names the product, never "ours": the document, and the table on standard error.
        #expect(Self.firstPerson(in: result.stdout) == nil, "\(Self.firstPerson(in: result.stdout) ?? "")")
        #expect(Self.firstPerson(in: result.stderr) == nil, "\(Self.firstPerson(in: result.stderr) ?? "")")
        // The scratch directory is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    @Test("warm-cache: fetch-attachment's warm runs, its warm-up and its rate against the hard-link floor are named for the product")
    func warmCacheNames() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("work-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try await CommandRunner.run(
            "load-test", ["--scenario", "warm-cache", "--scale", "0.001", "--work-dir", work, "--json"],
            timeout: .seconds(90))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        let document = try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
        let scenario = try #require(document.scenarios.first { $0.name == "warm-cache" })
        #expect(scenario.payloads == 100)
        #expect(scenario.contenders.map(\.name) == ["fetch-attachment", "hardlink-floor", "fetch-attachment (warm-up)"])
        let rate = try #require(scenario.checks.first { $0.name == "fetch-attachment rate / hard-link floor" })
        #expect(rate.kind == "target")
        #expect(scenario.notes.contains { $0.hasPrefix("fetch-attachment: ") && $0.contains("; fetch-attachment = ") })
        #expect(Self.firstPerson(in: result.stdout) == nil, "\(Self.firstPerson(in: result.stdout) ?? "")")
        #expect(Self.firstPerson(in: result.stderr) == nil, "\(Self.firstPerson(in: result.stderr) ?? "")")
    }

    /// The first line of `text` that speaks in the first person ("ours", "our", "we", "us"), or nil.
    private static func firstPerson(in text: String) -> String? {
        text.split(whereSeparator: \.isNewline).first {
            $0.range(of: #"(?i)\b(ours|our|we|us)\b"#, options: .regularExpression) != nil
        }.map(String.init)
    }

    @Test("The custom scenario's options without --scenario custom are refused, not ignored")
    func customOptionsNeedCustom() async throws {
        let refused = try await CommandRunner.run("load-test", ["--scenario", "smoke", "--payloads", "50", "--window", "2"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--payloads, --window shape the custom scenario only: add --scenario custom"), "\(refused.stderr)")
        // A tool that is not built is no bad command line: exit 1, no usage.
        let missing = try await CommandRunner.run("load-test", ["--scenario", "smoke", "--bin-dir", "/nonexistent"])
        #expect(missing.status == 1 && !missing.stderr.contains("Usage:"), "\(missing.stderr)")
        #expect(missing.stderr.contains("/nonexistent/fetch-attachment is missing: build it first"), "\(missing.stderr)")
        #expect(missing.stderr.contains("--bin-dir"), "\(missing.stderr)")
        // Bad values are refused before anything runs, with the command line's exit status.
        let zero = try await CommandRunner.run("load-test", ["--scenario", "smoke", "--batch-concurrency", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--batch-concurrency must be between 1"), "\(zero.stderr)")
        let svg = try await CommandRunner.run("load-test", ["--scenario", "smoke", "--svg", "/nonexistent/dir/cdf.svg"])
        #expect(svg.status == 64 && svg.stderr.contains("--svg /nonexistent/dir/cdf.svg: no directory /nonexistent/dir"), "\(svg.stderr)")
        #expect(!svg.stderr.contains("[smoke]"), "the run started: \(svg.stderr)")
        let directory = try await CommandRunner.run("load-test", ["--scenario", "smoke", "--svg", "/tmp"])
        #expect(directory.status == 64 && directory.stderr.contains("is a directory"), "\(directory.stderr)")
    }

    @Test("--help shows --bin-dir, and says --scale leaves custom as it is")
    func help() async throws {
        let help = try await CommandRunner.run("load-test", ["run", "--help"])
        #expect(help.status == 0)
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("--bin-dir <dir> Take fetch-attachment"), "\(help.stdout)")
        #expect(text.contains("smoke and custom are excepted"), "\(help.stdout)")
    }

    @Test("custom: --fault-percent makes exactly that share of the payloads faults, and every one of --urls is fetched")
    func customFaultShare() async throws {
        let result = try await CommandRunner.run(
            "load-test",
            ["--scenario", "custom", "--payloads", "20", "--urls", "10", "--bytes", "5000", "--fault-percent", "10",
             "--timeout", "1", "--json"],
            timeout: .seconds(60))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        let document = try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
        let run = try #require(document.scenarios.first { $0.name == "custom" }?.contenders.first?.runs.first)
        // 2 faults (a stall past the deadline, a reset), 18 asset payloads over all 10 URLs.
        #expect(run.outcomes == ["attached": 18, "deadline": 1, "network": 1], "\(run.outcomes)")
        #expect(run.originRequests == 12, "10 URLs, one request each, and 2 faults")
        // The table names what its columns measure, and shows no scale for a scenario it does not apply to.
        #expect(result.stderr.contains("| out MB/s |") && result.stderr.contains("| origin MB |"), "\(result.stderr)")
        #expect(!result.stderr.contains("scale 1"), "\(result.stderr)")
    }

    @Test("--svg: the latency CDF is drawn from the run with the median wall time, the run the table's medians describe")
    func cdfOfMedianRun() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cdf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = directory.appendingPathComponent("cdf.svg").path
        let result = try await CommandRunner.run(
            "load-test",
            ["--scenario", "custom", "--payloads", "30", "--urls", "30", "--bytes", "20000", "--runs", "3",
             "--svg", svg, "--json"],
            timeout: .seconds(90))
        #expect(result.status == 0, "load-test failed: \(result.stderr)")
        let document = try JSONDecoder().decode(LoadTestDocument.self, from: Data(result.stdout.utf8))
        let runs = try #require(document.scenarios.first { $0.name == "custom" }?.contenders.first?.runs)
        try #require(runs.count == 3)
        let median = try #require(runs.sorted { $0.child.wallSeconds < $1.child.wallSeconds }[1].latencyMs)
        // The plot labels its p50 as the table does: whole milliseconds from 100 ms, else one decimal.
        let p50 = median.p50 >= 100 || median.p50 == median.p50.rounded()
            ? String(format: "%.0f", median.p50) : String(format: "%.1f", median.p50)
        let plot = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(plot.contains(">p50 \(p50) ms<"), "the plot's p50 is not the median run's \(p50) ms")
        #expect(plot.contains("custom, 30 payloads"))
    }
}
