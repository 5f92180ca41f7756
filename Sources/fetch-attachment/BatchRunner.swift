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
    /// A regular file is read a chunk at a time by `concurrency` workers, each taking the next
    /// line as it finishes one. Standard input or a pipe is read as lines arrive, so that a
    /// producer can spread a spike over time: each payload's deadline starts when its line is read
    /// (or, with `concurrency` payloads already in flight, when one of them ends), and each outcome
    /// is printed, and flushed, as soon as it and every earlier one are in. Either way no more
    /// than one line, of at most the payload limit, is held while it arrives: a longer line is its
    /// own `invalid-payload` outcome, skipped as it streams past.
    func run(input: String) async throws -> Bool {
        let configuration = options.fetcherConfiguration()
        let limit = configuration.maximumPayloadBytes
        let descriptor = input == "-" ? STDIN_FILENO : open(input, O_RDONLY)
        guard descriptor >= 0 else {
            throw ValidationError("cannot read \(TerminalText.escaped(input)): \(String(cString: strerror(errno)))")
        }
        let source: BatchInput
        if Self.isRegularFile(descriptor) {
            source = .file(FileLineSource(descriptor: descriptor, limit: limit))
        } else {
            source = .stream(LineReader(descriptor: descriptor, limit: limit))
        }
        let printer = OutcomePrinter(json: options.json)
        let report = reportPath.map { _ in CampaignReport() }
        let started = ContinuousClock.now
        let progress = Progress(total: Progress.isEnabled && source.isFile ? FileLineSource.countLines(descriptor) : nil)
        let (records, statistics) = try await withAttachmentFetcher(
            configuration: configuration, logger: options.logger()
        ) { fetcher -> ([BatchRecord], AttachmentFetcher.Statistics) in
            let records = await Self.processAll(
                source, through: fetcher, limit: limit, concurrency: concurrency, printer: printer, report: report,
                progress: progress)
            return (records, fetcher.statistics)
        }
        progress.finish()
        let wall = started.duration(to: .now)
        let summary = BatchSummary(records: records, statistics: statistics, wall: wall)
        StandardStreams.error.write(summary.text + "\n")
        if let error = source.readError {
            StandardStreams.error.write(
                "fetch-attachment: cannot read \(TerminalText.escaped(input)) to its end: \(String(cString: strerror(error)))\n")
            throw ExitCode(StandardStreams.writeErrorStatus)
        }
        if let report, let reportPath {
            do {
                try Data(report.html(statistics: statistics, wall: wall).utf8).write(to: URL(fileURLWithPath: reportPath))
                StandardStreams.error.write("report: \(TerminalText.escaped(reportPath))\n")
            } catch {
                StandardStreams.error.write(
                    "fetch-attachment: cannot write the report \(TerminalText.escaped(reportPath)): \(error.localizedDescription)\n")
                throw ExitCode(1)
            }
        }
        return records.allSatisfy(\.attached)
    }

    /// The outcome of one line: the fetcher's for a payload; `invalid-payload` for a line
    /// longer than `limit`, which the fetcher never sees.
    /// The outcome of a line; `nil` for a blank one, which is skipped.
    private static func outcome(of line: BatchLine, through fetcher: AttachmentFetcher, limit: Int) async -> Outcome? {
        switch line {
        case .payload(let payload): return await fetcher.process(payload)
        case .tooLong: return PayloadInput.tooLargeOutcome(limit: limit, what: "the line")
        case .blank: return nil
        }
    }

    /// Processes every line, at most `concurrency` at once, printing outcomes in input order.
    private static func processAll(
        _ source: BatchInput, through fetcher: AttachmentFetcher, limit: Int, concurrency: Int, printer: OutcomePrinter,
        report: CampaignReport?, progress: Progress
    ) async -> [BatchRecord] {
        let reporter = progress.startReporting()
        defer { reporter?.cancel() }
        switch source {
        case .file(let lines):
            return await processLines(
                lines, through: fetcher, limit: limit, concurrency: concurrency,
                emitter: OrderedEmitter(printer: printer, report: report), progress: progress)
        case .stream(let reader):
            return await processStream(
                reader, through: fetcher, limit: limit, concurrency: concurrency,
                emitter: OrderedEmitter(printer: printer, report: report), progress: progress)
        }
    }

    /// Lines of a regular file: `concurrency` workers, each taking the next line as it finishes
    /// one (and stopping early once standard output has failed: the outcomes could not be told).
    /// A task per worker rather than per payload: on a warm cache, with a task made and ended for
    /// each of 100,000 payloads (and every outcome passing through one parent task) the batch took
    /// a third longer.
    private static func processLines(
        _ lines: FileLineSource, through fetcher: AttachmentFetcher, limit: Int, concurrency: Int,
        emitter: OrderedEmitter, progress: Progress
    ) async -> [BatchRecord] {
        let emitter = SharedEmitter(emitter)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var sliceStart = ContinuousClock.now
                    while !StandardStreams.output.failed, let (index, line) = lines.take() {
                        let outcome = await Self.outcome(of: line, through: fetcher, limit: limit)
                        progress.advance()
                        if let outcome { emitter.add(outcome, at: index) } else { emitter.skip(index) }
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
        case outcome(index: Int, Outcome?)
        case lines([BatchLine])
    }

    /// Lines as they arrive: the task group is the one place everything comes in, outcomes and
    /// the next lines (read by a child task of their own, one read outstanding at a time). So
    /// outcomes are printed, and flushed, while the producer is still writing, however slowly
    /// lines come.
    private static func processStream(
        _ reader: LineReader, through fetcher: AttachmentFetcher, limit: Int, concurrency: Int, emitter: OrderedEmitter,
        progress: Progress
    ) async -> [BatchRecord] {
        await withTaskGroup(of: StreamEvent.self) { group -> [BatchRecord] in
            var emitter = emitter
            var submitted = 0
            var inFlight = 0
            func start(_ line: BatchLine) {
                let index = submitted
                group.addTask { .outcome(index: index, await Self.outcome(of: line, through: fetcher, limit: limit)) }
                submitted += 1
                inFlight += 1
            }
            // Lines read but not started yet (the window is full); more are read only while
            // fewer than `concurrency` wait.
            var waiting = Deque<BatchLine>()
            var reading = true
            group.addTask { .lines(await reader.next()) }
            while let event = await group.next() {
                switch event {
                case .lines(let lines):
                    for line in lines {
                        if inFlight < concurrency { start(line) } else { waiting.append(line) }
                    }
                    // Once standard output has failed, no more is read: the outcomes could not be told.
                    reading = !lines.isEmpty && waiting.count < concurrency && !StandardStreams.output.failed
                    if reading { group.addTask { .lines(await reader.next()) } }
                case .outcome(let index, let outcome):
                    inFlight -= 1
                    progress.advance()
                    if let outcome { emitter.add(outcome, at: index) } else { emitter.skip(index) }
                    emitter.flush()
                    if let line = waiting.popFirst() { start(line) }
                    if !reading, !reader.ended, waiting.count < concurrency, !StandardStreams.output.failed {
                        reading = true
                        group.addTask { .lines(await reader.next()) }
                    }
                }
            }
            emitter.flush()
            return emitter.records
        }
    }

    private static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }
}

