import CCurl
import DequeModule
import HeapModule
import Logging

/// Everything the engine's thread owns. `@unchecked Sendable` only so that it can be handed to
/// the thread once: after `TransferEngine.init` it is touched by that thread alone (the libmagic
/// cookie included, which must never be shared).
///
/// It turns what happens (commands from the mailbox, libcurl's completions and body bytes, the
/// classifier's answers, deadlines) into events for each transfer's `TransferStateMachine`, and
/// executes the actions that come back; it decides nothing about a transfer itself. Queues,
/// deadlines and handles are in `EngineLoop+Queues.swift`.
final class EngineLoop: @unchecked Sendable {
    typealias Action = TransferStateMachine.Action

    let multi: CurlMulti
    let mailbox: TransferEngine.Mailbox
    let classifier: MediaClassifier
    let configuration: TransferEngine.Configuration
    let policy: BodyPolicy
    let failures: CurlFailures
    let counters: TransferCounters
    let logger: Logger

    /// Every transfer the loop has heard of and not yet answered.
    var live: [UInt64: LiveTransfer] = [:]
    var queues: [String: Deque<LiveTransfer>] = [:]
    var runningPerHost: [String: Int] = [:]
    /// What held each host's queue the last time the loop found transfers waiting there and
    /// could not start them (`noteQueueHeld`): what a payload that runs out of time there, or
    /// starts late, waited for. The state when its deadline comes may no longer show it (the
    /// transfer ahead of it may have ended at its own deadline a moment before).
    var queueHeldBy: [String: TransferStateMachine.QueueLimit] = [:]
    /// The attempts in libcurl, by handle.
    var running: [UInt: ActiveTransfer] = [:]
    /// Easy handles whose transfers ended, reset and ready for the next (see `recycle`).
    var idleHandles: [CurlEasy] = []
    var deadlines = Heap<DeadlineEntry>()
    /// Whether a queued transfer may be able to start: set when one is queued or a running one
    /// ends, cleared once the queues have been served. Without it, a queue held back only by the
    /// per-host limit would make the loop poll with a zero timeout, spinning a core.
    var queuesMayAdvance = false
    /// First bytes waiting to go to the classifier at the end of this turn of the loop.
    var classificationJobs: [ClassificationJob<TransferAttempt>] = []
    /// The address policy every handle's sockets are checked against.
    let addressPolicy: CurlAddressPolicy
    /// The fixed name resolutions, made once and shared by every handle.
    let resolveList: CurlStringList?
    /// Shuts a connection that holds the thread inside `curl_multi_perform`.
    let holdBreaker: EngineHoldBreaker

    init(
        multi: CurlMulti, mailbox: TransferEngine.Mailbox, classifier: MediaClassifier,
        configuration: TransferEngine.Configuration, counters: TransferCounters, logger: Logger
    ) {
        addressPolicy = CurlAddressPolicy(configuration.addressPolicy)
        resolveList = configuration.resolve.isEmpty ? nil : CurlStringList(configuration.resolve)
        policy = configuration.bodyPolicy
        failures = CurlFailures(configuration: configuration, policy: configuration.bodyPolicy)
        self.multi = multi
        holdBreaker = EngineHoldBreaker(sockets: multi.sockets)
        self.mailbox = mailbox
        self.classifier = classifier
        self.configuration = configuration
        self.counters = counters
        self.logger = logger
    }

    func run() {
        var stopping = false
        while true {
            let (commands, closed) = mailbox.take()
            for command in commands {
                switch command {
                case .submit(let ticket):
                    let transfer = transfer(for: ticket)
                    transfer.takeLaterDeadline()
                    execute(transfer.machine.submit(now: .now), for: transfer)
                case .cancel(let ticket):
                    let transfer = transfer(for: ticket)
                    execute(transfer.machine.cancel(), for: transfer)
                case .classified(let answers):
                    for answer in answers { classified(answer.tag, answer.detection) }
                }
            }
            if closed, !stopping {
                stopping = true
                for transfer in Array(live.values) { execute(transfer.machine.shutdown(), for: transfer) }
            }
            expireDeadlines()
            startQueuedTransfers()
            if running.isEmpty {
                _ = multi.perform()
            } else {
                // Only a call with transfers running can be held by a connection.
                holdBreaker.enteringPerform()
                _ = multi.perform()
                holdBreaker.leftPerform()
            }
            for (key, result) in multi.completedTransfers() { complete(key, result) }
            sendClassificationJobs()
            if stopping, live.isEmpty { break }
            multi.poll(timeoutMilliseconds: nextWakeUpMilliseconds())
        }
        holdBreaker.stop()
    }

    /// The transfer `ticket` is for, known from now on.
    private func transfer(for ticket: TransferTicket) -> LiveTransfer {
        if let known = live[ticket.id] { return known }
        let created = LiveTransfer(ticket: ticket, policy: policy)
        live[ticket.id] = created
        return created
    }

    // MARK: Events

    /// libcurl ended an attempt.
    private func complete(_ key: UInt, _ result: CurlCode) {
        guard let active = running[key] else { return }
        let completion: TransferStateMachine.Completion =
            if result == .ok {
                .response(status: active.easy.responseCode, contentRange: active.partialContentRange)
            } else if holdBreaker.shutConnection(of: active.easy) {
                // Its connection held the thread and was shut: not asked again (see `heldEngine`).
                .failed(failures.heldEngine(result), connectionFailed: false)
            } else if CurlFailures.isUnknownContentCoding(result, message: active.easy.errorMessage(for: result)) {
                .undecodable(failures.failure(for: result, of: active))
            } else {
                .failed(
                    failures.failure(for: result, of: active),
                    connectionFailed: CurlFailures.isConnectionFailure(
                        result, message: active.easy.errorMessage(for: result), of: active.easy))
            }
        let transfer = active.owner
        transfer.takeLaterDeadline()
        execute(transfer.machine.completed(completion, body: active.body, now: .now), for: transfer)
    }

