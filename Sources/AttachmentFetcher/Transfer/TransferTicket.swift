/// One download's hand-over between the caller's task and the engine's thread. Whichever of
/// finishing, cancelling and installing the continuation comes first is settled here, under one
/// lock, so the continuation is resumed exactly once. What becomes of the transfer itself is the
/// engine's `TransferStateMachine`'s to decide.
final class TransferTicket: Sendable {
    typealias Completion = TransferResult

    private struct State {
        var continuation: CheckedContinuation<Completion, Never>?
        var cancelled = false
        var finished = false
    }

    /// The transfer's number.
    let id: UInt64
    /// What to download.
    let request: TransferRequest
    private let state = Locked(State())

    init(id: UInt64, request: TransferRequest) {
        self.id = id
        self.request = request
    }

    /// Stores the continuation. When cancellation came first, resumes it with the cancellation
    /// and returns `false`: the transfer must not be submitted.
    func install(_ continuation: CheckedContinuation<Completion, Never>) -> Bool {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.continuation = continuation }
            return state.cancelled
        }
        if cancelled { continuation.resume(returning: .failure(Self.cancellation)) }
        return !cancelled
    }

    /// Marks the ticket cancelled; `true` when the engine has (or is about to get) it and must
    /// be told. The engine may hear of the cancellation before the submission.
    func requestCancellation() -> Bool {
        state.withLock { state in
            guard !state.finished, !state.cancelled else { return false }
            state.cancelled = true
            return state.continuation != nil
        }
    }

    /// Resumes the caller with `completion`, unless it was resumed already.
    func finish(_ completion: Completion) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            state.finished = true
            return state.continuation
        }
        continuation?.resume(returning: completion)
    }

    static let cancellation = TransferStateMachine.cancellation
}
