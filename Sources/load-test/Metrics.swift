import Foundation
import Histogram
import MockCDN

/// Latency percentiles of one run, in milliseconds (from the `elapsed_ms` of fetch-attachment's JSON lines),
/// from an HdrHistogram of microseconds (three significant digits).
struct LatencySummary: Codable, Sendable {
    /// Median.
    var p50: Double
    /// 90th percentile.
    var p90: Double
    /// 99th percentile.
    var p99: Double
    /// The slowest payload.
    var max: Double

    /// The percentiles of `values`; nil when empty.
    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let histogram = Self.histogram(values)
        p50 = Self.percentile(histogram, 0.50)
        p90 = Self.percentile(histogram, 0.90)
        p99 = Self.percentile(histogram, 0.99)
        max = Double(histogram.max) / 1_000
    }

    /// The milliseconds of `values`, recorded as microseconds (values below 1 µs count as 1 µs).
    static func histogram(_ values: [Double]) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        for value in values { _ = histogram.record(UInt64(Swift.max(1, Swift.min(3_600_000_000, (value * 1_000).rounded())))) }
        return histogram
    }

    /// The percentile `p` (0…1), in milliseconds.
    static func percentile(_ histogram: Histogram<UInt64>, _ p: Double) -> Double {
        Double(histogram.valueAtPercentile(p * 100)) / 1_000
    }
}

/// Everything measured for one contender in one run.
struct RunMetrics: Codable, Sendable {
    /// "fetch-attachment", "fetch-attachment --no-cache", "curl", "urlsession", "hardlink-floor", or
    /// "fetch-attachment (warm-up)".
    var contender: String
    /// 1-based run number.
    var run: Int
    /// Payloads (or URLs, or links) handed to the child.
    var payloads: Int
    /// The child's own measurement (wall, CPU, peak RSS, exit status).
    var child: ChildMeasurement
    /// Payloads with a successful result: for fetch-attachment the outcome expected (or "attached" where
    /// none is), for a baseline a file written.
    var succeeded: Int
    /// Payloads per second of wall time; nil when no payload succeeded (a run that did not work has no
    /// throughput: the table shows "–" and the ratios leave it out).
    var payloadsPerSecond: Double?
    /// Body bytes delivered into the output directory (attachment sizes: a payload served from a
    /// cache counts in full, though the origin sent nothing for it; see `originBytesSent`).
    var bytesDelivered: Int
    /// bytesDelivered / wall time, in MB/s (10^6 bytes): the table's "out MB/s", not origin egress.
    var megabytesPerSecond: Double?
    /// Latency percentiles (fetch-attachment only).
    var latencyMs: LatencySummary?
    /// Outcomes: "attached" or the reason code for fetch-attachment; "ok"/"failed" for the baselines.
    var outcomes: [String: Int]
    /// Outcomes that differ from what the scenario expects for that payload (fetch-attachment only, when expected).
    var mismatches: Int?
    /// The first mismatch, e.g. "#12 expected deadline, got network (…)".
    var firstMismatch: String?
    /// Outcomes whose elapsed_ms exceeds the deadline + 100 ms (fetch-attachment only, when a deadline is set).
    var deadlineViolations: Int?
    /// Payloads for which no outcome line came back (fetch-attachment), or no file was written (baselines).
    var missing: Int
    /// Requests the mock CDN received during the run.
    var originRequests: Int
    /// Peak concurrently open connections at the mock CDN during the run.
    var peakOriginConnections: Int
    /// Body bytes the mock CDN sent during the run.
    var originBytesSent: Int
    /// The most requests any single URL (path + query) received.
    var maxRequestsPerURL: Int
    /// The last lines of the child's standard error (its summary, or why it failed).
    var stderrTail: String
    /// Requests the mock CDN received for each URL the scenario tracks (smoke: its 10 shared URLs,
    /// then its 7 faults in `Fault.allCases` order).
    var trackedURLRequests: [Int]? = nil

    /// Peak RSS in MB (10^6 bytes).
    var peakRSSMegabytes: Double { Double(child.peakRSSBytes) / 1e6 }
}

/// One line of `fetch-attachment --batch --json` output (only the fields the load test reads).
struct OutcomeLine: Decodable {
    /// The payload's 0-based line number in the batch file.
    var index: Int
    /// "attached" or "original".
    var status: String
    /// The reason code when the status is "original".
    var reason: String?
    /// libcurl's message or other detail.
    var detail: String?
    /// Milliseconds from the moment the payload was handed in.
    var elapsedMs: Double
    /// The attached files.
    var attachments: [AttachmentLine]?

    /// One attached file.
    struct AttachmentLine: Decodable {
        /// Its size in bytes.
        var bytes: Int?
        /// Where it was written.
        var path: String?
    }

    enum CodingKeys: String, CodingKey {
        case index, status, reason, detail, attachments
        case elapsedMs = "elapsed_ms"
    }
}

/// What was read from fetch-attachment's JSON lines.
struct ParsedOutcomes {
    /// Counts by "attached" or reason code.
    var outcomes: [String: Int] = [:]
    /// Latency of every outcome, in input order of arrival.
    var latencies: [Double] = []
    /// Sum of attachment sizes.
    var bytes = 0
    /// Outcomes that are the expectation (or "attached" where there is none).
    var successes = 0
    /// Outcomes that differ from the expectation.
    var mismatches = 0
    /// The first of them, described.
    var firstMismatch: String?
    /// Outcomes later than deadline + 100 ms.
    var deadlineViolations = 0
    /// Payloads without an outcome line.
    var missing = 0
    /// One attached file's path (to be used as the hard-link floor's source).
    var someAttachmentPath: String?

