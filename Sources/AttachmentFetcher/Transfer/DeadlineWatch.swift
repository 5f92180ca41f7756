import Dispatch

/// Answers the callers of transfers the engine's thread has not answered by their deadlines.
///
/// The engine's thread answers every transfer at its deadline, with what it had done by then;
/// but libcurl can hold that thread inside `curl_multi_perform` for as long as an origin floods
/// an HTTP/2 connection with frames (endless PRIORITY or empty DATA frames: libcurl reads them
/// until they stop). One timer, ticking while transfers are out, finds the tickets past their
/// deadline and `answerGrace`, and hands each to `overdue`, which answers the caller and tells
/// the engine to drop the transfer when it gets to it. One timer for all: a Dispatch timer per
/// transfer cost a tenth of the CPU time of a campaign of distinct URLs.
final class DeadlineWatch: Sendable {
    /// How long after its deadline a ticket counts as overdue: the engine's thread, when it is
    /// not held up, answers well within it, with the transfer's own words.
    static let answerGrace = Duration.milliseconds(40)
    /// How often the timer looks: with `answerGrace`, an overdue caller is answered within about
    /// 60 ms of its deadline, inside the 100 ms every outcome is held to.
    static let period = Duration.milliseconds(20)

    private struct State {
        var tickets: [UInt64: TransferTicket] = [:]
        /// Running while `tickets` is not empty.
        var timer: (any DispatchSourceTimer)?
    }

    private let state = Locked(State())
    private let overdue: @Sendable (TransferTicket) -> Void

    /// A watch that hands each overdue ticket to `overdue`, once.
    init(overdue: @escaping @Sendable (TransferTicket) -> Void) {
        self.overdue = overdue
    }

    deinit { state.withLock { $0.timer }?.cancel() }

    /// Watches `ticket` until `unwatch`.
    func watch(_ ticket: TransferTicket) {
        state.withLock { state in
            state.tickets[ticket.id] = ticket
            if state.timer == nil { state.timer = startTimer() }
        }
    }

    /// Stops watching `ticket` (answered, or given up).
    func unwatch(_ ticket: TransferTicket) {
        let idle = state.withLock { state -> (any DispatchSourceTimer)? in
            state.tickets[ticket.id] = nil
            guard state.tickets.isEmpty else { return nil }
            defer { state.timer = nil }
            return state.timer
        }
        idle?.cancel()
    }

    private func startTimer() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let period = DispatchTimeInterval.milliseconds(Int(Self.period / .milliseconds(1)))
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        return timer
    }

    private func tick() {
        let now = ContinuousClock.now
        let late = state.withLock { state in
            state.tickets.values.filter { $0.request.deadline.advanced(by: Self.answerGrace) <= now }
        }
        for ticket in late {
            unwatch(ticket)
            overdue(ticket)
        }
    }
}
