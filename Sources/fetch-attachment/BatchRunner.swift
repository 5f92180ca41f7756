import ArgumentParser
import AttachmentFetcher
import Foundation
import Histogram
import DequeModule
import Synchronization

/// `fetch-attachment --batch FILE`: every line a payload, all through one fetcher, at most
/// `concurrency` at once; outcomes printed in input order, a summary on stderr.
struct BatchRunner {
    var options: FetchOptions
    var concurrency: Int
    /// Where the HTML campaign report goes, if anywhere.
    var reportPath: String? = nil

    /// Runs the batch; `true` when every payload got its attachment.
    ///
    /// A regular file is read whole first (so the progress bar knows the total); standard input
    /// or a pipe is read line by line as lines arrive, so that a producer can spread a spike over
    /// time: each payload's deadline starts when its line is read (or, with `concurrency`
    /// payloads already in flight, when one of them ends), and each outcome is printed, and
    /// flushed, as soon as it and every earlier one are in.
    func run(input: String) async throws -> Bool {
        let source: BatchInput
        if input != "-", Self.isRegularFile(input) {
            do {
                source = .lines(BatchInput.lines(of: try PayloadInput.read(input)))
            } catch {
                throw ValidationError("cannot read \(input): \(error.localizedDescription)")
            }
        } else {
            let descriptor = input == "-" ? STDIN_FILENO : open(input, O_RDONLY)
            guard descriptor >= 0 else {
                throw ValidationError("cannot read \(input): \(String(cString: strerror(errno)))")
            }
            source = .stream(LineReader(descriptor: descriptor))
        }
        let printer = OutcomePrinter(json: options.json)
        let report = reportPath.map { _ in CampaignReport() }
        let started = ContinuousClock.now
        let progress = Progress(total: source.count)
        let (records, statistics) = try await withAttachmentFetcher(
            configuration: options.fetcherConfiguration(), logger: options.logger()
        ) { fetcher -> ([BatchRecord], AttachmentFetcher.Statistics) in
            let records = await Self.processAll(
                source, through: fetcher, concurrency: concurrency, printer: printer, report: report, progress: progress)
            return (records, fetcher.statistics)
        }
        progress.finish()
        let wall = started.duration(to: .now)
        let summary = BatchSummary(records: records, statistics: statistics, wall: wall)
        FileHandle.standardError.write(Data((summary.text + "\n").utf8))
        if let report, let reportPath {
            do {
                try Data(report.html(statistics: statistics, wall: wall).utf8).write(to: URL(fileURLWithPath: reportPath))
                FileHandle.standardError.write(Data("report: \(reportPath)\n".utf8))
            } catch {
                FileHandle.standardError.write(Data("fetch-attachment: cannot write the report \(reportPath): \(error.localizedDescription)\n".utf8))
                throw ExitCode(1)
            }
        }
        return records.allSatisfy(\.attached)
    }

    /// Processes every line, at most `concurrency` at once, printing outcomes in input order.
    private static func processAll(
        _ source: BatchInput, through fetcher: AttachmentFetcher, concurrency: Int, printer: OutcomePrinter,
        report: CampaignReport?, progress: Progress
    ) async -> [BatchRecord] {
        let reporter = progress.startReporting()
        defer { reporter?.cancel() }
        switch source {
        case .lines(let lines):
            return await processLines(
                lines, through: fetcher, concurrency: concurrency, emitter: OrderedEmitter(printer: printer, report: report),
                progress: progress)
        case .stream(let reader):
            return await processStream(
                reader, through: fetcher, concurrency: concurrency, emitter: OrderedEmitter(printer: printer, report: report),
                progress: progress)
        }
    }

