import Foundation
import MockCDN

/// Where the children write: stdout, stderr and output directory of one run.
struct RunDirectory: Sendable {
    let path: String
    var output: String { path + "/out" }
    var stdout: String { path + "/stdout.txt" }
    var stderr: String { path + "/stderr.txt" }

    init(_ path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Deletes everything the run wrote.
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// One contender of a scenario: its name in the report and how to run it once.
struct Contender: Sendable {
    /// The name in the report ("fetch-attachment", "curl", …).
    var name: String
    /// Runs the contender once: the run's number and a fresh directory, removed afterwards.
    var runOnce: @Sendable (_ run: Int, _ directory: RunDirectory) async throws -> ContenderRun

    /// The name as a directory name.
    var directoryName: String {
        String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }
}

/// What one run of a contender gave.
struct ContenderRun: Sendable {
    /// The measurement.
    var metrics: RunMetrics
    /// Each payload's latency in ms (fetch-attachment only; none for a baseline).
    var latencies: [Double]
    /// The command line.
    var command: String
}

/// One contender's runs, as the run loop collects them.
struct ContenderResults: Sendable {
    /// The contender's name.
    let name: String
    /// Every run, in order.
    private(set) var runs: [RunMetrics] = []
    /// The first run's command line.
    private(set) var command = ""
    /// The latencies of the run with the median wall time.
    private(set) var plotted = MedianRunLatencies()

    init(name: String) { self.name = name }

    mutating func add(_ run: ContenderRun) {
        if runs.isEmpty { command = run.command }
        runs.append(run.metrics)
        if !run.latencies.isEmpty { plotted.add(run.latencies, wall: run.metrics.child.wallSeconds) }
    }

    /// Medians and ranges.
    var summary: ContenderSummary { ContenderSummary(runs) }

    /// The contender as the report shows it.
    var report: ContenderReport { ContenderReport(name: name, command: command, runs: runs, summary: summary) }
}

/// Runs scenarios against one in-process mock CDN, one child at a time.
struct Harness: Sendable {
    let server: MockCDNServer
    let tools: Tools
    let settings: Settings

    /// Prints a progress line to standard error.
    func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// `count` × scale, at least 1.
    func scaled(_ count: Int) -> Int {
        max(1, Int((Double(count) * settings.scale).rounded()))
    }

    /// Runs one scenario. The second value is the latencies of fetch-attachment's run with the median wall time
    /// (for the CDF).
    func run(_ scenario: ScenarioName) async throws -> (ScenarioReport, [Double]) {
        let directory = settings.scratch + "/" + scenario.rawValue
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        switch scenario {
        case .sameURL: return try await sameURL(in: directory)
        case .distinctURLs: return try await distinctURLs(in: directory)
        case .videos: return try await videos(in: directory)
        case .faultMix: return try await faultMix(in: directory)
        case .warmCache: return try await warmCache(in: directory)
        case .smoke: return try await smoke(in: directory)
        case .custom: return try await custom(in: directory)
        }
    }

    /// The run loop every scenario uses: runs `numbers` (default 1 through `--runs`), and in each
    /// every contender in turn (interleaved, so that slow drifts of the machine hit every contender
    /// alike), each in a fresh directory under `directory`, removed after the run.
    func measure(
        _ contenders: [Contender], runs numbers: ClosedRange<Int>? = nil, in directory: String
    ) async throws -> [ContenderResults] {
        var results = contenders.map { ContenderResults(name: $0.name) }
        for run in numbers ?? 1...settings.runs {
            for (index, contender) in contenders.enumerated() {
                let runDirectory = try RunDirectory(directory + "/run-\(run)-\(contender.directoryName)")
                defer { runDirectory.remove() }
                results[index].add(try await contender.runOnce(run, runDirectory))
            }
        }
        return results
    }
}
