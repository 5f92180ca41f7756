import ArgumentParser
import AttachmentFetcher
import Foundation
import SystemPackage
import DequeModule

/// `fetch-attachment --batch FILE`: every line a payload, all through one fetcher, at most
/// `concurrency` at once; outcomes printed in input order, a summary on stderr.
struct BatchRunner {
    var options: FetchOptions
    var concurrency: Int
    /// Where the HTML campaign report goes, if anywhere.
    var reportPath: String? = nil

    /// Runs the batch; its exit status: 0 when every payload got its attachment, 1 when not, 130
    /// or 143 when Ctrl-C or `SIGTERM` interrupted it (see `BatchInterruption`), 73 when the
    /// report could not be written, 74 when the input could not be read to its end.
    ///
    /// A regular file is read a chunk at a time by `concurrency` workers, each taking the next
    /// line as it finishes one. Standard input or a pipe is read as lines arrive, so that a
    /// producer can spread a spike over time: each payload's deadline starts when its line is read
    /// (or, with `concurrency` payloads already in flight, when one of them ends), and each outcome
    /// is printed, and flushed, as soon as it and every earlier one are in. Either way no more
    /// than one line, of at most the payload limit, is held while it arrives: a longer line is its
    /// own `invalid-payload` outcome, skipped as it streams past.
    func run(input: String) async throws -> Int32 {
        let configuration = options.fetcherConfiguration()
        let limit = configuration.maximumPayloadBytes
        let descriptor: FileDescriptor
        do {
            descriptor = try CommandSyscalls.openForReading(input)
        } catch {
            throw UnusableFile.unreadable("cannot read '\(TerminalText.escaped(input))': \(error)")
        }
        let source: BatchInput
        if CommandSyscalls.isRegularFile(descriptor) {
            source = .file(FileLineSource(descriptor: descriptor, limit: limit))
        } else {
            source = .stream(LineReader(descriptor: descriptor, limit: limit))
        }
        let printer = OutcomePrinter(json: options.json)
        let report = reportPath.map { _ in
            CampaignReport(platforms: configuration.platforms, input: input == "-" ? "standard input" : input, timeout: options.timeout)
        }
        let started = ContinuousClock.now
        let progress = Progress(total: Progress.isEnabled && source.isFile ? FileLineSource.countLines(descriptor) : nil)

        /// The summary, the input's read error, the report and the exit status, once every
        /// payload's outcome is in.
        func finish(records: [BatchRecord], statistics: PushAttachmentFetcher.Statistics, interruption: BatchInterruption) -> Int32 {
            progress.finish()
            let wall = started.duration(to: .now)
            let handedOut = interruption.signal != nil && interruption.firstLineNotStarted == nil && source.handedOutEveryLine
            let firstNotProcessed = min(BatchSummary.firstLineNotProcessed(records), interruption.firstLineNotStarted ?? .max)
            // Not asked once interrupted: a read may still be waiting for input, holding the reader.
            let readError = interruption.requested ? nil : source.readError
            let summary = BatchSummary(
                records: records, statistics: statistics, wall: wall, platforms: configuration.platforms, interruption: interruption.signal,
                firstLineNotProcessed: handedOut ? nil : firstNotProcessed, inputFailed: readError != nil, proxy: configuration.proxy,
                connectionPool: configuration.connectionPool)
            StandardStreams.error.writeWrapped(summary.text)
            if let error = readError {
                StandardStreams.error.write(
                    "fetch-attachment: cannot read \(TerminalText.escaped(input)) to its end: \(StandardStreams.readFailure(of: input, error))\n")
            }
            // The report is written whatever ended the batch: what was done is not lost.
            var reportFailed = false
            if let report, let reportPath {
                do {
                    let html = report.html(
                        statistics: statistics, wall: wall,
                        interruption: interruption.signal.map { ($0, handedOut ? nil : firstNotProcessed) })
                    try CommandSyscalls.writeFile(reportPath, Array(html.utf8))
                    StandardStreams.error.write("report: \(TerminalText.escaped(reportPath))\n")
                } catch {
                    // What is wrong with the path now (its directory gone, say), else the write's
                    // `Errno`, in the system's words.
                    StandardStreams.error.write(
                        "fetch-attachment: cannot write the report \(TerminalText.escaped(reportPath)): \(PathCheck.writeProblem(reportPath) ?? "\(error)")\n")
                    reportFailed = true
                }
            }
            // The input's read error, a signal, then the report's failure: each says more than
            // whether every payload got its attachment.
            if readError != nil { return StandardStreams.writeErrorStatus }
            if let status = interruption.exitStatus { return status }
            if reportFailed { return UnusableFile.cannotCreate }
            // No payload is no attachment ready: an empty input (a step before that failed) is not
            // a campaign that went well.
            return !records.isEmpty && records.allSatisfy(\.attached) ? 0 : 1
        }

        // The signals stay watched to the end: once the batch is over, one ends the process at
        // once, since the summary or the report may wait on a file that never gives way.
        return try await BatchInterruption.watching(timeout: options.timeout) { interruption -> Int32 in
            func processAll(_ process: @escaping Process) async -> [BatchRecord] {
                await Self.processAll(
                    source, process: process, limit: limit, concurrency: concurrency, printer: printer, report: report,
                    progress: progress, interruption: interruption)
            }
            let processed: ([BatchRecord], PushAttachmentFetcher.Statistics)
            do {
                processed = try await CommandFetcher.with(
                    configuration: configuration, logger: options.logger()
                ) { fetcher -> ([BatchRecord], PushAttachmentFetcher.Statistics) in
                    BatchSummary.writeCacheNotes(for: fetcher)
                    let records = await processAll { await fetcher.process($0) }
                    BatchSummary.writeCacheWriteNote(for: fetcher)
                    return (records, fetcher.statistics)
                }
            } catch let error as AttachmentFetcherError {
                // No fetcher (the output or cache directory cannot be used): as for one payload,
                // each payload's outcome says so, and the summary and report are written. Said
                // once first, since it is the campaign's problem, not its payloads'.
                StandardStreams.error.writeWrapped(
                    "fetch-attachment: \(error.message): no file can be fetched, so every payload that names one is storage")
                processed = (await processAll { PayloadInput.unusableOutcome(error, payload: $0, configuration: configuration) }, PushAttachmentFetcher.Statistics())
            }
            interruption.batchEnded()
            let (records, statistics) = processed
            return finish(records: records, statistics: statistics, interruption: interruption)
        }
    }

