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
    ///
    /// A regular file is read whole first (so the progress bar knows the total); standard input
    /// or a pipe is processed line by line as it arrives, so that a producer can spread a spike
    /// over time: each payload's deadline starts when its line is read.
    func run(input: String) async throws -> Bool {
        let lines: AsyncStream<Data>
        let total: Int?
        if input != "-", Self.isRegularFile(input) {
            let all: [Data]
            do {
                all = Self.lines(of: try PayloadInput.read(input))
            } catch {
                throw ValidationError("cannot read \(input): \(error.localizedDescription)")
            }
            (lines, total) = (AsyncStream { continuation in
                for line in all { continuation.yield(line) }
                continuation.finish()
            }, all.count)
        } else {
            guard let handle = input == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: input) else {
                throw ValidationError("cannot read \(input)")
            }
            (lines, total) = (Self.lineStream(from: handle), nil)
        }
        let printer = OutcomePrinter(json: options.json)
        let started = ContinuousClock.now
        let progress = Progress(total: total)
        let (records, statistics) = try await withAttachmentFetcher(
            configuration: options.fetcherConfiguration(), logger: options.logger()
        ) { fetcher -> ([BatchRecord], AttachmentFetcher.Statistics) in
            let records = await Self.processAll(lines, through: fetcher, concurrency: concurrency, printer: printer, progress: progress)
            return (records, fetcher.statistics)
        }
        progress.finish()
        let summary = BatchSummary(records: records, statistics: statistics, wall: started.duration(to: .now))
        FileHandle.standardError.write(Data((summary.text + "\n").utf8))
        return records.allSatisfy(\.attached)
    }

    /// Processes every line, at most `concurrency` at once, printing outcomes in input order.
    private static func processAll(
        _ lines: AsyncStream<Data>, through fetcher: AttachmentFetcher, concurrency: Int, printer: OutcomePrinter,
        progress: Progress
    ) async -> [BatchRecord] {
        let reporter = progress.startReporting()
        defer { reporter?.cancel() }
        return await withTaskGroup(of: (Int, Outcome).self) { group -> [BatchRecord] in
            var emitter = OrderedEmitter(printer: printer)
            var submitted = 0
            for await payload in lines {
                if submitted - emitter.received >= concurrency, let (index, outcome) = await group.next() {
                    progress.advance()
                    emitter.add(outcome, at: index)
                }
                let index = submitted
                group.addTask { (index, await fetcher.process(payload)) }
                submitted += 1
            }
            while let (index, outcome) = await group.next() {
                progress.advance()
                emitter.add(outcome, at: index)
            }
            return emitter.records
        }
    }

    /// The lines of `handle` as they arrive, read on a thread of their own (reads block).
    static func lineStream(from handle: FileHandle) -> AsyncStream<Data> {
        AsyncStream { continuation in
            let reader = Thread {
                var buffer: [UInt8] = []
                var start = 0
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(contentsOf: chunk)
                    while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                        let end = newline > start && buffer[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
                        continuation.yield(Data(buffer[start..<end]))
                        start = newline + 1
                    }
                    buffer.removeFirst(start)
                    start = 0
                }
                if !buffer.isEmpty { continuation.yield(Data(buffer)) }
                continuation.finish()
            }
            reader.start()
        }
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
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
    /// Outcomes handed in so far, printed or waiting for an earlier one.
    private(set) var received = 0
    private var nextToPrint = 0
    /// What the summary needs of each printed outcome (the outcomes themselves, payloads and
    /// all, are let go once printed: a batch may hold millions).
    private(set) var records: [BatchRecord] = []

    init(printer: OutcomePrinter) { self.printer = printer }

    mutating func add(_ outcome: Outcome, at index: Int) {
        received += 1
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
    /// How many payloads there are, when known (not while reading a pipe).
    let total: Int?
    private let done = Atomic<Int>(0)
    private let enabled = isatty(STDERR_FILENO) == 1

    init(total: Int?) { self.total = total }

    func advance() { done.add(1, ordering: .relaxed) }

    /// Redraws the bar ten times a second until cancelled; `nil` when stderr is not a terminal.
    func startReporting() -> Task<Void, Never>? {
        guard enabled, total != 0 else { return nil }
        return Task {
            while !Task.isCancelled {
                draw()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func finish() {
        guard enabled, total != 0 else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw() {
        let count = done.load(ordering: .relaxed)
        guard let total else {
            FileHandle.standardError.write(Data("\r\(count) done".utf8))
            return
        }
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
