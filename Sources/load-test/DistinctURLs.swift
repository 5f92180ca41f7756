import Foundation
import MockCDN

extension Harness {
    /// Distinct URLs at once: fetch-attachment as the CLI runs by default (a cache directory, fresh
    /// for each run, on the output's file system) and with `--no-cache`, against `curl --parallel`
    /// and URLSession, interleaved; both of its runs are reported as ratios to the baselines of the
    /// same invocation.
    func distinctURLs(in directory: String) async throws -> (ScenarioReport, [Double]) {
        let count = scaled(2_000)
        let urls = (0..<count).map { server.url("/media/p\($0).jpg?bytes=100000") }
        let payloads = urls.map { PlannedPayload(json: brazePayload(url: $0), expected: "attached") }
        let batch = try writeBatch(payloads, to: directory + "/batch.jsonl")
        let urlFile = directory + "/urls.txt"
        try Data((urls.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: urlFile))
        // Foundation on Linux trusts only the system's certificate authorities: no URLSession over TLS.
        let withURLSession = settings.trustedCertificate == nil
        let timeout = Duration.seconds(300)
        let cached = FetchAttachmentInvocation(
            payloads: payloads, batch: batch, cache: .perRun, deadline: 30, timeout: timeout)
        var uncached = cached
        uncached.cache = .none
        let names = ["fetch-attachment", "fetch-attachment --no-cache"]
        var contenders = [
            fetchAttachmentContender(cached, name: names[0]), fetchAttachmentContender(uncached, name: names[1]),
            curl(urls, timeout: timeout),
        ]
        if withURLSession { contenders.append(urlsession(urlFile: urlFile, count: count, timeout: timeout)) }
        let results = try await measure(contenders, in: directory)
        let curlRuns = results[2]

        var checks = Check.completion(results[0].runs, label: names[0]) + Check.completion(results[1].runs, label: names[1])
        // Over TLS, Debian's curl 7.88 loses a few transfers per run to HTTP/2 stream errors (it
        // resets streams it has finished; the server's rapid-reset limit then closes the
        // connection): a finding about the baseline, reported without failing the load test.
        checks += Check.completion(curlRuns.runs, label: "curl", lossesAreFindings: settings.trustedCertificate != nil)
        var notes = [
            "fetch-attachment: the CLI's defaults (a cache directory, fresh for each run) with the cache and the output on "
                + (settings.tmpfs ? "tmpfs" : "disk") + "; fetch-attachment --no-cache: no cache"
        ]
        var baselines = [(curlRuns, 1.0)]
        if withURLSession {
            checks += Check.completion(results[3].runs, label: "urlsession")
            baselines.append((results[3], 5.0))
        } else {
            notes.append("urlsession: not run over TLS (Foundation on Linux trusts only the system's certificate authorities)")
        }
        for measured in results[0...1] {
            for (baseline, target) in baselines {
                // A contender without a successful run has no throughput, and no ratio of anything.
                guard measured.summary.payloadsPerSecond != nil, baseline.summary.payloadsPerSecond != nil else {
                    let failed = [measured, baseline].filter { $0.summary.payloadsPerSecond == nil }.map(\.name)
                    notes.append(
                        "\(measured.name) / \(baseline.name): no ratio (no successful result from "
                            + failed.joined(separator: " or ") + ")")
                    checks.append(Check(
                        name: "throughput \(measured.name) / \(baseline.name)", kind: "target", value: "n/a",
                        target: "≥ \(times(target))", passed: false))
                    continue
                }
                let throughput = ratio(measured.summary.payloadsPerSecond, baseline.summary.payloadsPerSecond)
                let cpu = ratio(measured.summary.cpuSeconds, baseline.summary.cpuSeconds)
                let rss = ratio(measured.summary.peakRSSMegabytes, baseline.summary.peakRSSMegabytes)
                notes.append(
                    "\(measured.name) / \(baseline.name) (medians): throughput \(times(throughput)), CPU time \(times(cpu)), "
                        + "peak RSS \(times(rss))")
                checks.append(Check(
                    name: "throughput \(measured.name) / \(baseline.name)", kind: "target", value: times(throughput),
                    target: "≥ \(times(target))", passed: (throughput ?? 0) >= target))
            }
        }
        let report = ScenarioReport(
            name: .distinctURLs, summary: ScenarioName.distinctURLs.summary, payloads: count,
            contenders: results.map(\.report), checks: checks, notes: notes)
        return (report, results[0].plotted.latencies)
    }
}
