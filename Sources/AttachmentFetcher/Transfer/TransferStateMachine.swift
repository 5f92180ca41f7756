/// The life of one transfer, from its submission to its result, as a value: events go in, the
/// actions the engine's loop must take come out. It does no I/O, knows nothing of libcurl and
/// reads no clock (the instant is passed in with each event that needs one), so every ordering
/// of submission, cancellation, body bytes, type answer, deadline, completion and retry can be
/// tested without a network.
///
/// The loop keeps one machine per transfer it has heard of, from the first command that names it
/// (a submission, or a cancellation that overtook its submission) until an action ends it.
struct TransferStateMachine: Sendable {
    /// What is known of the body of the running attempt.
    struct Attempt: Sendable, Hashable {
        /// 1, then 2 and 3 for the retries of a transfer HTTP/2 connections failed: tells the
        /// classifier's answers for the attempts apart.
        var number: Int
        /// Whether the first bytes went to the classifier.
        var classificationRequested = false
        /// The type detected in the first bytes.
        var media: MediaType?
        /// Why the attempt stopped its own body (refused type, over a limit); its completion
        /// ends the transfer with it.
        var abort: TransferFailure?
    }

    enum State: Sendable, Hashable {
        /// No command seen yet.
        case initialized
        /// The cancellation arrived before the submission: the caller was answered, the
        /// submission will be dropped.
        case cancelledBeforeSubmission
        /// Waiting in its host's queue for a connection; `attempt` is the one it will start.
        case queued(attempt: Int)
        /// In libcurl's hands.
        case running(Attempt)
        /// The body is whole and out of libcurl (its connection free), waiting for its type.
        case awaitingType(Attempt)
        /// Answered; nothing more happens.
        case finished
    }

    /// What the body looks like when an event arrives.
    struct Body: Sendable, Hashable {
        /// Bytes received (decoded) so far.
        var bytesReceived: Int
        /// The response's `Content-Length`, if it announced one (needed once the type is known,
        /// not with each chunk).
        var announcedLength: Int? = nil
        /// Whether the response has a `Content-Encoding` (its length counts encoded bytes).
        var contentEncoded = false
        /// Whether the sniffed prefix is full.
        var windowFull = false
    }

    /// How libcurl ended an attempt, as the loop read it.
    enum Completion: Sendable, Hashable {
        /// A response came: its status, and for a 206 its `Content-Range` value, if any.
        case response(status: Int, contentRange: String? = nil)
        /// libcurl failed it: why, and whether an HTTP/2 connection failed it (a framing error,
        /// a stream reset, the connection lost) rather than the response itself.
        case failed(TransferFailure, connectionFailed: Bool)
        /// libcurl met a `Content-Encoding` it does not know (`utf-8`, `binary`: an origin's
        /// mistake), which it refuses to pass on.
        case undecodable(TransferFailure)
    }

    /// What the loop does for the transfer.
    enum Action: Sendable, Hashable {
        case none
        /// Puts it at the back of its host's queue, and its deadline among the deadlines.
        case enqueue
        /// Hands its first bytes to the classifier (off the loop's thread), for this attempt.
        case requestClassification(attempt: Int)
        /// Takes it out of libcurl, its body kept, to wait for its type (and asks for the type
        /// when `requestingClassification` names the attempt).
        case awaitType(requestingClassification: Int?)
        /// Takes it out of libcurl, discards its partial body and puts it at the front of its
        /// host's queue.
        case requeue
        /// Ends it with `failure`: out of libcurl, body discarded, caller answered.
        case fail(TransferFailure)
        /// Ends it with `304 Not Modified`: body discarded, caller answered with the headers.
        case finishNotModified
        /// Ends it with its body: closed, placed, the caller answered with the placed file.
        case finishBody(MediaType)
        /// Drops a submission whose cancellation came first (its caller was answered then).
        case forget
    }

    /// What the response sink does with the bytes that just arrived.
    enum BodyAction: Sendable, Hashable {
        /// Keeps receiving.
        case proceed
        /// Keeps receiving, and hands the first bytes to the classifier for this attempt.
        case proceedAndClassify(attempt: Int)
        /// Detects the type here and now (`typeDetectedHere`), then asks again: a few KB of
        /// gzip can inflate to megabytes before an answer from another thread could arrive.
        case classifyHere
        /// Stops the body (the abort is recorded; libcurl ends the attempt with a write error).
        case stop
    }