    /// Bytes of `active`'s body arrived (from libcurl's write callback): whether to go on.
    func bodyReceived(by active: ActiveTransfer) -> Bool {
        holdBreaker.bodyDelivered()
        let transfer = active.owner
        var action = transfer.machine.bodyReceived(active.progress)
        if action == .classifyHere {
            action = transfer.machine.typeDetectedHere(classifier.classify(active.sink.window), body: active.body)
        }
        switch action {
        case .proceed: return true
        case .proceedAndClassify(let attempt):
            requestClassification(of: active, attempt: attempt)
            return true
        case .classifyHere, .stop: return false
        }
    }

    /// The classifier's answer for an attempt.
    private func classified(_ answered: TransferAttempt, _ detection: Result<MediaType, TransferFailure>) {
        // Gone already (deadline, cancellation, failure): the machine drops answers for earlier
        // attempts itself.
        guard let transfer = live[answered.id], let active = transfer.active else { return }
        transfer.takeLaterDeadline()
        execute(
            transfer.machine.typeAnswered(attempt: answered.attempt, detection, body: active.body, now: .now),
            for: transfer)
    }

    /// A deadline passed for `id`.
    func deadlinePassed(_ id: UInt64) {
        guard let transfer = live[id] else { return }
        execute(
            transfer.machine.deadlinePassed(
                bytesReceived: transfer.active?.sink.bytesReceived ?? 0, waited: transfer.waited,
                queueLimit: transfer.active == nil ? queueLimit(holding: transfer.ticket.request.hostKey) : transfer.waitedFor),
            for: transfer)
    }

    // MARK: Actions

    /// Does what the machine of `transfer` decided; forgets the transfer once it is answered.
    func execute(_ action: Action, for transfer: LiveTransfer) {
        switch action {
        case .none:
            break
        case .enqueue:
            queues[transfer.ticket.request.hostKey, default: []].append(transfer)
            noteQueueHeld(transfer.ticket.request.hostKey)
            queuesMayAdvance = true
            deadlines.insert(DeadlineEntry(deadline: transfer.machine.deadline, id: transfer.id))
        case .requestClassification(let attempt):
            if let active = transfer.active { requestClassification(of: active, attempt: attempt) }
        case .awaitType(let classification):
            guard let active = transfer.active else { break }
            if let attempt = classification { requestClassification(of: active, attempt: attempt) }
            release(active)
        case .requeue:
            // Started again from its first byte: its partial body goes, and it goes to the front
            // of its host's queue (its deadline stays in the heap).
            if let active = transfer.active { end(active, keepingBody: false) }
            transfer.active = nil
            queues[transfer.ticket.request.hostKey, default: []].prepend(transfer)
            queuesMayAdvance = true
        case .fail(let failure):
            settle(transfer, .failure(failure))
        case .finishNotModified:
            let sink = transfer.active?.sink
            settle(transfer, .success(.notModified(sink?.headerBlock ?? "", redirected: sink?.redirects.isEmpty == false)))
        case .finishBody(let media):
            guard let active = transfer.active else { break }
            // A body cut short where nothing vouched for its end fails here, neither placed nor cached.
            let placed = active.finishedBody(media: media).mapError(failures.shown).flatMap(transfer.ticket.request.place)
            settle(transfer, placed.map { .file($0) })
        case .forget:
            break
        }
        if transfer.machine.isFinished, live[transfer.id] === transfer { live[transfer.id] = nil }
    }

    /// Takes the attempt (if any) out of libcurl, removes its temporary body unless it was
    /// placed, and resumes the caller.
    private func settle(_ transfer: LiveTransfer, _ completion: TransferResult) {
        if let active = transfer.active {
            let placed = if case .success(.file) = completion { true } else { false }
            // Placed, or handed on under its temporary name: the body stays.
            end(active, keepingBody: placed)
            transfer.active = nil
        }
        // Answered already (its deadline's timer came first, the thread being held up): a
        // body placed meanwhile is nobody's.
        if !transfer.ticket.finish(completion), case .success(.file(let file)) = completion {
            try? file.descriptor?.close()
            TemporaryFiles.remove(file.path)
        }
    }

    /// Takes an attempt out of libcurl and the engine's books, closes its body (removed unless
    /// `keepingBody`) and keeps its handle for the next.
    private func end(_ active: ActiveTransfer, keepingBody: Bool) {
        release(active)
        if keepingBody { active.closeFile() } else { active.discardBody() }
        recycle(active.easy)
    }

    /// Queues the first bytes of `active` for the classifier; they go at the end of this turn
    /// of the loop (`sendClassificationJobs`), and the answer comes back through the mailbox
    /// (`classified`). The transfer goes on meanwhile.
    private func requestClassification(of active: ActiveTransfer, attempt: Int) {
        classificationJobs.append(
            ClassificationJob(tag: TransferAttempt(id: active.owner.id, attempt: attempt), window: active.sink.window))
    }

    /// Hands this turn's classification jobs to the classifier in one batch.
    private func sendClassificationJobs() {
        guard !classificationJobs.isEmpty else { return }
        let (mailbox, multi) = (mailbox, multi)
        classifier.classify(classificationJobs) { answers in
            if mailbox.post(.classified(answers)) == .wakeEngine { multi.wakeup() }
        }
        classificationJobs.removeAll(keepingCapacity: true)
    }
}
