import Foundation
import MockCDN

/// How `fetch-attachment` is told to cache.
enum CacheMode: Sendable {
    /// `--no-cache`.
    case none
    /// A fresh cache directory in each run's directory: cold, on the output's file system (the CLI's
    /// default behaviour, a cache directory, without touching the user's own).
    case perRun
    /// One cache directory for every run (kept warm between runs).
    case shared(String)

    /// The arguments for a run in `directory`.
    func arguments(in directory: RunDirectory) -> [String] {
        switch self {
        case .none: ["--no-cache"]
        case .perRun: ["--cache-dir", directory.path + "/cache"]
        case .shared(let path): ["--cache-dir", path]
        }
    }
}

/// How `fetch-attachment --batch` runs in a scenario.
struct FetchAttachmentInvocation: Sendable {
    /// The payloads, with the outcome each should get.
    var payloads: [PlannedPayload]
    /// The batch file (all of `payloads`, a line each).
    var batch: String
    /// How it caches.
    var cache: CacheMode
    /// Each payload's `--deadline`, in seconds.
    var deadline: Double
    /// The child is killed after this long.
    var timeout: Duration
    /// Paths whose origin requests are counted one by one.
    var trackedURLs: [String] = []
    /// With a window, the payloads go through a FIFO, a line at a time, spread evenly over it.
    var window: Double? = nil
}

extension Harness {
    /// `fetch-attachment --batch` as a contender.
    func fetchAttachmentContender(
        _ invocation: FetchAttachmentInvocation, name: String = "fetch-attachment"
    ) -> Contender {
        Contender(name: name) { run, directory in
            try await runFetchAttachment(invocation, run: run, in: directory, label: name)
        }
    }

    /// A baseline as a contender: `command` for each run's directory; its files are counted in the
    /// run's output directory (each `linkSize` bytes when given: hard links of one source).
    func baseline(
        _ name: String, count: Int, linkSize: Int? = nil,
        command: @escaping @Sendable (RunDirectory) throws -> ChildCommand
    ) -> Contender {
        Contender(name: name) { run, directory in
            let command = try command(directory)
            let metrics = try await runBaseline(name, run: run, command: command, count: count, in: directory, linkSize: linkSize)
            return ContenderRun(metrics: metrics, latencies: [], command: command.displayString)
        }
    }