    /// Lines known in advance: `concurrency` workers, each taking the next line as it finishes one.
    /// A task per worker rather than per payload: on a warm cache, with a task made and ended for
    /// each of 100,000 payloads (and every outcome passing through one parent task) the batch took
    /// a third longer.
    private static func processLines(
        _ lines: [Data], through fetcher: AttachmentFetcher, concurrency: Int, emitter: OrderedEmitter,
        progress: Progress
    ) async -> [BatchRecord] {
        let cursor = BatchCursor()
        let emitter = SharedEmitter(emitter)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(concurrency, lines.count) {
                group.addTask {
                    var sliceStart = ContinuousClock.now
                    while let index = cursor.take(below: lines.count) {
                        let outcome = await fetcher.process(lines[index])
                        progress.advance()
                        emitter.add(outcome, at: index)
                        // A cache hit completes without suspending. A worker that never yields
                        // would keep its thread for line after line while payloads resumed from
                        // a shared download wait (for a second, in a cold 100,000-payload spike);
                        // yielding after every payload cost a fifth of a warm batch's CPU time.
                        if sliceStart.duration(to: .now) > Self.workerTimeSlice {
                            await Task.yield()
                            sliceStart = .now
                        }
                    }
                }
            }
        }
        emitter.flush()
        return emitter.records
    }

    /// How long a worker of `processLines` keeps its thread before it lets other tasks run.
    private static let workerTimeSlice = Duration.microseconds(200)

    /// What a child task of a streamed batch hands back: a payload's outcome, or the next input
    /// lines (none at the end of the input).
    private enum StreamEvent: Sendable {
        case outcome(index: Int, Outcome)
        case lines([Data])
    }

    /// Lines as they arrive: the task group is the one place everything comes in, outcomes and
    /// the next lines (read by a child task of their own, one read outstanding at a time). So
    /// outcomes are printed, and flushed, while the producer is still writing, however slowly
    /// lines come.
    private static func processStream(
        _ reader: LineReader, through fetcher: AttachmentFetcher, concurrency: Int, emitter: OrderedEmitter,
        progress: Progress
    ) async -> [BatchRecord] {
        await withTaskGroup(of: StreamEvent.self) { group -> [BatchRecord] in
            var emitter = emitter
            var submitted = 0
            var inFlight = 0
            func start(_ payload: Data) {
                let index = submitted
                group.addTask { .outcome(index: index, await fetcher.process(payload)) }
                submitted += 1
                inFlight += 1
            }
            // Lines read but not started yet (the window is full); more are read only while
            // fewer than `concurrency` wait.
            var waiting = Deque<Data>()
            var reading = true
            group.addTask { .lines(await reader.next()) }
            while let event = await group.next() {
                switch event {
                case .lines(let lines):
                    for line in lines {
                        if inFlight < concurrency { start(line) } else { waiting.append(line) }
                    }
                    reading = !lines.isEmpty && waiting.count < concurrency
                    if reading { group.addTask { .lines(await reader.next()) } }
                case .outcome(let index, let outcome):
                    inFlight -= 1
                    progress.advance()
                    emitter.add(outcome, at: index)
                    emitter.flush()
                    if let line = waiting.popFirst() { start(line) }
                    if !reading, !reader.ended, waiting.count < concurrency {
                        reading = true
                        group.addTask { .lines(await reader.next()) }
                    }
                }
            }
            emitter.flush()
            return emitter.records
        }
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }
}

/// Where a batch's payloads come from.
enum BatchInput: Sendable {
    /// Every line of a regular file, read at once.
    case lines([Data])
    /// Lines read as they arrive (standard input, a pipe, a FIFO).
    case stream(LineReader)

    /// How many payloads there are, when known.
    var count: Int? {
        if case .lines(let lines) = self { lines.count } else { nil }
    }

    /// The payloads of a whole input: one per line; a final newline does not start another.
    /// Each is a slice of `data`, sharing its storage: copying 100,000 lines out one by one took
    /// a third of the time before the first payload could start.
    static func lines(of data: Data) -> [Data] {
        let ranges = lineRanges(in: data.span, includingUnfinished: true).ranges
        let base = data.startIndex
        return ranges.map { data[(base + $0.lowerBound)..<(base + $0.upperBound)] }
    }

    /// The ranges of the lines of `bytes` that end in a line break, without it, and where the
    /// unfinished rest begins; with `includingUnfinished`, that rest too counts as a line (the
    /// input has ended). Over a `Span` of the bytes: `Data.split` goes through Data's indexing
    /// byte by byte, several times slower on a campaign of 100,000 lines.
    static func lineRanges(in bytes: Span<UInt8>, includingUnfinished: Bool) -> (ranges: [Range<Int>], rest: Int) {
        var ranges: [Range<Int>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            ranges.append(lineRange(bytes, start..<index))
            start = index + 1
        }
        if includingUnfinished, start < bytes.count {
            ranges.append(lineRange(bytes, start..<bytes.count))
            start = bytes.count
        }
        return (ranges, start)
    }

    /// `range` without a `\r` left at its end by a `\r\n` line break.
    static func lineRange(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        range.last.map { bytes[$0] } == UInt8(ascii: "\r") ? range.dropLast() : range
    }
}

/// Reads lines from a file descriptor one at a time, on Dispatch's threads (the reads block):
/// the batch asks for the next line only when it has room for it.
final class LineReader: Sendable {
    private struct State {
        /// Bytes read but not handed out: the start of a line still arriving.
        var buffer: [UInt8] = []
        var atEnd = false
    }

    private let descriptor: Int32
    /// Touched only by `readLines`, which runs on a serial queue: the lock is never contended.
    private let state = Mutex(State())
    private let finished = Atomic<Bool>(false)
    private static let queue = DispatchQueue(label: "fetch-attachment.batch-input")

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Whether `next()` has answered with no lines: the input has ended and every line was
    /// handed out.
    var ended: Bool { finished.load(ordering: .acquiring) }

