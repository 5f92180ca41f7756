import Foundation
import MockCDN

/// The scenarios where fetch-attachment runs alone (or against the hard-link floor). The distinct-URL
/// scenario, with its baselines, is in DistinctURLs.swift.
extension Harness {
    func sameURL(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let count = scaled(10_000)
        let url = server.url("/media/same.jpg?bytes=100000")
        let payloads = [PlannedPayload](repeating: .init(json: brazePayload(url: url), expected: "attached"), count: count)
        let invocation = FetchAttachmentInvocation(
            payloads: payloads, batch: try writeBatch(payloads, to: directory + "/batch.jsonl"), cache: .perRun,
            deadline: 30, timeout: .seconds(120))
        // Without a shared cache every payload downloads its own copy, as every phone does: what the
        // origin sees of the same spike.
        var uncached = invocation
        uncached.cache = .none
        let uncachedName = "fetch-attachment --no-cache"
        let results = try await measure(
            [fetchAttachmentContender(invocation), fetchAttachmentContender(uncached, name: uncachedName)], in: directory)
        let (fetchAttachment, withoutCache) = (results[0], results[1])
        let summary = fetchAttachment.summary
        var checks = Check.completion(fetchAttachment.runs, label: fetchAttachment.name)
        checks.append(Check(
            name: "origin requests per run", kind: "behaviour",
            value: fetchAttachment.runs.map { String($0.originRequests) }.joined(separator: ", "), target: "exactly 1",
            passed: fetchAttachment.runs.allSatisfy { $0.originRequests == 1 }))
        let wall = summary.wallSeconds?.median ?? .infinity
        checks.append(Check(
            name: "wall time (median)", kind: "target", value: String(format: "%.3f s", wall), target: "< 1 s",
            passed: wall < 1))
        checks += Check.completion(withoutCache.runs, label: uncachedName)
        checks.append(Check(
            name: "\(uncachedName): origin requests per run", kind: "behaviour",
            value: withoutCache.runs.map { String($0.originRequests) }.joined(separator: ", "),
            target: "\(count) (one per payload)", passed: withoutCache.runs.allSatisfy { $0.originRequests == count }))
        let notes = [
            "origin without a shared cache (\(uncachedName)): "
                + String(
                format: "%.0f requests, %.1f MB, %.0f connections at most (medians); with it: %.0f request, %.1f MB",
                withoutCache.summary.originRequests?.median ?? 0,
                withoutCache.summary.originMegabytes?.median ?? 0, withoutCache.summary.peakOriginConnections?.median ?? 0,
                summary.originRequests?.median ?? 0, summary.originMegabytes?.median ?? 0)
        ]
        let report = ScenarioReport(
            name: .sameURL, summary: ScenarioName.sameURL.summary, payloads: count,
            contenders: [fetchAttachment.report, withoutCache.report], checks: checks, notes: notes)
        return (report, fetchAttachment.plotted.latencies)
    }

    func videos(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let count = scaled(20)
        let payloads = (0..<count).map {
            PlannedPayload(
                json: brazePayload(url: server.url("/media/v\($0).mp4?bytes=50000000"), type: "mp4"), expected: "attached")
        }
        let invocation = FetchAttachmentInvocation(
            payloads: payloads, batch: try writeBatch(payloads, to: directory + "/batch.jsonl"), cache: .none,
            deadline: 120, timeout: .seconds(300))
        let fetchAttachment = try await measure([fetchAttachmentContender(invocation)], in: directory)[0]
        let summary = fetchAttachment.summary
        var checks = Check.completion(fetchAttachment.runs, label: fetchAttachment.name)
        let rss = summary.peakRSSMegabytes?.max ?? .infinity
        checks.append(Check(
            name: "peak RSS (worst run)", kind: "target", value: String(format: "%.1f MB", rss), target: "< 100 MB",
            passed: rss < 100))
        let notes = [
            String(
                format: "written to the output directory (median): %.1f MB/s; origin sent %.1f MB",
                summary.megabytesPerSecond?.median ?? 0, summary.originMegabytes?.median ?? 0)
        ]
        let report = ScenarioReport(
            name: .videos, summary: ScenarioName.videos.summary, payloads: count, contenders: [fetchAttachment.report],
            checks: checks, notes: notes)
        return (report, fetchAttachment.plotted.latencies)
    }

    func faultMix(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let count = scaled(1_000)
        let payloads = (0..<count).map { index -> PlannedPayload in
            guard index % 10 == 9 else {
                return PlannedPayload(
                    json: brazePayload(url: server.url("/media/m\(index).jpg?bytes=100000")), expected: "attached")
            }
            let fault = Fault.allCases[(index / 10) % Fault.allCases.count]
            return PlannedPayload(json: brazePayload(url: server.url(fault.pathAndQuery(index))), expected: fault.expected)
        }
        return try await fetchAttachmentAlone(
            .faultMix, payloads: payloads, deadline: 2, timeout: .seconds(120), in: directory)
    }