    /// `curl --parallel` writing each of `urls` to a file of its own.
    func curl(_ urls: [String], timeout: Duration) -> Contender {
        baseline("curl", count: urls.count) { directory in
            try FileManager.default.createDirectory(atPath: directory.output, withIntermediateDirectories: true)
            let config = directory.path + "/curl.config"
            var text = ""
            for (index, url) in urls.enumerated() {
                text += "url = \"\(url)\"\noutput = \"\(directory.output)/\(index).jpg\"\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: config))
            return ChildCommand(
                executable: tools.curl,
                arguments: [
                    "--parallel", "--parallel-max", String(min(settings.concurrency, 300)), "--silent", "--show-error",
                    "--fail", "--config", config,
                ] + (settings.trustedCertificate.map { ["--cacert", $0] } ?? []),
                stdoutPath: directory.stdout, stderrPath: directory.stderr, timeout: timeout)
        }
    }

    /// The URLSession baseline (`urlsession-fetch`) on the URLs listed in `urlFile`.
    func urlsession(urlFile: String, count: Int, timeout: Duration) -> Contender {
        baseline("urlsession", count: count) { directory in
            ChildCommand(
                executable: tools.urlsessionFetch,
                arguments: ["--concurrency", String(settings.concurrency), "--output-dir", directory.output, urlFile],
                stdoutPath: directory.stdout, stderrPath: directory.stderr, timeout: timeout)
        }
    }

    /// `load-test hardlink-floor`: `count` hard links to `source` (of `size` bytes).
    func hardlinkFloor(count: Int, source: String, size: Int, timeout: Duration) -> Contender {
        baseline("hardlink-floor", count: count, linkSize: size) { directory in
            ChildCommand(
                executable: tools.loadTest,
                arguments: ["hardlink-floor", "--count", String(count), "--source", source, "--dir", directory.output],
                stdoutPath: directory.stdout, stderrPath: directory.stderr, timeout: timeout)
        }
    }

    /// Runs `fetch-attachment --batch` once and reads its JSON lines.
    func runFetchAttachment(
        _ invocation: FetchAttachmentInvocation, run: Int, in directory: RunDirectory, label: String
    ) async throws -> ContenderRun {
        let payloads = invocation.payloads
        let input = try invocation.window.map {
            try SpreadFeeder.start(payloads.map(\.json), over: $0, in: directory.path)
        } ?? invocation.batch
        let command = ChildCommand(
            executable: tools.fetchAttachment,
            arguments: [
                "--batch", input, "--json", "--output-dir", directory.output, "--timeout", String(invocation.deadline),
                // The mock CDN is on loopback, which the default address policy refuses.
                "--allow-private-networks",
            ] + invocation.cache.arguments(in: directory)
                + (settings.batchConcurrency.map { ["--concurrency", String($0)] } ?? [])
                + (settings.trustedCertificate.map { ["--cacert", $0] } ?? []),
            stdoutPath: directory.stdout, stderrPath: directory.stderr, timeout: invocation.timeout)
        server.resetStats()
        let child = try await ChildRunner.run(command, scratch: settings.scratch)
        let stats = server.stats()
        let parsed = ParsedOutcomes.read(
            file: directory.stdout, count: payloads.count, expected: payloads.map(\.expected),
            deadlineMs: invocation.deadline * 1000)
        var metrics = RunMetrics(
            contender: label, run: run, payloads: payloads.count, child: child, succeeded: parsed.successes,
            payloadsPerSecond: parsed.successes > 0 ? Double(payloads.count) / child.wallSeconds : nil,
            bytesDelivered: parsed.bytes,
            megabytesPerSecond: parsed.successes > 0 ? Double(parsed.bytes) / 1e6 / child.wallSeconds : nil,
            latencyMs: LatencySummary(parsed.latencies),
            outcomes: parsed.outcomes, mismatches: parsed.mismatches, firstMismatch: parsed.firstMismatch,
            deadlineViolations: parsed.deadlineViolations, missing: parsed.missing, originRequests: stats.requests,
            peakOriginConnections: stats.peakConnections, originBytesSent: stats.bytesSent,
            maxRequestsPerURL: stats.maxRequestsPerURL, stderrTail: Self.tail(of: directory.stderr))
        if !invocation.trackedURLs.isEmpty {
            metrics.trackedURLRequests = invocation.trackedURLs.map { stats.requestsPerURL[$0] ?? 0 }
        }
        logRun(metrics)
        return ContenderRun(metrics: metrics, latencies: parsed.latencies, command: command.displayString)
    }

    /// Runs a baseline (curl, urlsession-fetch, the hard-link floor) once and counts the files it wrote.
    func runBaseline(
        _ name: String, run: Int, command: ChildCommand, count: Int, in directory: RunDirectory, linkSize: Int? = nil
    ) async throws -> RunMetrics {
        server.resetStats()
        let child = try await ChildRunner.run(command, scratch: settings.scratch)
        let stats = server.stats()
        var files = 0
        var bytes = 0
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.output)) ?? []
        if let linkSize {
            // Links of one inode (or a few, past ext4's 65,000): count them, and size them by the source.
            files = names.filter { !$0.hasPrefix(".") }.count
            bytes = files * linkSize
        } else {
            for name in names {
                var info = stat()
                if stat(directory.output + "/" + name, &info) == 0, info.st_size > 0 {
                    files += 1
                    bytes += Int(info.st_size)
                }
            }
        }
        let metrics = RunMetrics(
            contender: name, run: run, payloads: count, child: child, succeeded: files,
            payloadsPerSecond: files > 0 ? Double(count) / child.wallSeconds : nil, bytesDelivered: bytes,
            megabytesPerSecond: files > 0 ? Double(bytes) / 1e6 / child.wallSeconds : nil, latencyMs: nil,
            outcomes: ["ok": files, "failed": count - files].filter { $0.value > 0 }, mismatches: nil, firstMismatch: nil,
            deadlineViolations: nil, missing: count - files, originRequests: stats.requests,
            peakOriginConnections: stats.peakConnections, originBytesSent: stats.bytesSent,
            maxRequestsPerURL: stats.maxRequestsPerURL, stderrTail: Self.tail(of: directory.stderr))
        logRun(metrics)
        return metrics
    }

    private func logRun(_ m: RunMetrics) {
        var line = "  \(m.contender) run \(m.run): \(m.payloads) in \(String(format: "%.3f", m.child.wallSeconds)) s"
        if let rate = m.payloadsPerSecond, let megabytes = m.megabytesPerSecond {
            line += String(format: " (%.0f/s, out %.1f MB/s)", rate, megabytes)
        } else {
            line += " (NO SUCCESSFUL RESULT: no throughput)"
        }
        line += String(format: ", CPU %.2f s, peak RSS %.1f MB", m.child.cpuSeconds, m.peakRSSMegabytes)
        line += ", exit \(m.child.exitStatus)\(m.child.timedOut ? " (TIMED OUT)" : "")"
        line += String(format: ", origin requests \(m.originRequests) (%.1f MB)", Double(m.originBytesSent) / 1e6)
        line += ", outcomes \(formatOutcomes(m.outcomes))"
        if let first = m.firstMismatch { line += "; first mismatch: \(first)" }
        if m.missing > 0 { line += "; missing \(m.missing): \(m.stderrTail)" }
        log(line)
    }

    private static func tail(of path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        let lines = String(decoding: data.suffix(2_000), as: UTF8.self).split(whereSeparator: \.isNewline)
        return lines.suffix(3).joined(separator: " | ")
    }
}
