import ArgumentParser
import AttachmentFetcher
import Foundation
import Synchronization

/// `fetch-attachment --batch FILE`: every line a payload, all through one fetcher, at most
/// `concurrency` at once; outcomes printed in input order, a summary on stderr.
struct BatchRunner {
    var options: FetchOptions
    var concurrency: Int

    /// Runs the batch; `true` when every payload got its attachment.
    func run(input: String) async throws -> Bool {
        let lines: [Data]
        do {
            lines = Self.lines(of: try PayloadInput.read(input))
        } catch {
            throw ValidationError("cannot read \(input): \(error.localizedDescription)")
        }
        let printer = OutcomePrinter(json: options.json)
        let started = ContinuousClock.now
        let progress = Progress(total: lines.count)
        let (outcomes, statistics) = try await withAttachmentFetcher(
            configuration: options.fetcherConfiguration(), logger: options.logger()
        ) { fetcher -> ([BatchRecord], AttachmentFetcher.Statistics) in
            let outcomes = await Self.processAll(lines, through: fetcher, concurrency: concurrency, printer: printer, progress: progress)
            return (outcomes, fetcher.statistics)
        }
        progress.finish()
        let summary = BatchSummary(records: outcomes, statistics: statistics, wall: started.duration(to: .now))
        FileHandle.standardError.write(Data((summary.text + "\n").utf8))
        return outcomes.allSatisfy(\.attached)
    }

    /// Processes every line, at most `concurrency` at once, printing outcomes in input order.
    private static func processAll(
        _ lines: [Data], through fetcher: AttachmentFetcher, concurrency: Int, printer: OutcomePrinter,
        progress: Progress
    ) async -> [BatchRecord] {
        let reporter = progress.startReporting()
        defer { reporter?.cancel() }
        return await withTaskGroup(of: (Int, Outcome).self) { group -> [BatchRecord] in
            var emitter = OrderedEmitter(printer: printer)
            var next = 0
            while next < min(concurrency, lines.count) {
                let (index, payload) = (next, lines[next])
                group.addTask { (index, await fetcher.process(payload)) }
                next += 1
            }
            while let (index, outcome) = await group.next() {
                progress.advance()
                emitter.add(outcome, at: index)
                if next < lines.count {
                    let (index, payload) = (next, lines[next])
                    group.addTask { (index, await fetcher.process(payload)) }
                    next += 1
                }
            }
            return emitter.records
        }
    }

    /// The payloads of a batch: one per line; a final newline does not start another.
    static func lines(of data: Data) -> [Data] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? Data(line.dropLast()) : Data(line)
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }
}

/// Prints outcomes in input order as soon as every earlier one is in.
private struct OrderedEmitter {
    let printer: OutcomePrinter
    private var pending: [Int: Outcome] = [:]
    private var nextToPrint = 0
    /// What the summary needs of each printed outcome (the outcomes themselves, payloads and
    /// all, are let go once printed: a batch may hold millions).
    private(set) var records: [BatchRecord] = []

    init(printer: OutcomePrinter) { self.printer = printer }

    mutating func add(_ outcome: Outcome, at index: Int) {
        pending[index] = outcome
        while let ready = pending.removeValue(forKey: nextToPrint) {
            printer.print(ready, index: nextToPrint)
            records.append(BatchRecord(attached: ready.status == .attached, reason: ready.reason, milliseconds: ready.elapsedMilliseconds))
            nextToPrint += 1
        }
    }
}

/// A progress bar on stderr, only when stderr is a terminal.
final class Progress: Sendable {
    let total: Int
    private let done = Atomic<Int>(0)
    private let enabled = isatty(STDERR_FILENO) == 1

    init(total: Int) { self.total = total }

    func advance() { done.add(1, ordering: .relaxed) }

    /// Redraws the bar ten times a second until cancelled; `nil` when stderr is not a terminal.
    func startReporting() -> Task<Void, Never>? {
        guard enabled, total > 0 else { return nil }
        return Task {
            while !Task.isCancelled {
                draw()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func finish() {
        guard enabled, total > 0 else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw() {
        let count = done.load(ordering: .relaxed)
        let width = 30
        let filled = total == 0 ? width : count * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(count)/\(total)".utf8))
    }
}

/// One payload's result, as the summary counts it.
struct BatchRecord {
    var attached: Bool
    var reason: FallbackReason?
    var milliseconds: Double
}

/// The closing summary of a batch.
struct BatchSummary {
    var records: [BatchRecord]
    var statistics: AttachmentFetcher.Statistics
    var wall: Duration

    var text: String {
        let attached = records.filter(\.attached).count
        var byReason: [String: Int] = [:]
        for record in records { if let reason = record.reason { byReason[reason.code, default: 0] += 1 } }
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(records.count) / seconds : 0
        let latencies = records.map(\.milliseconds).sorted()
        func percentile(_ p: Double) -> String {
            guard !latencies.isEmpty else { return "-" }
            let index = min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)
            return String(format: "%.1f", latencies[max(0, index)])
        }
        var lines = [
            String(format: "batch: %d payloads in %.2f s (%.0f/s): %d attached, %d original", records.count, seconds, rate, attached, records.count - attached)
        ]
        if !byReason.isEmpty {
            lines.append("  original by reason: " + byReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines.append(
            "  origin requests \(statistics.originRequests) (conditional \(statistics.conditionalRequests), not modified \(statistics.notModified)), cache hits \(statistics.cacheHits), coalesced \(statistics.coalesced), bytes downloaded \(statistics.bytesDownloaded)")
        lines.append("  latency ms: p50 \(percentile(0.5))  p90 \(percentile(0.9))  p99 \(percentile(0.99))  max \(latencies.last.map { String(format: "%.1f", $0) } ?? "-")")
        return lines.joined(separator: "\n")
    }
}