    func smoke(in directory: String) async throws -> (ScenarioReport, [Double]) {
        // 10 shared URLs × 9 payloads, and one special payload at every 10th position.
        let shared = (0..<10).map { server.url("/media/smoke-\($0).jpg?bytes=50000") }
        // One payload per fault, whose URLs the run also tracks (below).
        let faultPaths = Fault.allCases.enumerated().map { n, fault in fault.pathAndQuery(n) }
        var specials: [PlannedPayload] = zip(Fault.allCases, faultPaths).map { fault, path in
            PlannedPayload(json: brazePayload(url: server.url(path)), expected: fault.expected)
        }
        specials.append(PlannedPayload(
            json: brazePayload(url: server.url("/media/smoke-redirect.jpg?bytes=20000&redirects=2")), expected: "attached"))
        specials.append(PlannedPayload(
            json: #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true}"#, expected: "internal-push"))
        specials.append(PlannedPayload(json: brazePayload(url: "file:///etc/passwd"), expected: "invalid-url"))
        var payloads: [PlannedPayload] = []
        var sharedIndex = 0
        for index in 0..<100 {
            if index % 10 == 9 {
                payloads.append(specials[index / 10])
            } else {
                payloads.append(PlannedPayload(json: brazePayload(url: shared[sharedIndex % 10]), expected: "attached"))
                sharedIndex += 1
            }
        }
        // The shared URLs' requests are checked; the faults' are reported with the total, so that a
        // total that differs says which fault made it differ.
        var (report, latencies) = try await fetchAttachmentAlone(
            .smoke, payloads: payloads, deadline: 2, timeout: .seconds(60), in: directory, runs: 1,
            trackedURLs: shared.map { String($0.dropFirst(server.baseURL.count)) } + faultPaths)
        let runs = report.contenders[0].runs
        let perURL = runs.flatMap { ($0.trackedURLRequests ?? []).prefix(shared.count) }
        let perFault = runs.map { run in
            zip(Fault.allCases, (run.trackedURLRequests ?? []).dropFirst(shared.count)).map { "\($0) \($1)" }.joined(separator: ", ")
        }
        report.checks.append(Check(
            name: "origin requests per shared URL (10 URLs × 9 payloads)", kind: "behaviour",
            value: perURL.map(String.init).joined(separator: ","), target: "exactly 1 each",
            passed: perURL.count == 10 && perURL.allSatisfy { $0 == 1 }))
        // 10 shared + 7 faults + 3 for the redirect chain; the internal push and file:// make none.
        // Over TLS (HTTP/2) the reset and the truncation are stream failures, each tried three times.
        let expectedRequests = settings.trustedCertificate == nil ? 20 : 24
        report.checks.append(Check(
            name: "origin requests in all", kind: "behaviour",
            value: zip(runs, perFault).map { "\($0.originRequests) (faults: \($1))" }.joined(separator: "; "),
            target: String(expectedRequests), passed: runs.allSatisfy { $0.originRequests == expectedRequests }))
        return (report, latencies)
    }

    func warmCache(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let count = scaled(100_000)
        let url = server.url("/media/warm.jpg?bytes=100000&cache_control=max-age%3D86400")
        let payloads = [PlannedPayload](repeating: .init(json: brazePayload(url: url), expected: "attached"), count: count)
        let timeout = Duration.seconds(600)
        let invocation = FetchAttachmentInvocation(
            payloads: payloads, batch: try writeBatch(payloads, to: directory + "/batch.jsonl"),
            cache: .shared(directory + "/cache"), deadline: 30, timeout: timeout)

        // Run 0 fills the cache; the measured runs find it warm.
        let warmUp = try await measure(
            [fetchAttachmentContender(invocation, name: "fetch-attachment (warm-up)")], runs: 0...0, in: directory)[0]
        // The floor links a file of the same size.
        let source = directory + "/source.jpg"
        try Data(repeating: 0xA5, count: 100_000).write(to: URL(fileURLWithPath: source))
        let results = try await measure(
            [fetchAttachmentContender(invocation), hardlinkFloor(count: count, source: source, size: 100_000, timeout: timeout)],
            in: directory)
        let (fetchAttachment, floor) = (results[0], results[1])
        let warm = warmUp.runs[0]
        var checks = Check.completion(warmUp.runs, label: "warm-up")
            + Check.completion(fetchAttachment.runs, label: fetchAttachment.name)
        checks += Check.completion(floor.runs, label: "hardlink-floor")
        checks.append(Check(
            name: "warm-up origin requests", kind: "behaviour", value: String(warm.originRequests), target: "exactly 1",
            passed: warm.originRequests == 1))
        checks.append(Check(
            name: "origin requests per warm run", kind: "target",
            value: fetchAttachment.runs.map { String($0.originRequests) }.joined(separator: ", "), target: "0",
            passed: fetchAttachment.runs.allSatisfy { $0.originRequests == 0 }))
        let fraction = ratio(fetchAttachment.summary.payloadsPerSecond, floor.summary.payloadsPerSecond)
        checks.append(Check(
            name: "fetch-attachment rate / hard-link floor", kind: "target",
            value: fraction.map { String(format: "%.0f %%", $0 * 100) } ?? "n/a", target: "≥ 50 %",
            passed: (fraction ?? 0) >= 0.5))
        // A side without a successful run has no rate: "n/a", not 0.
        func rate(_ spread: Spread?) -> String { spread.map { String(format: "%.0f", $0.median) } ?? "n/a" }
        let notes = [
            "fetch-attachment: \(rate(fetchAttachment.summary.payloadsPerSecond)) payloads/s; "
                + "hard-link floor: \(rate(floor.summary.payloadsPerSecond)) links/s; "
                + "fetch-attachment = \(fraction.map { String(format: "%.0f", $0 * 100) } ?? "n/a") % of the floor (medians)"
        ]
        let report = ScenarioReport(
            name: .warmCache, summary: ScenarioName.warmCache.summary, payloads: count,
            contenders: [fetchAttachment.report, floor.report, warmUp.report], checks: checks, notes: notes)
        return (report, fetchAttachment.plotted.latencies)
    }

    /// A scenario where only fetch-attachment runs, each run on a fresh cache, with per-payload
    /// expectations and a deadline.
    func custom(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let spike = settings.custom
        let slots = SpikePlan.slots(payloads: spike.payloads, urls: spike.urls, faultPercent: spike.faultPercent)
        let payloads = slots.enumerated().map { index, slot -> PlannedPayload in
            switch slot {
            case .fault(let number):
                let fault = Fault.allCases[number % Fault.allCases.count]
                // A stall outlives any deadline: the fault's own body is far larger than what it sends.
                return PlannedPayload(json: brazePayload(url: server.url(fault.pathAndQuery(index))), expected: fault.expected)
            case .asset(let url):
                let url = server.url("/media/custom-\(url).\(spike.mediaType)?bytes=\(spike.bytes)")
                return PlannedPayload(json: brazePayload(url: url, type: spike.mediaType), expected: nil)
            }
        }
        let timeout = Duration.seconds(Int64(spike.window + spike.deadline * 4 + 60))
        return try await fetchAttachmentAlone(
            .custom, payloads: payloads, deadline: spike.deadline, timeout: timeout, in: directory,
            window: spike.window > 0 ? spike.window : nil)
    }

    /// fetch-attachment alone, each run on a fresh cache, checked against each payload's expected outcome and
    /// its deadline.
    private func fetchAttachmentAlone(
        _ scenario: ScenarioName, payloads: [PlannedPayload], deadline: Double, timeout: Duration, in directory: String,
        runs: Int? = nil, trackedURLs: [String] = [], window: Double? = nil
    ) async throws -> (ScenarioReport, [Double]) {
        let invocation = FetchAttachmentInvocation(
            payloads: payloads, batch: try writeBatch(payloads, to: directory + "/batch.jsonl"), cache: .perRun,
            deadline: deadline, timeout: timeout, trackedURLs: trackedURLs, window: window)
        let fetchAttachment = try await measure(
            [fetchAttachmentContender(invocation)], runs: runs.map { 1...$0 }, in: directory)[0]
        var checks = Check.completion(fetchAttachment.runs, label: fetchAttachment.name)
        checks.append(Check(
            name: "outcomes later than deadline + 100 ms", kind: "behaviour",
            value: fetchAttachment.runs.map { String($0.deadlineViolations ?? 0) }.joined(separator: ", "), target: "0",
            passed: fetchAttachment.runs.allSatisfy { ($0.deadlineViolations ?? 0) == 0 }))
        let report = ScenarioReport(
            name: scenario, summary: scenario.summary, payloads: payloads.count, contenders: [fetchAttachment.report],
            checks: checks,
            notes: [
                String(
                    format: "slowest outcome: %.1f ms (deadline %.0f ms)", fetchAttachment.summary.maxMs?.max ?? 0,
                    deadline * 1000)
            ])
        return (report, fetchAttachment.plotted.latencies)
    }
}
