import Foundation
import Histogram

/// Facts about the machine the load test ran on.
struct MachineInfo: Codable, Sendable {
    /// Online processor cores.
    var cores: Int
    /// `uname -sr`.
    var kernel: String
    /// Physical memory, bytes.
    var memoryBytes: UInt64

    /// Reads the current machine.
    static func current() -> MachineInfo {
        var name = utsname()
        uname(&name)
        func string<T>(_ tuple: T) -> String {
            withUnsafeBytes(of: tuple) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
        return MachineInfo(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: string(name.sysname) + " " + string(name.release),
            memoryBytes: ProcessInfo.processInfo.physicalMemory)
    }
}

/// The `--json` document: settings, machine and every scenario with every run.
struct LoadTestDocument: Codable, Sendable {
    /// Always "load-test".
    var tool = "load-test"
    /// When the load test started (ISO 8601).
    var startedAt: String
    /// The invocation's settings.
    var settings: Settings
    /// The machine.
    var machine: MachineInfo
    /// Every scenario that ran, in order.
    var scenarios: [ScenarioReport]
    /// True when every behaviour check passed (the exit status is 0 exactly then).
    var behaviourPassed: Bool
    /// True when every speed/size target was met (informational).
    var targetsMet: Bool
}

/// Renders reports as Markdown.
enum MarkdownReport {
    /// The results table, then each scenario's checks and notes.
    static func render(_ document: LoadTestDocument) -> String {
        let s = document.settings
        var out = "## load-test results\n\n"
        // smoke and custom have counts of their own: the scale is shown only when a scenario it shapes ran.
        let unscaled: [ScenarioName] = [.smoke, .custom]
        if document.scenarios.contains(where: { !unscaled.contains($0.name) }) {
            let excepted = unscaled.filter { name in document.scenarios.contains { $0.name == name } }
            out += "scale \(formatNumber(s.scale))"
            out += excepted.isEmpty ? ", " : " (not \(excepted.map(\.rawValue).joined(separator: ", "))), "
        }
        out += "\(s.runs) run(s) each (median, with min–max when runs > 1), "
        out += "concurrency \(s.concurrency) per host, scratch on \(s.tmpfs ? "tmpfs (/dev/shm)" : "disk (\(URL(fileURLWithPath: s.scratch).deletingLastPathComponent().path))"), "
        out += "peak RSS by \(s.rssMethod == "gnu-time" ? "GNU time (%M)" : "wait4 ru_maxrss"); "
        out += "\(document.machine.cores) cores, \(document.machine.kernel). MB = 10^6 bytes. "
        out += "out MB/s: attachment bytes the contender wrote to its output directory per second of wall time "
        out += "(a cache hit counts in full); origin req, origin MB, peak conns: what the mock CDN served "
        out += "(requests, body bytes, most connections open at once).\n\n"
        out += "| scenario | contender | payloads | wall s | payloads/s | out MB/s | p50 ms | p90 ms | p99 ms | max ms "
        out += "| origin req | origin MB | peak conns | CPU s | peak RSS MB | outcomes |\n"
        out += "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n"
        for scenario in document.scenarios {
            for contender in scenario.contenders {
                let m = contender.summary
                let cells = [
                    scenario.name.rawValue, contender.name, String(contender.runs.first?.payloads ?? scenario.payloads),
                    cell(m.wallSeconds, "%.3f"), cell(m.payloadsPerSecond, "%.0f"), cell(m.megabytesPerSecond, "%.1f"),
                    cell(m.p50Ms, "%.1f"), cell(m.p90Ms, "%.1f"), cell(m.p99Ms, "%.1f"), cell(m.maxMs, "%.1f"),
                    cell(m.originRequests, "%.0f"), cell(m.originMegabytes, "%.1f"), cell(m.peakOriginConnections, "%.0f"),
                    cell(m.cpuSeconds, "%.2f"),
                    cell(m.peakRSSMegabytes, "%.1f"), outcomes(contender.runs),
                ]
                out += "| " + cells.joined(separator: " | ") + " |\n"
            }
        }
        for scenario in document.scenarios {
            out += "\n**\(scenario.name.rawValue)** — \(scenario.summary)\n"
            for note in scenario.notes { out += "- \(note)\n" }
            for check in scenario.checks {
                let mark = check.passed ? "ok" : ["behaviour": "FAIL", "finding": "baseline failed"][check.kind] ?? "MISSED"
                out += "- [\(mark)] \(check.name): \(check.value) (\(check.kind == "target" ? "target" : "expected") \(check.target))\n"
            }
        }
        out += "\nbehaviour: \(document.behaviourPassed ? "all checks passed" : "SOME CHECKS FAILED"); "
        out += "targets: \(document.targetsMet ? "all met" : "some missed")\n"
        return out
    }

