import AttachmentFetcher
import Foundation
import Synchronization
import UnixSignals

/// Ctrl-C (`SIGINT`) or `SIGTERM` during a batch.
///
/// The first one starts no more payloads. The payloads in flight end by their own deadlines
/// (`--timeout`), so each outcome is a real one; then their outcomes, the summary and the report
/// are written as after any batch, and the exit status is the signal's (130 for `SIGINT`, 143 for
/// `SIGTERM`). Nothing already done is lost: the outcomes held back to keep the input's order,
/// the summary and the report would all die with the process.
///
/// A second one ends the process at once, with the same status, once the outcomes printed by
/// then are written (`beforeQuitting`); so does a first one that comes after every payload's
/// outcome is in (`batchEnded`), while the summary and the report are written.
///
/// A signal ignored when the process started stays ignored, as for a shell script's background
/// job (libdispatch, under `UnixSignals`, does not catch it then).
final class BatchInterruption: Sendable {
    private let received = Atomic<Int32>(0)
    /// Called once, on the first signal: a read of the input that may never return gives up.
    /// Keyed, so that a read that returned takes its action out (`forget`): a batch streamed a
    /// line at a time makes one read per line.
    private let onInterrupt = Locked<(nextKey: Int, actions: [Int: @Sendable () -> Void])>((0, [:]))
    /// Called on the second signal, before the process ends: writes what is printed.
    private let onQuit = Locked<(@Sendable () -> Void)?>(nil)

    /// The signal that interrupted the batch, if one did.
    var signal: Int32? {
        let signal = received.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// Whether the batch was interrupted.
    var requested: Bool { received.load(ordering: .relaxed) != 0 }

    /// The first line taken but not started because the batch was interrupted (a worker that
    /// waited for room in the reorder window when the signal came), if any.
    private let lowestNotStarted = Atomic<Int>(.max)
    var firstLineNotStarted: Int? {
        let line = lowestNotStarted.load(ordering: .relaxed)
        return line == .max ? nil : line
    }

    /// Notes that the line `index` was taken but not started.
    func notStarted(_ index: Int) { lowestNotStarted.min(index, ordering: .relaxed) }

    /// The exit status of an interrupted batch: as a shell reports a process the signal ended.
    var exitStatus: Int32? { signal.map { 128 + $0 } }

    /// Runs `body` with `SIGINT` and `SIGTERM` caught (swift-service-lifecycle's `UnixSignals`);
    /// `timeout` (seconds) is what the message on the first signal promises at most.
    static func watching<Value>(timeout: Double, _ body: (BatchInterruption) async throws -> Value) async rethrows -> Value {
        let interruption = BatchInterruption()
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let watcher = Task {
            for await signal in signals { interruption.receive(signal.rawValue, timeout: timeout) }
        }
        defer { watcher.cancel() }
        return try await body(interruption)
    }

    /// `action` runs when the batch is interrupted (at once if it already was, and then the
    /// answer is `nil`), unless `forget` is called first with the key returned.
    func whenInterrupted(_ action: @escaping @Sendable () -> Void) -> Int? {
        let key = onInterrupt.withLock { state -> Int? in
            if requested { return nil }
            defer { state.nextKey += 1 }
            state.actions[state.nextKey] = action
            return state.nextKey
        }
        if key == nil { action() }
        return key
    }

    /// `action` runs on a second signal, just before the process ends (the last one given).
    func beforeQuitting(_ action: @escaping @Sendable () -> Void) {
        onQuit.withLock { $0 = action }
    }

    /// Takes out the action `whenInterrupted` registered under `key`.
    func forget(_ key: Int) {
        _ = onInterrupt.withLock { $0.actions.removeValue(forKey: key) }
    }

    /// Says that every payload's outcome is in: from now on a signal ends the process at once,
    /// as a second one does, since what is left (the summary, the report) has nothing in flight
    /// to wait for and may wait on a file that never gives way.
    func batchEnded() { ended.store(true, ordering: .relaxed) }
    private let ended = Atomic<Bool>(false)

    func receive(_ signal: Int32, timeout: Double) {
        if ended.load(ordering: .relaxed) {
            onQuit.withLock { $0 }?()
            StandardStreams.error.write("fetch-attachment: interrupted while writing the summary and report: quitting now\n")
            StandardStreams.exit(128 + signal)
        }
        guard received.compareExchange(expected: 0, desired: signal, ordering: .relaxed).exchanged else {
            onQuit.withLock { $0 }?()
            StandardStreams.error.write("fetch-attachment: interrupted again: quitting now\n")
            StandardStreams.exit(128 + signal)
        }
        let seconds = String(format: "%g", timeout)
        StandardStreams.error.writeWrapped(
            "fetch-attachment: interrupted: no more payloads are started; those in flight end by their deadline (at most \(seconds) s), then the outcomes, summary and report are written. Interrupt again to quit now."
        )
        for action in onInterrupt.withLock({ state in defer { state.actions = [:] }; return state.actions.values }) { action() }
    }
}