    /// When the payload's time is up (moved later only by `extendDeadline`).
    private(set) var deadline: ContinuousClock.Instant
    /// Whether the request carries validators, so that a `304` is an answer and not an error.
    let isConditional: Bool
    let policy: BodyPolicy
    private(set) var state: State = .initialized
    /// Retries so far (see `completed`).
    private(set) var retries = 0
    /// Whether libcurl decodes the body's `Content-Encoding`. Off for the one attempt after a
    /// coding libcurl does not know, whose bytes are then taken as they came, as URLSession and
    /// Android's `HttpURLConnection` pass on a coding they do not know.
    private(set) var decodesContent = true

    /// Retries of one transfer after HTTP/2 connection failures. One was not always enough: in
    /// 5 runs of 2,000 payloads over TLS, one retry met a second `GOAWAY`.
    static let maximumRetries = 2

    static let cancellation = TransferFailure(reason: .deadline, detail: "cancelled before the attachment was ready")
    static let shutDown = TransferFailure(reason: .network, detail: "the fetcher was shut down")

    init(deadline: ContinuousClock.Instant, isConditional: Bool, policy: BodyPolicy) {
        self.deadline = deadline
        self.isConditional = isConditional
        self.policy = policy
    }

    /// Its requester moved the deadline to `later` (ignored unless later).
    mutating func extendDeadline(to later: ContinuousClock.Instant) {
        deadline = max(deadline, later)
    }

    /// Whether it waits in a queue, to start as `attempt`.
    var queuedAttempt: Int? {
        if case .queued(let attempt) = state { return attempt }
        return nil
    }

    var isFinished: Bool { state == .finished }

    // MARK: Commands

    /// The caller submitted it.
    mutating func submit(now: ContinuousClock.Instant) -> Action {
        switch state {
        case .initialized:
            guard now < deadline else {
                return finish(.fail(TransferFailure(reason: .deadline, detail: "the deadline passed before the download started")))
            }
            state = .queued(attempt: 1)
            return .enqueue
        case .cancelledBeforeSubmission:
            state = .finished
            return .forget
        case .queued, .running, .awaitingType, .finished:
            return .none
        }
    }

    /// The caller's task was cancelled. Its cancellation may overtake its submission: the two
    /// are posted from different threads.
    mutating func cancel() -> Action {
        switch state {
        case .initialized:
            state = .cancelledBeforeSubmission
            return .fail(Self.cancellation)
        case .queued, .running, .awaitingType:
            return finish(.fail(Self.cancellation))
        case .cancelledBeforeSubmission, .finished:
            return .none
        }
    }

    /// The fetcher shuts down: whatever is live fails.
    mutating func shutdown() -> Action {
        switch state {
        case .initialized, .cancelledBeforeSubmission:
            state = .finished
            return .forget
        case .queued, .running, .awaitingType:
            return finish(.fail(Self.shutDown))
        case .finished:
            return .none
        }
    }

    /// What a transfer waits for in the engine's queue: one of the connections (transfers) its
    /// host may have at once, or one of the transfers the engine runs at once, all hosts
    /// together (as many as the open-file limit allows, `FileDescriptorBudget.concurrency`).
    enum QueueLimit: Equatable {
        case perHost(Int)
        case inAll(Int)

        /// As a deadline's detail says it: " (at most 48 per host at once)".
        var said: String {
            switch self {
            case .perHost(let count): " (at most \(count) per host at once)"
            case .inAll(let count): " (at most \(count) transfer\(count == 1 ? "" : "s") at once, all hosts together)"
            }
        }
    }

    /// Its deadline passed (the loop keeps the deadlines in order); `bytesReceived` of its
    /// body so far, after it `waited` in the engine's queue for what `queueLimit` names, when
    /// given: a payload that ran out of time in the queue ran out of it here, not at the origin.
    mutating func deadlinePassed(bytesReceived: Int, waited: Duration = .zero, queueLimit: QueueLimit? = nil) -> Action {
        let limit = queueLimit?.said ?? ""
        switch state {
        case .queued:
            return finish(.fail(TransferFailure(reason: .deadline, detail: "the deadline passed while waiting for a connection\(limit)")))
        case .running, .awaitingType:
            let queue = waited >= Self.noticeableWait
                ? ", after \(Self.seconds(waited)) s of waiting for a connection\(limit)" : ""
            return finish(
                .fail(TransferFailure(reason: .deadline, detail: "the deadline passed after \(bytesReceived) bytes were received\(queue)")))
        case .initialized, .cancelledBeforeSubmission, .finished:
            return .none
        }
    }