    private static func cell(_ spread: Spread?, _ format: String) -> String {
        guard let spread else { return "–" }
        let median = String(format: format, spread.median)
        if spread.min == spread.max { return median }
        return median + " (" + String(format: format, spread.min) + "–" + String(format: format, spread.max) + ")"
    }

    private static func outcomes(_ runs: [RunMetrics]) -> String {
        let texts = runs.map { $0.outcomes.isEmpty ? "no result" : formatOutcomes($0.outcomes) }
        let distinct = texts.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return distinct.joined(separator: " / ")
    }

    private static func formatNumber(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A hand-written SVG plot of a latency CDF.
enum LatencyPlot {
    /// An SVG (640 × 400) of the cumulative distribution of `latencies` (ms): x in ms, y in % of payloads.
    static func cdf(_ latencies: [Double], title: String) -> String {
        let width = 640.0, height = 400.0
        let left = 64.0, right = 20.0, top = 36.0, bottom = 52.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let sorted = latencies.sorted()
        let xMax = niceCeiling(max(sorted.last ?? 1, 0.001))
        func x(_ ms: Double) -> Double { left + ms / xMax * plotWidth }
        func y(_ fraction: Double) -> Double { top + (1 - fraction) * plotHeight }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(width / 2))" y="20" text-anchor="middle" font-size="14">\(escape(title))</text>

            """
        // Grid, ticks and labels.
        for step in 0...5 {
            let ms = xMax * Double(step) / 5
            svg += "<line x1=\"\(f(x(ms)))\" y1=\"\(f(top))\" x2=\"\(f(x(ms)))\" y2=\"\(f(top + plotHeight))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(f(x(ms)))\" y=\"\(f(top + plotHeight + 18))\" text-anchor=\"middle\">\(tickLabel(ms))</text>\n"
        }
        for step in 0...5 {
            let fraction = Double(step) / 5
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y(fraction)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y(fraction)))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y(fraction) + 4))\" text-anchor=\"end\">\(step * 20) %</text>\n"
        }
        svg += "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\" stroke=\"black\"/>\n"
        svg += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"black\"/>\n"
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 12))\" text-anchor=\"middle\">latency (ms)</text>\n"
        svg += "<text x=\"16\" y=\"\(f(top + plotHeight / 2))\" text-anchor=\"middle\" "
        svg += "transform=\"rotate(-90 16 \(f(top + plotHeight / 2)))\">payloads done (%)</text>\n"

        // The CDF as a step-like polyline, at most ~2000 points.
        if !sorted.isEmpty {
            let stride = max(1, sorted.count / 2_000)
            var points = ["\(f(x(0))),\(f(y(0)))"]
            var index = 0
            while index < sorted.count {
                points.append("\(f(x(sorted[index]))),\(f(y(Double(index + 1) / Double(sorted.count))))")
                index += stride
            }
            points.append("\(f(x(sorted[sorted.count - 1]))),\(f(y(1)))")
            svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>\n"
            // p50 / p90 / p99 markers, as the summary table computes them.
            let histogram = LatencySummary.histogram(sorted)
            for (label, p) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
                let ms = LatencySummary.percentile(histogram, p)
                svg += "<circle cx=\"\(f(x(ms)))\" cy=\"\(f(y(p)))\" r=\"3\" fill=\"#d62728\"/>\n"
                // Labels near the right edge go to the left of their marker.
                let leftSide = x(ms) > left + plotWidth * 0.7
                svg += "<text x=\"\(f(x(ms) + (leftSide ? -8 : 6)))\" y=\"\(f(y(p) + 14))\" fill=\"#d62728\""
                svg += "\(leftSide ? " text-anchor=\"end\"" : "")>\(label) \(tickLabel(ms)) ms</text>\n"
            }
        }
        svg += "</svg>\n"
        return svg
    }

    /// The smallest 1, 2, 2.5 or 5 × 10^k at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        for factor in [1.0, 2.0, 2.5, 5.0, 10.0] where factor * magnitude >= value {
            return factor * magnitude
        }
        return 10 * magnitude
    }

    private static func tickLabel(_ ms: Double) -> String {
        ms >= 100 || ms == ms.rounded() ? String(format: "%.0f", ms) : String(format: "%.1f", ms)
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