    /// The next lines, without their line breaks (`\n` or `\r\n`): at least one, and every
    /// whole line that arrived with it (one hop to the reading thread per chunk of input, not per
    /// line); none at the end of the input. A last line without a line break counts.
    func next() async -> [Data] {
        await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: self.readLines()) }
        }
    }

    private func readLines() -> [Data] {
        state.withLock { state -> [Data] in
            while true {
                let atEnd = state.atEnd
                let (ranges, rest) = BatchInput.lineRanges(in: state.buffer.span, includingUnfinished: atEnd)
                let lines = ranges.map { Data(state.buffer[$0]) }
                state.buffer.removeSubrange(..<rest)
                if !lines.isEmpty { return lines }
                if state.atEnd {
                    finished.store(true, ordering: .releasing)
                    return []
                }
                let previous = state.buffer.count
                state.buffer.append(contentsOf: repeatElement(0, count: 64 * 1024))
                let count = state.buffer.withUnsafeMutableBytes { bytes in
                    read(descriptor, bytes.baseAddress! + previous, bytes.count - previous)
                }
                state.buffer.removeSubrange(max(previous, previous + count)...)
                if count == 0 || (count < 0 && errno != EINTR) { state.atEnd = true }
            }
        }
    }
}

/// Prints outcomes in input order as soon as every earlier one is in, through a buffer of its
/// own (written when it holds 64 KiB, and on `flush()`).
private struct OrderedEmitter: Sendable {
    /// An outcome as printed and as the summary counts it.
    struct Entry: Sendable {
        /// The printed line, line break included.
        var line: [UInt8]
        var record: BatchRecord
    }

    let printer: OutcomePrinter
    /// Counts every outcome for the campaign report, when one is asked for.
    let report: CampaignReport?
    private var pending: [Int: Entry] = [:]
    private var nextToPrint = 0
    private var output: [UInt8] = []
    /// What the summary needs of each printed outcome (the outcomes themselves, payloads and
    /// all, are let go once printed: a batch may hold millions).
    private(set) var records: [BatchRecord] = []

    init(printer: OutcomePrinter, report: CampaignReport?) {
        self.printer = printer
        self.report = report
    }

    /// What is printed and counted of `outcome`, the `index`th payload.
    static func entry(for outcome: Outcome, at index: Int, printer: OutcomePrinter) -> Entry {
        var line: [UInt8] = []
        printer.appendLine(outcome, index: index, to: &line)
        return Entry(
            line: line,
            record: BatchRecord(attached: outcome.status == .attached, reason: outcome.reason, milliseconds: outcome.elapsedMilliseconds))
    }

    mutating func add(_ outcome: Outcome, at index: Int) {
        report?.add(outcome, at: index)
        add(Self.entry(for: outcome, at: index, printer: printer), at: index)
    }

    mutating func add(_ entry: Entry, at index: Int) {
        pending[index] = entry
        while let ready = pending.removeValue(forKey: nextToPrint) {
            output.append(contentsOf: ready.line)
            records.append(ready.record)
            nextToPrint += 1
        }
        if output.count >= 1 << 16 { flush() }
    }

    /// Writes what is buffered to standard output.
    mutating func flush() {
        guard !output.isEmpty else { return }
        try? FileHandle.standardOutput.write(contentsOf: output)
        output.removeAll(keepingCapacity: true)
    }
}

/// The next line for a batch's workers to take.
private final class BatchCursor: Sendable {
    private let next = Atomic<Int>(0)

    /// A line number no other call got, or `nil` once all `count` are taken.
    func take(below count: Int) -> Int? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }
}

/// An `OrderedEmitter` that workers on any thread hand outcomes to.
private final class SharedEmitter: Sendable {
    private let emitter: Mutex<OrderedEmitter>
    private let printer: OutcomePrinter
    private let report: CampaignReport?

    init(_ emitter: OrderedEmitter) {
        printer = emitter.printer
        report = emitter.report
        self.emitter = Mutex(emitter)
    }

    /// Prints what is ready, in input order (under the lock, so lines never interleave). The
    /// outcome is formatted before the lock is taken, so that workers format side by side.
    func add(_ outcome: Outcome, at index: Int) {
        report?.add(outcome, at: index)
        let entry = OrderedEmitter.entry(for: outcome, at: index, printer: printer)
        emitter.withLock { $0.add(entry, at: index) }
    }

    /// Writes what is buffered.
    func flush() { emitter.withLock { $0.flush() } }

    var records: [BatchRecord] { emitter.withLock { $0.records } }
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
struct BatchRecord: Sendable {
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
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        for record in records { _ = latency.record(UInt64(max(1, min(3_600_000_000, (record.milliseconds * 1_000).rounded())))) }
        func percentile(_ p: Double) -> String {
            guard !records.isEmpty else { return "-" }
            return String(format: "%.1f", Double(latency.valueAtPercentile(p * 100)) / 1_000)
        }
        var lines = [
            String(format: "batch: %d payloads in %.2f s (%.0f/s): %d attached, %d original", records.count, seconds, rate, attached, records.count - attached)
        ]
        if !byReason.isEmpty {
            lines.append("  original by reason: " + byReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines.append(
            "  origin requests \(statistics.originRequests) (conditional \(statistics.conditionalRequests), not modified \(statistics.notModified)), cache hits \(statistics.cacheHits), coalesced \(statistics.coalesced), bytes downloaded \(statistics.bytesDownloaded)")
        lines.append("  latency ms: p50 \(percentile(0.5))  p90 \(percentile(0.9))  p99 \(percentile(0.99))  max \(records.isEmpty ? "-" : String(format: "%.1f", Double(latency.max) / 1_000))")
        return lines.joined(separator: "\n")
    }
}