    /// The outcome of one line: the fetcher's for a payload; `invalid-payload` for a line
    /// longer than `limit`, which the fetcher never sees; `nil` for a blank one, which is skipped.
    /// The payload's log records (`--verbose`) carry its line number, 1-based (`BatchLineNumber`).
    private static func outcome(of line: BatchLine, at index: Int, process: Process, limit: Int) async -> Outcome? {
        switch line {
        case .payload(let payload): return await BatchLineNumber.$current.withValue(index + 1) { await process(payload) }
        case .tooLong: return PayloadInput.tooLargeOutcome(limit: limit, what: "the line", rest: "its rest is skipped")
        case .blank: return nil
        }
    }

    /// What makes a payload's outcome: the fetcher's `process`.
    typealias Process = @Sendable (Data) async -> Outcome

    /// Processes every line, at most `concurrency` at once, printing outcomes in input order.
    private static func processAll(
        _ source: BatchInput, process: @escaping Process, limit: Int, concurrency: Int, printer: OutcomePrinter,
        report: CampaignReport?, progress: Progress, interruption: BatchInterruption
    ) async -> [BatchRecord] {
        let reporter = progress.startReporting()
        defer { reporter?.cancel() }
        switch source {
        case .file(let lines):
            return await processLines(
                lines, process: process, limit: limit, concurrency: concurrency,
                emitter: OrderedEmitter(printer: printer, report: report), progress: progress, interruption: interruption)
        case .stream(let reader):
            return await processStream(
                reader, process: process, limit: limit, concurrency: concurrency,
                emitter: OrderedEmitter(printer: printer, report: report), progress: progress, interruption: interruption)
        }
    }

