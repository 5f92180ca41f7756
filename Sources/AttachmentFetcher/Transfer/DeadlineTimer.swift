import Dispatch

/// A one-shot Dispatch timer at a deadline, off every thread the fetcher's own work runs on: a
/// payload's answer at its deadline must not wait for the engine's thread (which libcurl may hold
/// in a flood of HTTP/2 frames) or for a free cooperative thread.
///
/// Not a sleeping task: cancelled, a Dispatch timer goes at once, where a cancelled `Task.sleep`
/// holds its task and timer until the deadline (on Linux), so that every payload served early
/// kept about a kilobyte for the rest of its timeout.
enum DeadlineTimer {
    /// Runs `action` at `deadline` (at once if it has passed), unless the timer is cancelled first.
    static func start(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        // A year at most, as every payload's deadline: the nanoseconds cannot overflow.
        let remaining = min(max(.zero, ContinuousClock.now.duration(to: deadline)), PushAttachmentFetcher.longestTimeout)
        let (seconds, attoseconds) = remaining.components
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)), leeway: .milliseconds(1))
        timer.setEventHandler(handler: action)
        timer.resume()
        return timer
    }
}
