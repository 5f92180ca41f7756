import AttachmentFetcher

/// Prints outcomes in input order as soon as every earlier one is in, through a buffer of its
/// own (written when it holds 64 KiB, and on `flush()`).
struct OrderedEmitter: Sendable {
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
            record: BatchRecord(outcome, at: index))
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
final class SharedEmitter: Sendable {
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