/// Where a batch's payloads come from.
enum BatchInput: Sendable {
    /// A regular file, read a chunk at a time as workers take its lines.
    case file(FileLineSource)
    /// Lines read as they arrive (standard input, a pipe, a FIFO).
    case stream(LineReader)

    var isFile: Bool {
        if case .file = self { true } else { false }
    }

    /// `errno` of a read that ended the input early.
    var readError: Int32? {
        switch self {
        case .file(let source): source.readError
        case .stream(let reader): reader.readError
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
    /// Entries waiting for the ones before them; `nil` for a blank line's index.
    private var pending: [Int: Entry?] = [:]
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
        pending[index] = .some(entry)
        printReady()
    }

    /// Passes over a blank line's index: nothing is printed or counted for it.
    mutating func skip(_ index: Int) {
        pending[index] = .some(nil)
        printReady()
    }

    private mutating func printReady() {
        while let ready = pending.removeValue(forKey: nextToPrint) {
            if let ready {
                output.append(contentsOf: ready.line)
                records.append(ready.record)
            }
            nextToPrint += 1
        }
        if output.count >= 1 << 16 { flush() }
    }

    /// Writes what is buffered to standard output.
    mutating func flush() {
        guard !output.isEmpty else { return }
        StandardStreams.output.write(output)
        output.removeAll(keepingCapacity: true)
    }
}

/// An `OrderedEmitter` that workers on any thread hand outcomes to.
private final class SharedEmitter: Sendable {
    private let emitter: Locked<OrderedEmitter>
    private let printer: OutcomePrinter
    private let report: CampaignReport?

    init(_ emitter: OrderedEmitter) {
        printer = emitter.printer
        report = emitter.report
        self.emitter = Locked(emitter)
    }

    /// Prints what is ready, in input order (under the lock, so lines never interleave). The
    /// outcome is formatted before the lock is taken, so that workers format side by side.
    func add(_ outcome: Outcome, at index: Int) {
        report?.add(outcome, at: index)
        let entry = OrderedEmitter.entry(for: outcome, at: index, printer: printer)
        emitter.withLock { $0.add(entry, at: index) }
    }

    /// Passes over a blank line's index.
    func skip(_ index: Int) { emitter.withLock { $0.skip(index) } }

    /// Writes what is buffered.
    func flush() { emitter.withLock { $0.flush() } }

    var records: [BatchRecord] { emitter.withLock { $0.records } }
}

/// A progress bar on stderr, only when stderr is a terminal and standard output is not.
final class Progress: Sendable {
    /// How many payloads there are, when known (not while reading a pipe).
    let total: Int?
    private let done = Atomic<Int>(0)
    private let enabled = Progress.isEnabled

    /// Whether a bar is drawn: only when stderr is a terminal.
    /// Not when standard output is the same terminal: outcome lines would land inside the bar
    /// (and show the progress themselves).
    static var isEnabled: Bool { isatty(STDERR_FILENO) == 1 && isatty(STDOUT_FILENO) != 1 }

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
        StandardStreams.error.write("\n")
    }

    private func draw() {
        let count = done.load(ordering: .relaxed)
        guard let total else {
            StandardStreams.error.write("\r\(count) done")
            return
        }
        let width = 30
        let filled = total == 0 ? width : count * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        StandardStreams.error.write("\r[\(bar)] \(count)/\(total)")
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