    /// Reads the JSON lines of `file` for `count` payloads. `expected[i]` is "attached", a reason code,
    /// or nil for no expectation; `deadlineMs` enables the deadline check.
    static func read(file: String, count: Int, expected: [String?], deadlineMs: Double?) -> ParsedOutcomes {
        var result = ParsedOutcomes()
        guard let data = FileManager.default.contents(atPath: file) else {
            result.missing = count
            return result
        }
        let decoder = JSONDecoder()
        var seen = [Bool](repeating: false, count: count)
        result.latencies.reserveCapacity(count)
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard let outcome = try? decoder.decode(OutcomeLine.self, from: Data(line)) else {
                result.outcomes["(unparsable line)", default: 0] += 1
                continue
            }
            let key = outcome.status == "attached" ? "attached" : (outcome.reason ?? "original")
            result.outcomes[key, default: 0] += 1
            result.latencies.append(outcome.elapsedMs)
            for attachment in outcome.attachments ?? [] {
                result.bytes += attachment.bytes ?? 0
                if result.someAttachmentPath == nil { result.someAttachmentPath = attachment.path }
            }
            if let deadlineMs, outcome.elapsedMs > deadlineMs + 100 { result.deadlineViolations += 1 }
            guard outcome.index >= 0, outcome.index < count else { continue }
            seen[outcome.index] = true
            let want = outcome.index < expected.count ? expected[outcome.index] : nil
            if key == (want ?? "attached") { result.successes += 1 }
            if let want, want != key {
                result.mismatches += 1
                if result.firstMismatch == nil {
                    result.firstMismatch = "#\(outcome.index) expected \(want), got \(key)"
                        + (outcome.detail.map { " (\($0))" } ?? "")
                }
            }
        }
        result.missing = seen.lazy.filter { !$0 }.count
        return result
    }
}

/// Median and range of one metric over several runs.
struct Spread: Codable, Sendable {
    /// The median (mean of the middle two for an even count).
    var median: Double
    /// The smallest value.
    var min: Double
    /// The largest value.
    var max: Double

    /// The spread of `values`; nil when empty.
    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }
}

/// The latencies of the run whose wall time is the median of a contender's runs (the lower of
/// the middle two for an even count), so that the CDF shows the run the table's medians describe
/// rather than whichever came first.
struct MedianRunLatencies {
    private var runs: [(wall: Double, latencies: [Double])] = []

    /// Records one run.
    mutating func add(_ latencies: [Double], wall: Double) {
        runs.append((wall, latencies))
    }

    /// The median run's latencies; none before a run was added.
    var latencies: [Double] {
        let byWall = runs.sorted { $0.wall < $1.wall }
        return byWall.isEmpty ? [] : byWall[(byWall.count - 1) / 2].latencies
    }
}

/// The medians and ranges of one contender's runs.
struct ContenderSummary: Codable, Sendable {
    /// Runs summarised.
    var runs: Int
    /// Wall time, seconds.
    var wallSeconds: Spread?
    /// Payloads per second, over the runs with a successful result (nil when none had one).
    var payloadsPerSecond: Spread?
    /// MB/s written to the output directory ("out MB/s").
    var megabytesPerSecond: Spread?
    /// Latency p50, ms.
    var p50Ms: Spread?
    /// Latency p90, ms.
    var p90Ms: Spread?
    /// Latency p99, ms.
    var p99Ms: Spread?
    /// Latency max, ms.
    var maxMs: Spread?
    /// Origin requests.
    var originRequests: Spread?
    /// Body MB (10^6 bytes) the mock CDN sent ("origin MB"); nil in documents written before it was kept.
    var originMegabytes: Spread?
    /// Peak origin connections.
    var peakOriginConnections: Spread?
    /// CPU seconds (user + system).
    var cpuSeconds: Spread?
    /// Peak RSS, MB.
    var peakRSSMegabytes: Spread?

    /// Summarises `runs`.
    init(_ runs: [RunMetrics]) {
        self.runs = runs.count
        wallSeconds = Spread(runs.map(\.child.wallSeconds))
        // Runs without a successful result have no throughput: with none that worked, there is none.
        payloadsPerSecond = Spread(runs.compactMap(\.payloadsPerSecond))
        megabytesPerSecond = Spread(runs.compactMap(\.megabytesPerSecond))
        p50Ms = Spread(runs.compactMap { $0.latencyMs?.p50 })
        p90Ms = Spread(runs.compactMap { $0.latencyMs?.p90 })
        p99Ms = Spread(runs.compactMap { $0.latencyMs?.p99 })
        maxMs = Spread(runs.compactMap { $0.latencyMs?.max })
        originRequests = Spread(runs.map { Double($0.originRequests) })
        originMegabytes = Spread(runs.map { Double($0.originBytesSent) / 1e6 })
        peakOriginConnections = Spread(runs.map { Double($0.peakOriginConnections) })
        cpuSeconds = Spread(runs.map(\.child.cpuSeconds))
        peakRSSMegabytes = Spread(runs.map(\.peakRSSMegabytes))
    }
}

extension MockCDNStats {
    /// The most requests any single URL received.
    var maxRequestsPerURL: Int { requestsPerURL.values.max() ?? 0 }
}