    /// A wait in the queue worth naming in a deadline's detail.
    static let noticeableWait = Duration.milliseconds(100)

    /// `duration` in seconds, to a tenth.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = (seconds * 10 + attoseconds / 100_000_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10)"
    }

    // MARK: The attempt

    /// The loop took it from its queue and handed it to libcurl.
    mutating func started() {
        guard case .queued(let attempt) = state else { return }
        state = .running(Attempt(number: attempt))
    }

    /// The loop could not start it (no handle, no temporary file, libcurl refused the handle).
    mutating func startFailed(_ failure: TransferFailure) -> Action {
        guard case .queued = state else { return .none }
        return finish(.fail(failure))
    }

    /// Bytes arrived (called from libcurl's write callback: the answer says whether to go on).
    mutating func bodyReceived(_ body: Body) -> BodyAction {
        guard case .running(var attempt) = state else { return .stop }
        defer { state = .running(attempt) }
        var action = BodyAction.proceed
        if attempt.media == nil, !attempt.classificationRequested, body.windowFull {
            if body.contentEncoded { return .classifyHere }
            attempt.classificationRequested = true
            action = .proceedAndClassify(attempt: attempt.number)
        }
        if attempt.abort != nil { return .stop }
        if let tooLarge = policy.check(received: body.bytesReceived, media: attempt.media) {
            attempt.abort = tooLarge
            return .stop
        }
        // Past the smallest limit with the classifier's answer still to come (its queue busy):
        // the type is detected here, so that a body stops at its own type's limit and not at
        // the largest.
        if attempt.media == nil, body.windowFull, body.bytesReceived > policy.untypedAllowance { return .classifyHere }
        return action
    }

    /// The type detected here for an encoded body (after `.classifyHere`): recorded, then the
    /// bytes are judged again.
    mutating func typeDetectedHere(_ detection: Result<MediaType, TransferFailure>, body: Body) -> BodyAction {
        guard case .running(var attempt) = state else { return .stop }
        attempt.classificationRequested = true
        record(detection, body: body, in: &attempt)
        state = .running(attempt)
        return bodyReceived(body)
    }

    /// The classifier answered for `attemptNumber`: a refused type or an announced size over the
    /// type's limit ends a running transfer at once; a whole body waiting for its type is
    /// finished. Answers for an earlier attempt, or for a transfer that ended, are dropped.
    mutating func typeAnswered(
        attempt attemptNumber: Int, _ detection: Result<MediaType, TransferFailure>, body: Body,
        now: ContinuousClock.Instant
    ) -> Action {
        switch state {
        case .running(var attempt) where attempt.number == attemptNumber:
            record(detection, body: body, in: &attempt)
            state = .running(attempt)
            if let abort = attempt.abort { return finish(.fail(abort)) }
            return .none
        case .awaitingType(var attempt) where attempt.number == attemptNumber:
            record(detection, body: body, in: &attempt)
            return finishBody(attempt, body: body, now: now)
        default:
            return .none
        }
    }

    /// libcurl ended the attempt.
    mutating func completed(_ completion: Completion, body: Body, now: ContinuousClock.Instant) -> Action {
        guard case .running(var attempt) = state else { return .none }
        if let abort = attempt.abort { return finish(.fail(abort)) }
        switch completion {
        case .failed(let failure, let connectionFailed):
            // HTTP/1.1 failures are final: there a reset is the server's answer to this request.
            guard connectionFailed, retries < Self.maximumRetries, now < deadline else { return finish(.fail(failure)) }
            retries += 1
            state = .queued(attempt: attempt.number + 1)
            return .requeue
        case .undecodable(let failure):
            // Asked once more, its bytes taken undecoded; a second time is final.
            guard decodesContent, now < deadline else { return finish(.fail(failure)) }
            decodesContent = false
            state = .queued(attempt: attempt.number + 1)
            return .requeue
        case .response(let status, let contentRange):
            if status == 304, isConditional { return finish(.finishNotModified) }
            guard (200..<300).contains(status) else {
                return finish(.fail(TransferFailure(reason: .httpStatus, detail: "HTTP \(status)")))
            }
            // No request asks for a range: a 206 is part of the file, unless its range is every
            // byte of it (an origin that answers every request so), as URLSession then hands
            // the app the whole file. A range counts the bytes as sent: a content-coded body's
            // are those its Content-Length announced (libcurl held the body to it), and without
            // one they are not known.
            let sent = body.contentEncoded ? body.announcedLength : body.bytesReceived
            guard status != 206 || sent.map({ Self.coversWholeBody(contentRange, bytes: $0) }) == true else {
                let length = sent.map { "\($0) bytes" } ?? "a content-coded body without Content-Length"
                let range = contentRange.map { ", with Content-Range: \($0), for \(length)" } ?? ", without Content-Range"
                return finish(
                    .fail(TransferFailure(reason: .httpStatus, detail: "HTTP 206 (partial content) to a request for the whole file\(range)")))
            }
            // A 204, or a 200 with nothing in it: the origin sent no file, whatever it is meant to be.
            guard body.bytesReceived > 0 else {
                return finish(.fail(TransferFailure(reason: .httpStatus, detail: "HTTP \(status) with an empty body")))
            }
            guard attempt.media != nil else {
                // The type is still being detected (or, for a body shorter than the sniffed
                // prefix, is only now asked for): the body waits out of libcurl, its connection free.
                let request = attempt.classificationRequested ? nil : attempt.number
                attempt.classificationRequested = true
                state = .awaitingType(attempt)
                return .awaitType(requestingClassification: request)
            }
            return finishBody(attempt, body: body, now: now)
        }
    }

    // MARK: Helpers

    /// Whether a `Content-Range` value (RFC 9110 14.4: `bytes first-last/complete`, the unit
    /// compared without case) names every byte of a file of `bytes` bytes: from the first to
    /// the last, of a complete length that is `bytes`. A complete length of `*` (unknown) does
    /// not: the range may be the first part of a longer file.
    static func coversWholeBody(_ contentRange: String?, bytes: Int) -> Bool {
        guard let contentRange, bytes > 0 else { return false }
        let parts = contentRange.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return false }
        let range = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        guard range.count == 2 else { return false }
        let ends = range[0].split(separator: "-", omittingEmptySubsequences: false)
        func number(_ text: Substring) -> Int? {
            text.isEmpty || !text.allSatisfy({ $0.isASCII && $0.isNumber }) ? nil : Int(text)
        }
        guard ends.count == 2, let first = number(ends[0]), let last = number(ends[1]), let complete = number(range[1]) else { return false }
        return first == 0 && last == bytes - 1 && complete == bytes
    }

    /// Takes the classifier's answer, and checks an announced length against the type's limit.
    private func record(_ detection: Result<MediaType, TransferFailure>, body: Body, in attempt: inout Attempt) {
        guard attempt.abort == nil else { return }
        switch detection {
        case .failure(let failure):
            attempt.abort = failure
        case .success(let media):
            attempt.media = media
            attempt.abort = policy.check(announced: body.announcedLength, contentEncoded: body.contentEncoded, media: media)
        }
    }

    /// The last checks of a whole body of known type, before it is placed.
    private mutating func finishBody(_ attempt: Attempt, body: Body, now: ContinuousClock.Instant) -> Action {
        if let abort = attempt.abort { return finish(.fail(abort)) }
        guard let media = attempt.media else {
            return finish(.fail(TransferFailure(reason: .unsupportedType, detail: "type not detected")))
        }
        // A body may have ended before its type was known, checked only against the largest limit.
        if let tooLarge = policy.check(received: body.bytesReceived, media: media) { return finish(.fail(tooLarge)) }
        guard now < deadline else {
            return finish(.fail(TransferFailure(reason: .deadline, detail: "the deadline passed as the download ended")))
        }
        return finish(.finishBody(media))
    }

    private mutating func finish(_ action: Action) -> Action {
        state = .finished
        return action
    }
}
