import Dispatch
import Synchronization

/// Runs an action for each watched item whose deadline (plus `grace`) has passed, from one timer
/// that ticks while items are watched, on none of the threads the fetcher's own work runs on.
///
/// What it is for: an answer at a deadline must not wait for the engine's thread, which libcurl
/// can hold inside `curl_multi_perform` for as long as an origin floods an HTTP/2 connection
/// with frames (endless PRIORITY or empty DATA frames: libcurl reads them until they stop, or
/// until `EngineHoldBreaker` shuts the connection, a second or so into the hold), nor for a free
/// cooperative thread. The engine watches each transfer's caller (`TransferEngine`),
/// the cache each payload waiting for a shared download (`SharedDownload`). One timer for all: a
/// Dispatch timer per transfer cost a tenth of the CPU time of a campaign of distinct URLs, and a
/// cancelled sleeping task holds its memory until its deadline (on Linux).
final class DeadlineWatch: Sendable {
    /// How often the timer looks: an item is acted on within about this much of its deadline
    /// plus `grace`.
    static let period = Duration.milliseconds(20)

    /// A watched item, to `unwatch`.
    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Item {
        var due: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }

    private struct State {
        var items: [UInt64: Item] = [:]
        /// Running while `items` is not empty.
        var timer: (any DispatchSourceTimer)?
    }

    private let grace: Duration
    private let state = Locked(State())
    private let nextID = Atomic<UInt64>(0)

    /// A watch that acts `grace` after each item's deadline.
    init(grace: Duration = .zero) {
        self.grace = grace
    }

    deinit { state.withLock { $0.timer }?.cancel() }

    /// Runs `action` once, soon after `deadline` plus `grace`, unless `unwatch`ed first.
    func watch(until deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        let token = Token(id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue)
        let due = deadline.advanced(by: grace)
        state.withLock { state in
            state.items[token.id] = Item(due: due, action: action)
            if state.timer == nil { state.timer = startTimer() }
        }
        return token
    }

    /// Stops watching the item: its action will not run (or has run).
    func unwatch(_ token: Token) {
        let idle = state.withLock { state -> (any DispatchSourceTimer)? in
            state.items[token.id] = nil
            guard state.items.isEmpty else { return nil }
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
        let due = state.withLock { state in
            state.items.filter { $0.value.due <= now }.map { (id: $0.key, action: $0.value.action) }
        }
        for item in due {
            unwatch(Token(id: item.id))
            item.action()
        }
    }
}
