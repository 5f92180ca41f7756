/// One download's hand-over between the caller's task and the engine's thread. Whichever of
/// finishing, cancelling and installing the continuation comes first is settled here, under one
/// lock, so the continuation is resumed exactly once. What becomes of the transfer itself is the
/// engine's `TransferStateMachine`'s to decide.
final class TransferTicket: Sendable {
    typealias Completion = TransferResult

    /// Where the hand-over stands.
    private enum State {
        /// Made; the caller has not handed its continuation over yet.
        case created
        /// The caller waits on its continuation.
        case waiting(CheckedContinuation<Completion, Never>)
        /// Cancelled before the continuation was handed over: the caller gets the cancellation
        /// when it hands it over, and the transfer is never submitted.
        case cancelledBeforeWaiting
        /// Cancelled while the caller waits: the engine was told, and answers.
        case cancelling(CheckedContinuation<Completion, Never>)
        /// The caller was answered.
        case finished
    }

    /// The transfer's number.
    let id: UInt64
    /// What to download.
    let request: TransferRequest
    private let state = Locked(State.created)

    init(id: UInt64, request: TransferRequest) {
        self.id = id
        self.request = request
    }

    /// Stores the continuation. When cancellation came first, resumes it with the cancellation
    /// and returns `false`: the transfer must not be submitted.
    func install(_ continuation: CheckedContinuation<Completion, Never>) -> Bool {
        let installed = state.withLock { state in
            guard case .created = state else {
                state = .finished
                return false
            }
            state = .waiting(continuation)
            return true
        }
        if !installed { continuation.resume(returning: .failure(Self.cancellation)) }
        return installed
    }

    /// Marks the ticket cancelled; `true` when the engine has (or is about to get) it and must
    /// be told. The engine may hear of the cancellation before the submission.
    func requestCancellation() -> Bool {
        state.withLock { state in
            switch state {
            case .created:
                state = .cancelledBeforeWaiting
                return false
            case .waiting(let continuation):
                state = .cancelling(continuation)
                return true
            case .cancelledBeforeWaiting, .cancelling, .finished:
                return false
            }
        }
    }

    /// Resumes the caller with `completion`, unless it was resumed already; whether it was
    /// resumed now (the caller has `completion`).
    @discardableResult
    func finish(_ completion: Completion) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<Completion, Never>? in
            defer { state = .finished }
            switch state {
            case .waiting(let continuation), .cancelling(let continuation): return continuation
            case .created, .cancelledBeforeWaiting, .finished: return nil
            }
        }
        continuation?.resume(returning: completion)
        return continuation != nil
    }

    static let cancellation = TransferStateMachine.cancellation
}