    /// Lines of a regular file: `concurrency` workers, each taking the next line as it finishes
    /// one (and stopping early once standard output has failed, as the outcomes could not be told,
    /// or once the batch is interrupted).
    /// A task per worker rather than per payload: on a warm cache, with a task made and ended for
    /// each of 100,000 payloads (and every outcome passing through one parent task) the batch took
    /// a third longer.
    private static func processLines(
        _ lines: FileLineSource, process: @escaping Process, limit: Int, concurrency: Int,
        emitter: OrderedEmitter, progress: Progress, interruption: BatchInterruption
    ) async -> [BatchRecord] {
        let emitter = SharedEmitter(emitter)
        // A second interrupt quits at once: what is printed by then is written first.
        interruption.beforeQuitting { emitter.flush() }
        // `concurrency` workers, each taking the next line as it finishes one.
        func runWorkers() async { await withTaskGroup(of: Void.self) { group in
            // No more workers than lines: a --concurrency of a million on eight lines made a
            // million tasks (1.3 GB).
            for worker in 0..<concurrency {
                guard lines.holdsMoreLines(than: worker) else { break }
                group.addTask {
                    var sliceStart = ContinuousClock.now
                    while !StandardStreams.output.failed, !interruption.requested, let (index, line) = lines.take() {
                        await emitter.waitForRoom(before: index, window: Self.reorderWindow(concurrency))
                        // Interrupted (or stdout gone) while it waited: the line is not started,
                        // and passed over so that the outcomes after it still print.
                        if interruption.requested || StandardStreams.output.failed {
                            interruption.notStarted(index)
                            emitter.skip(index)
                            break
                        }
                        let outcome = await Self.outcome(of: line, at: index, process: process, limit: limit)
                        // A blank line is no payload: neither counted by the bar nor advanced.
                        if let outcome {
                            progress.advance()
                            emitter.add(outcome, at: index)
                        } else {
                            emitter.skip(index)
                        }
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
        } }
        await emitter.flushingPeriodically(runWorkers)
        return emitter.records
    }

    /// How many lines past the oldest unprinted one a batch starts (at least 16,384, and four
    /// times its concurrency): outcomes are printed in input order, so those that finish behind
    /// a slow line wait in memory (about 2 KB each), and without a bound a warm cache's 100,000
    /// payloads a second would pile up behind one line that takes its whole deadline.
    static func reorderWindow(_ concurrency: Int) -> Int { max(16_384, 4 * concurrency) }

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
        _ reader: LineReader, process: @escaping Process, limit: Int, concurrency: Int, emitter: OrderedEmitter,
        progress: Progress, interruption: BatchInterruption
    ) async -> [BatchRecord] {
        await withTaskGroup(of: StreamEvent.self) { group -> [BatchRecord] in
            var emitter = emitter
            var submitted = 0
            var inFlight = 0
            func start(_ line: BatchLine) {
                let index = submitted
                group.addTask { .outcome(index: index, await Self.outcome(of: line, at: index, process: process, limit: limit)) }
                submitted += 1
                inFlight += 1
            }
            // Started only while fewer than `concurrency` are in flight, and the line is within
            // `reorderWindow` of the oldest one not printed.
            let window = Self.reorderWindow(concurrency)
            func hasRoom() -> Bool { inFlight < concurrency && submitted - emitter.nextToPrint < window }
            // Lines read but not started yet (the window is full); more are read only while
            // fewer than `concurrency` wait.
            var waiting = Deque<BatchLine>()
            var reading = true
            group.addTask { .lines(await reader.next(until: interruption)) }
            while let event = await group.next() {
                // Interrupted, lines read but not started are dropped, and no more are read.
                if interruption.requested { waiting.removeAll() }
                switch event {
                case .lines(let lines):
                    for line in lines where !interruption.requested {
                        if waiting.isEmpty, hasRoom() { start(line) } else { waiting.append(line) }
                    }
                    // Once standard output has failed, no more is read: the outcomes could not be told.
                    reading = !lines.isEmpty && waiting.count < concurrency && !StandardStreams.output.failed && !interruption.requested
                    if reading { group.addTask { .lines(await reader.next(until: interruption)) } }
                case .outcome(let index, let outcome):
                    inFlight -= 1
                    if let outcome {
                        progress.advance()
                        emitter.add(outcome, at: index)
                    } else {
                        emitter.skip(index)
                    }
                    emitter.flush()
                    while hasRoom(), let line = waiting.popFirst() { start(line) }
                    // `interruption` first: once interrupted, `reader.ended` could wait on a read that never returns.
                    if !interruption.requested, !reading, !reader.ended, waiting.count < concurrency, !StandardStreams.output.failed {
                        reading = true
                        group.addTask { .lines(await reader.next(until: interruption)) }
                    }
                }
            }
            emitter.flush()
            return emitter.records
        }
    }
}
