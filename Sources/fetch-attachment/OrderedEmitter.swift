import AttachmentFetcher

/// Prints outcomes in input order as soon as every earlier one is in, through a buffer of its
/// own: written when it holds 64 KiB, on `flush()` (which `SharedEmitter`'s flusher calls every
/// `flushInterval`), and after every line when standard output is a terminal.
struct OrderedEmitter: Sendable {
    /// An outcome as printed and as the summary counts it.
    struct Entry: Sendable {
        /// The printed line, line break included.
        var line: [UInt8]
        var record: BatchRecord
        /// The outcome, kept until its turn when a campaign report counts it: the report takes
        /// outcomes in input order, so that its rows, samples and limits do not depend on which
        /// payload finished first.
        var outcome: Outcome?
    }

    let printer: OutcomePrinter
    /// Counts every outcome for the campaign report, when one is asked for.
    let report: CampaignReport?
    /// Entries waiting for the ones before them; `nil` for a blank line's index.
    private var pending: [Int: Entry?] = [:]
    /// The index of the oldest line not printed yet: every line before it is.
    private(set) var nextToPrint = 0
    private var output: [UInt8] = []
    /// What the summary needs of each printed outcome (the outcomes themselves, payloads and
    /// all, are let go once printed: a batch may hold millions).
    private(set) var records: [BatchRecord] = []

    /// Whether each printed line is written at once: standard output is a terminal, where a
    /// person reads the outcomes as they come.
    private let writesEachLine: Bool

    init(printer: OutcomePrinter, report: CampaignReport?, writesEachLine: Bool = CommandSyscalls.isTerminal(.standardOutput)) {
        self.printer = printer
        self.report = report
        self.writesEachLine = writesEachLine
    }

    /// What is printed and counted of `outcome`, the `index`th payload.
    static func entry(for outcome: Outcome, at index: Int, printer: OutcomePrinter, reported: Bool) -> Entry {
        var line: [UInt8] = []
        printer.appendLine(outcome, index: index, to: &line)
        return Entry(line: line, record: BatchRecord(outcome, at: index), outcome: reported ? outcome : nil)
    }

    mutating func add(_ outcome: Outcome, at index: Int) {
        add(Self.entry(for: outcome, at: index, printer: printer, reported: report != nil), at: index)
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
                if let outcome = ready.outcome { report?.add(outcome, at: nextToPrint) }
            }
            nextToPrint += 1
        }
        if output.count >= 1 << 16 || writesEachLine { flush() }
    }

    /// Writes what is buffered to standard output.
    mutating func flush() {
        guard !output.isEmpty else { return }
        StandardStreams.output.write(output)
        output.removeAll(keepingCapacity: true)
    }
}

/// An `OrderedEmitter` that workers on any thread hand outcomes to.
final class SharedEmitter: Sendable {
    private struct State {
        var emitter: OrderedEmitter
        /// Workers waiting for room (`waitForRoom`): each resumes once this line is printed.
        var waiters: [(line: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Locked<State>
    private let printer: OutcomePrinter
    private let report: CampaignReport?

    init(_ emitter: OrderedEmitter) {
        printer = emitter.printer
        report = emitter.report
        state = Locked(State(emitter: emitter))
    }

    /// Prints what is ready, in input order (under the lock, so lines never interleave). The
    /// outcome is formatted before the lock is taken, so that workers format side by side.
    func add(_ outcome: Outcome, at index: Int) {
        let entry = OrderedEmitter.entry(for: outcome, at: index, printer: printer, reported: report != nil)
        advance { $0.add(entry, at: index) }
    }

    /// Passes over a blank line's index.
    func skip(_ index: Int) { advance { $0.skip(index) } }

    /// Returns once fewer than `window` lines before `index` are unprinted: the outcomes that
    /// wait behind a slow line (up to its deadline) are at most `window`, whatever the pace of
    /// the others. Every line before `index` has been taken, so the wait ends.
    func waitForRoom(before index: Int, window: Int) async {
        if state.withLock({ index - $0.emitter.nextToPrint < window }) { return }
        await withCheckedContinuation { continuation in
            let roomy = state.withLock { state in
                if index - state.emitter.nextToPrint < window { return true }
                state.waiters.append((index - window, continuation))
                return false
            }
            if roomy { continuation.resume() }
        }
    }

    /// Runs `change` on the emitter, then resumes the workers it made room for.
    private func advance(_ change: (inout OrderedEmitter) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state.emitter)
            guard !state.waiters.isEmpty else { return [] }
            let printed = state.emitter.nextToPrint
            let ready = state.waiters.filter { $0.line < printed }.map(\.continuation)
            if !ready.isEmpty { state.waiters.removeAll { $0.line < printed } }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Writes what is buffered.
    func flush() { state.withLock { $0.emitter.flush() } }

    /// How long a printed outcome waits in the buffer at most: a batch read from a file writes
    /// 64 KiB at a time, and without this a slow campaign's outcomes (a few hundred bytes each)
    /// would show only at its end, and be lost with the process if it were killed.
    static let flushInterval = Duration.milliseconds(250)

    /// Runs `body` while a task writes what is buffered every `flushInterval`; then flushes.
    func flushingPeriodically<Value>(_ body: () async -> Value) async -> Value {
        let flusher = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.flushInterval)
                flush()
            }
        }
        let value = await body()
        flusher.cancel()
        flush()
        return value
    }

    var records: [BatchRecord] { state.withLock { $0.emitter.records } }
}
