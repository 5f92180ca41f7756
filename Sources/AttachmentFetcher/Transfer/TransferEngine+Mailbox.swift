extension TransferEngine {
    /// Commands for the engine's thread, and whether it should stop.
    final class Mailbox: Sendable {
        enum Command {
            case submit(TransferTicket)
            /// The ticket's task was cancelled. It may arrive before the ticket's `.submit`: the
            /// two are posted from different threads.
            case cancel(TransferTicket)
            /// The classifier's answers for transfers whose first bytes it was given.
            case classified([ClassificationAnswer<TransferAttempt>])
        }

        private struct State {
            var commands: [Command] = []
            var closed = false
        }

        /// What the poster of a command must do next.
        enum Delivery {
            /// The mailbox was empty: wake the engine (`curl_multi_wakeup`).
            case wakeEngine
            /// Commands were already waiting, so whoever posted the first of them has woken the
            /// engine, which will take this one with them. In a spike this spares one wake-up (a
            /// socket write and a turn of the loop over every running transfer) per payload.
            case engineAlreadyWoken
            /// The engine is stopping and accepts nothing more.
            case closed
        }

        private let state = Locked(State())

        /// Queues `command` and says whether the engine needs waking.
        func post(_ command: Command) -> Delivery {
            state.withLock { state in
                guard !state.closed else { return .closed }
                state.commands.append(command)
                return state.commands.count == 1 ? .wakeEngine : .engineAlreadyWoken
            }
        }

        func close() { state.withLock { $0.closed = true } }

        /// Everything queued, and whether the engine should stop.
        func take() -> (commands: [Command], closed: Bool) {
            state.withLock { state in
                defer { state.commands.removeAll(keepingCapacity: true) }
                return (state.commands, state.closed)
            }
        }
    }

    /// Resumes waiters once the engine's thread has ended.
    final class ExitSignal: Sendable {
        private struct State {
            var done = false
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        private let state = Locked(State())

        func signal() {
            let waiters = state.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if !state.done { state.waiters.append(continuation) }
                    return state.done
                }
                if done { continuation.resume() }
            }
        }
    }
}

/// One attempt at a transfer (retries are further attempts): what a classifier answer is for.
struct TransferAttempt: Sendable {
    var id: UInt64
    var attempt: Int
}
