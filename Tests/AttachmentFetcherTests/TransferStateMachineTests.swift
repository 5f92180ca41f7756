@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Transfer state machine: every ordering of a transfer's events", .timeLimit(.minutes(1)))
struct TransferStateMachineTests {
    // MARK: Through the engine

    /// A cancellation that reaches the engine before the submission it cancels (the task was
    /// cancelled between handing its continuation over and posting `.submit`) still ends the
    /// transfer at once, and the request is never sent, rather than letting it run to its deadline.
    @Test("A cancel posted before its submit ends the transfer as cancelled, not at its deadline")
    func cancelBeforeSubmitThroughTheEngine() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try TransferEngine.forTests(connectionsPerHost: 4)
        let url = try AttachmentURL.parse(server.url("/media/slow.jpg?bytes=20000&delay_ms=3000")).get()
        // Far enough that a busy machine cannot reach it before the cancellation is handled.
        let deadline = ContinuousClock.now.advanced(by: .seconds(20) * TestTiming.scale)
        let result = await Task {
            await engine.download(
                TransferRequest(
                    url: url.string, hostKey: url.hostKey, deadline: deadline, temporaryDirectory: directory,
                    place: { .success($0) }),
                beforeSubmitting: { withUnsafeCurrentTask { $0?.cancel() } })
        }.value
        await engine.shutdown()
        // The submission that came after its cancellation was dropped, not sent.
        let requests = server.stats().requests
        try await server.shutdown()
        #expect(requests == 0)
        guard case .failure(let failure) = result else {
            Issue.record("a cancelled transfer produced a response")
            return
        }
        #expect(failure == TransferTicket.cancellation)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory)) == [])
    }

    /// The direct path sends no validators, so a `304` is the origin's error, like any status
    /// outside 2xx, and no file is left.
    @Test("A 304 to a request without validators is http-status HTTP 304 on the direct path")
    func notModifiedUnasked() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?status=304")
            #expect(outcome.reason == .httpStatus)
            #expect(outcome.detail == "HTTP 304")
            #expect(fixture.server.stats().conditionalRequests == 0)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    // MARK: The ticket

    static func ticket() -> TransferTicket {
        TransferTicket(
            id: 1,
            request: TransferRequest(
                url: "http://127.0.0.1:1/x.jpg", hostKey: "http://127.0.0.1:1", deadline: deadline,
                temporaryDirectory: "/nonexistent", place: { .success($0) }))
    }

    @Test("A ticket cancelled before its continuation is handed over answers with the cancellation and is not submitted")
    func ticketCancelledBeforeWaiting() async {
        let ticket = Self.ticket()
        #expect(!ticket.requestCancellation())  // the engine has nothing to be told
        let installed = Locked<Bool?>(nil)
        let result = await withCheckedContinuation { continuation in
            installed.withLock { $0 = ticket.install(continuation) }
        }
        #expect(installed.withLock { $0 } == false)
        #expect(throws: TransferFailure.self) { try result.get() }
        #expect(!ticket.requestCancellation())
    }

    @Test("A ticket cancelled while its caller waits tells the engine once, and is answered once")
    func ticketCancelledWhileWaiting() async {
        let ticket = Self.ticket()
        let told = Locked<[Bool]>([])
        let result = await withCheckedContinuation { continuation in
            #expect(ticket.install(continuation))
            told.withLock { $0.append(ticket.requestCancellation()) }
            told.withLock { $0.append(ticket.requestCancellation()) }
            ticket.finish(.failure(TransferTicket.cancellation))
            ticket.finish(.failure(TransferFailure(reason: .network, detail: "a second answer")))
        }
        #expect(told.withLock { $0 } == [true, false])
        guard case .failure(let failure) = result else {
            Issue.record("answered with a response")
            return
        }
        #expect(failure == TransferTicket.cancellation)
        #expect(!ticket.requestCancellation())  // finished
    }

    // MARK: The machine alone

    typealias Machine = TransferStateMachine
    static let jpeg = MediaType(mime: "image/jpeg", kind: .image, fileExtension: "jpg")
    static let start = ContinuousClock.now
    static let deadline = start.advanced(by: .seconds(10))
    static let beforeDeadline = start.advanced(by: .seconds(1))
    static let afterDeadline = deadline.advanced(by: .milliseconds(1))
    static let policy: BodyPolicy = {
        var limits = PushAttachmentFetcher.Configuration.SizeLimits()
        (limits.image, limits.audio, limits.video, limits.androidPicture) = (1_000, 500, 5_000, 100)
        return BodyPolicy(limits: limits)
    }()
    static let connectionLost = TransferFailure(reason: .network, detail: "connection lost")

    static func machine(conditional: Bool = false) -> Machine {
        Machine(deadline: deadline, isConditional: conditional, policy: policy)
    }

    /// A machine whose first attempt is in libcurl.
    static func running(conditional: Bool = false) -> Machine {
        var machine = machine(conditional: conditional)
        #expect(machine.submit(now: start) == .enqueue)
        #expect(machine.queuedAttempt == 1)
        machine.started()
        return machine
    }

    static func body(_ bytes: Int, announced: Int? = nil, encoded: Bool = false) -> Machine.Body {
        Machine.Body(bytesReceived: bytes, announcedLength: announced, contentEncoded: encoded, windowFull: bytes >= 64)
    }

    @Test("submit, first bytes, type answer, completion: the body is finished with its type")
    func typeBeforeCompletion() {
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(10)) == .proceed)
        #expect(machine.bodyReceived(Self.body(100)) == .proceedAndClassify(attempt: 1))
        #expect(machine.bodyReceived(Self.body(200)) == .proceed)  // asked once
        #expect(machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(300), now: Self.beforeDeadline) == .none)
        #expect(machine.completed(.response(status: 200), body: Self.body(400), now: Self.beforeDeadline) == .finishBody(Self.jpeg))
        #expect(machine.isFinished)
    }

    @Test("completion before the type answer: the body waits out of libcurl, then is finished")
    func completionBeforeType() {
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(100)) == .proceedAndClassify(attempt: 1))
        #expect(machine.completed(.response(status: 200), body: Self.body(400), now: Self.beforeDeadline)
            == .awaitType(requestingClassification: nil))
        #expect(machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(400), now: Self.beforeDeadline)
            == .finishBody(Self.jpeg))
    }

    @Test("a body shorter than the sniffed prefix asks for its type only once it is whole")
    func shortBody() {
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(20)) == .proceed)
        #expect(machine.completed(.response(status: 200), body: Self.body(20), now: Self.beforeDeadline)
            == .awaitType(requestingClassification: 1))
        #expect(machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(20), now: Self.beforeDeadline)
            == .finishBody(Self.jpeg))
    }

    @Test("cancel before submit: the caller is answered at once and the late submission is dropped")
    func cancelBeforeSubmit() {
        var machine = Self.machine()
        #expect(machine.cancel() == .fail(Machine.cancellation))
        #expect(!machine.isFinished)  // kept until its submission arrives
        #expect(machine.submit(now: Self.start) == .forget)
        #expect(machine.isFinished)
        #expect(machine.queuedAttempt == nil)
        #expect(machine.deadlinePassed(bytesReceived: 0) == .none)
        #expect(machine.cancel() == .none)
    }

    @Test("cancel before submit, then shutdown: forgotten, not answered twice")
    func cancelBeforeSubmitThenShutdown() {
        var machine = Self.machine()
        #expect(machine.cancel() == .fail(Machine.cancellation))
        #expect(machine.shutdown() == .forget)
        #expect(machine.isFinished)
    }

    @Test("cancel in each state after submit answers once, and nothing after it acts")
    func cancelInEachState() {
        var queued = Self.machine()
        #expect(queued.submit(now: Self.start) == .enqueue)
        #expect(queued.cancel() == .fail(Machine.cancellation))
        #expect(queued.queuedAttempt == nil)  // the queue skips it
        #expect(queued.cancel() == .none)

        var running = Self.running()
        #expect(running.cancel() == .fail(Machine.cancellation))
        #expect(running.completed(.response(status: 200), body: Self.body(400), now: Self.beforeDeadline) == .none)
        #expect(running.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(400), now: Self.beforeDeadline) == .none)

        var waiting = Self.running()
        _ = waiting.completed(.response(status: 200), body: Self.body(20), now: Self.beforeDeadline)
        #expect(waiting.cancel() == .fail(Machine.cancellation))
        #expect(waiting.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(20), now: Self.beforeDeadline) == .none)
        #expect(waiting.deadlinePassed(bytesReceived: 20) == .none)
    }

    @Test("the deadline in each state names the step it was in")
    func deadlineInEachState() {
        var early = Self.machine()
        #expect(early.submit(now: Self.afterDeadline)
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed before the download started")))

        var queued = Self.machine()
        _ = queued.submit(now: Self.start)
        #expect(queued.deadlinePassed(bytesReceived: 0)
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed while waiting for a connection")))
        #expect(queued.cancel() == .none)

        var running = Self.running()
        #expect(running.deadlinePassed(bytesReceived: 42)
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed after 42 bytes were received")))
        #expect(running.completed(.response(status: 200), body: Self.body(400), now: Self.afterDeadline) == .none)

        var waiting = Self.running()
        _ = waiting.completed(.response(status: 200), body: Self.body(20), now: Self.beforeDeadline)
        #expect(waiting.deadlinePassed(bytesReceived: 20)
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed after 20 bytes were received")))

        // Time spent in the engine's queue is named: it ran out there, not at the origin.
        var queuedLong = Self.running()
        #expect(queuedLong.deadlinePassed(bytesReceived: 42, waited: .milliseconds(1_250), queueLimit: .perHost(48))
            == .fail(TransferFailure(
                reason: .deadline,
                detail: "the deadline passed after 42 bytes were received, after 1.2 s of waiting for a connection (at most 48 per host at once)")))
        var queuedBriefly = Self.running()
        #expect(queuedBriefly.deadlinePassed(bytesReceived: 42, waited: .milliseconds(99), queueLimit: .perHost(48))
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed after 42 bytes were received")))
        var stillQueued = Self.machine()
        _ = stillQueued.submit(now: Self.start)
        #expect(stillQueued.deadlinePassed(bytesReceived: 0, queueLimit: .perHost(48))
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed while waiting for a connection (at most 48 per host at once)")))
        // Held by the transfers of all hosts together (a low open-file limit, or many hosts at once).
        var fewTransfers = Self.machine()
        _ = fewTransfers.submit(now: Self.start)
        #expect(fewTransfers.deadlinePassed(bytesReceived: 0, queueLimit: .inAll(1))
            == .fail(TransferFailure(
                reason: .deadline, detail: "the deadline passed while waiting for a connection (at most 1 transfer at once, all hosts together)")))
        var manyTransfers = Self.machine()
        _ = manyTransfers.submit(now: Self.start)
        #expect(manyTransfers.deadlinePassed(bytesReceived: 0, queueLimit: .inAll(160))
            == .fail(TransferFailure(
                reason: .deadline, detail: "the deadline passed while waiting for a connection (at most 160 transfers at once, all hosts together)")))
    }

    @Test("a body that ends, or gets its type, after the deadline is not placed")
    func endedAfterDeadline() {
        let late = Machine.Action.fail(TransferFailure(reason: .deadline, detail: "the deadline passed as the download ended"))
        var typed = Self.running()
        _ = typed.bodyReceived(Self.body(100))
        _ = typed.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100), now: Self.beforeDeadline)
        #expect(typed.completed(.response(status: 200), body: Self.body(400), now: Self.afterDeadline) == late)

        var waiting = Self.running()
        _ = waiting.completed(.response(status: 200), body: Self.body(20), now: Self.beforeDeadline)
        #expect(waiting.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(20), now: Self.afterDeadline) == late)
    }

    @Test("a deadline moved later (a shared download another payload joined) lets a body that ends after the first one be placed; never earlier")
    func extendedDeadline() {
        var extended = Self.running()
        extended.extendDeadline(to: Self.afterDeadline.advanced(by: .seconds(1)))
        extended.extendDeadline(to: Self.beforeDeadline)
        #expect(extended.deadline == Self.afterDeadline.advanced(by: .seconds(1)))
        _ = extended.bodyReceived(Self.body(100))
        _ = extended.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100), now: Self.beforeDeadline)
        #expect(extended.completed(.response(status: 200), body: Self.body(400), now: Self.afterDeadline) == .finishBody(Self.jpeg))
    }

    @Test("an HTTP/2 connection failure is retried twice before the deadline, with answers for old attempts dropped")
    func retries() {
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(100)) == .proceedAndClassify(attempt: 1))
        #expect(machine.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(100), now: Self.beforeDeadline)
            == .requeue)
        #expect(machine.queuedAttempt == 2)
        #expect(machine.retries == 1)
        machine.started()
        // The first attempt's type answer comes late: dropped.
        #expect(machine.typeAnswered(attempt: 1, .failure(TransferFailure(reason: .unsupportedType, detail: "x")),
            body: Self.body(0), now: Self.beforeDeadline) == .none)
        #expect(machine.bodyReceived(Self.body(100)) == .proceedAndClassify(attempt: 2))
        #expect(machine.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(100), now: Self.beforeDeadline)
            == .requeue)
        machine.started()
        #expect(machine.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(100), now: Self.beforeDeadline)
            == .fail(Self.connectionLost))
        #expect(machine.retries == Machine.maximumRetries)
    }

    @Test("a Content-Encoding libcurl does not know is asked once more, undecoded; a second such answer, or one past the deadline, is final")
    func unknownCoding() {
        let undecodable = TransferFailure(reason: .network, detail: "the body's Content-Encoding cannot be decoded: Unrecognized content encoding type")
        var machine = Self.running()
        #expect(machine.decodesContent)
        #expect(machine.completed(.undecodable(undecodable), body: Self.body(0), now: Self.beforeDeadline) == .requeue)
        #expect(!machine.decodesContent && machine.queuedAttempt == 2 && machine.retries == 0)
        machine.started()
        #expect(machine.completed(.undecodable(undecodable), body: Self.body(0), now: Self.beforeDeadline) == .fail(undecodable))
        var late = Self.running()
        #expect(late.completed(.undecodable(undecodable), body: Self.body(0), now: Self.afterDeadline) == .fail(undecodable))
    }

    @Test("no retry after the deadline, nor of a failure of the response itself")
    func noRetry() {
        var late = Self.running()
        #expect(late.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(0), now: Self.afterDeadline)
            == .fail(Self.connectionLost))
        var http1 = Self.running()
        #expect(http1.completed(.failed(Self.connectionLost, connectionFailed: false), body: Self.body(0), now: Self.beforeDeadline)
            == .fail(Self.connectionLost))
    }

    @Test("a deadline while a retry waits in the queue ends it there")
    func deadlineWhileRetryQueued() {
        var machine = Self.running()
        _ = machine.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(0), now: Self.beforeDeadline)
        #expect(machine.deadlinePassed(bytesReceived: 0)
            == .fail(TransferFailure(reason: .deadline, detail: "the deadline passed while waiting for a connection")))
    }

    @Test("a refused type ends a running transfer at once; a late completion does nothing")
    func refusedType() {
        let refusal = TransferFailure(reason: .unsupportedType, detail: "detected text/html")
        var machine = Self.running()
        _ = machine.bodyReceived(Self.body(100))
        #expect(machine.typeAnswered(attempt: 1, .failure(refusal), body: Self.body(100), now: Self.beforeDeadline) == .fail(refusal))
        #expect(machine.completed(.response(status: 200), body: Self.body(400), now: Self.beforeDeadline) == .none)
    }

    @Test("sizes: the largest limit before the type, the type's after, the announced length when not encoded")
    func sizes() {
        var unknown = Self.running()
        #expect(unknown.bodyReceived(Self.body(5_001)) == .stop)
        #expect(unknown.completed(.failed(Self.connectionLost, connectionFailed: false), body: Self.body(5_001), now: Self.beforeDeadline)
            == .fail(.tooLarge(limit: 5_000, kind: nil)))

        var typed = Self.running()
        _ = typed.bodyReceived(Self.body(100))
        #expect(typed.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100), now: Self.beforeDeadline) == .none)
        #expect(typed.bodyReceived(Self.body(1_001)) == .stop)
        #expect(typed.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(1_001), now: Self.beforeDeadline)
            == .fail(.tooLarge(limit: 1_000, kind: .image)))

        var announced = Self.running()
        _ = announced.bodyReceived(Self.body(100, announced: 2_000))
        #expect(announced.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100, announced: 2_000), now: Self.beforeDeadline)
            == .fail(.tooLarge(limit: 1_000, kind: .image)))

        var encoded = Self.running()
        #expect(encoded.bodyReceived(Self.body(100, announced: 2_000, encoded: true)) == .classifyHere)
        #expect(encoded.typeDetectedHere(.success(Self.jpeg), body: Self.body(100, announced: 2_000, encoded: true)) == .proceed)
        #expect(encoded.bodyReceived(Self.body(1_001, encoded: true)) == .stop)

        // A body that ended before its type was known, over its type's limit, is refused at the end.
        var endedLarge = Self.running()
        _ = endedLarge.bodyReceived(Self.body(100))
        _ = endedLarge.completed(.response(status: 200), body: Self.body(2_000), now: Self.beforeDeadline)
        #expect(endedLarge.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(2_000), now: Self.beforeDeadline)
            == .fail(.tooLarge(limit: 1_000, kind: .image)))
    }

    @Test("past the smallest limit with its type still unknown, the type is detected here: the body stops at its own type's limit")
    func typedHerePastTheSmallestLimit() {
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(100)) == .proceedAndClassify(attempt: 1))
        #expect(machine.bodyReceived(Self.body(500)) == .proceed)  // audio's limit, the smallest
        #expect(machine.bodyReceived(Self.body(501)) == .classifyHere)
        #expect(machine.typeDetectedHere(.success(Self.jpeg), body: Self.body(501)) == .proceed)
        #expect(machine.bodyReceived(Self.body(1_000)) == .proceed)
        #expect(machine.bodyReceived(Self.body(1_001)) == .stop)
        // The late answer of the classifier's queue changes nothing.
        #expect(machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(1_001), now: Self.beforeDeadline)
            == .fail(.tooLarge(limit: 1_000, kind: .image)))

        // An announced length over the type's limit stops it as soon as the type is known.
        var announced = Self.running()
        _ = announced.bodyReceived(Self.body(100, announced: 2_000))
        #expect(announced.bodyReceived(Self.body(501, announced: 2_000)) == .classifyHere)
        #expect(announced.typeDetectedHere(.success(Self.jpeg), body: Self.body(501, announced: 2_000)) == .stop)

        // Once the type is known nothing more is detected: a video goes on to its own limit.
        var video = Self.running()
        _ = video.bodyReceived(Self.body(100))
        let mp4 = MediaType(mime: "video/mp4", kind: .video, fileExtension: "mp4")
        #expect(video.typeAnswered(attempt: 1, .success(mp4), body: Self.body(100), now: Self.beforeDeadline) == .none)
        #expect(video.bodyReceived(Self.body(4_000)) == .proceed)
        #expect(video.bodyReceived(Self.body(5_001)) == .stop)
    }

    @Test("an encoded body's type detected here, refused: the body stops")
    func encodedRefused() {
        let refusal = TransferFailure(reason: .unsupportedType, detail: "detected text/html")
        var machine = Self.running()
        #expect(machine.bodyReceived(Self.body(100, encoded: true)) == .classifyHere)
        #expect(machine.typeDetectedHere(.failure(refusal), body: Self.body(100, encoded: true)) == .stop)
        #expect(machine.completed(.failed(Self.connectionLost, connectionFailed: false), body: Self.body(100), now: Self.beforeDeadline)
            == .fail(refusal))
    }

    @Test("a 206 to a request for the whole file is part of it unless its Content-Range covers every byte that came",
          arguments: [
              (nil, false), ("bytes 0-399/400", true), ("BYTES 0-399/400", true), ("bytes 0-399/401", false),
              ("bytes 0-398/400", false), ("bytes 1-399/400", false), ("bytes 0-399/*", false), ("bytes */400", false),
              ("bytes 0-399/400, 0-1", false), ("items 0-399/400", false), ("bytes 0-399/0400", true), ("bytes  0-399/400", false),
              ("bytes 0-99999999999999999999/400", false), ("", false),
          ] as [(String?, Bool)])
    func partialContent(contentRange: String?, whole: Bool) {
        var machine = Self.running()
        _ = machine.bodyReceived(Self.body(100))
        _ = machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100), now: Self.beforeDeadline)
        let detail = "HTTP 206 (partial content) to a request for the whole file"
            + (contentRange.map { ", with Content-Range: \($0), for 400 bytes" } ?? ", without Content-Range")
        #expect(machine.completed(.response(status: 206, contentRange: contentRange), body: Self.body(400), now: Self.beforeDeadline)
            == (whole ? .finishBody(Self.jpeg) : .fail(TransferFailure(reason: .httpStatus, detail: detail))))
    }

    @Test("a content-coded 206's range counts the coded bytes its Content-Length announced, not the decoded ones", arguments: [
        ("bytes 0-399/400", 400 as Int?, true), ("bytes 0-999/1000", 400, false), ("bytes 0-999/1000", nil, false), ("bytes 0-399/400", nil, false),
    ] as [(String, Int?, Bool)])
    func encodedPartialContent(contentRange: String, announced: Int?, whole: Bool) {
        var machine = Self.running()
        _ = machine.bodyReceived(Self.body(100, announced: announced, encoded: true))
        _ = machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100, announced: announced, encoded: true), now: Self.beforeDeadline)
        let action = machine.completed(
            .response(status: 206, contentRange: contentRange), body: Self.body(1_000, announced: announced, encoded: true), now: Self.beforeDeadline)
        if whole {
            #expect(action == .finishBody(Self.jpeg))
        } else if case .fail(let failure) = action {
            #expect(failure.reason == .httpStatus && failure.detail.contains(contentRange), "\(failure)")
        } else {
            Issue.record("\(action)")
        }
    }

    @Test("a 304 answers only a conditional request; other statuses and empty bodies fail")
    func statuses() {
        var conditional = Self.running(conditional: true)
        #expect(conditional.completed(.response(status: 304), body: Self.body(0), now: Self.beforeDeadline) == .finishNotModified)
        var unconditional = Self.running()
        #expect(unconditional.completed(.response(status: 304), body: Self.body(0), now: Self.beforeDeadline)
            == .fail(TransferFailure(reason: .httpStatus, detail: "HTTP 304")))
        var empty = Self.running()
        #expect(empty.completed(.response(status: 204), body: Self.body(0), now: Self.beforeDeadline)
            == .fail(TransferFailure(reason: .httpStatus, detail: "HTTP 204 with an empty body")))
    }

    @Test("shutdown fails whatever is live, once")
    func shutdown() {
        var queued = Self.machine()
        _ = queued.submit(now: Self.start)
        #expect(queued.shutdown() == .fail(Machine.shutDown))
        var running = Self.running()
        #expect(running.shutdown() == .fail(Machine.shutDown))
        #expect(running.shutdown() == .none)
        #expect(running.cancel() == .none)
    }

    @Test("start failures end a queued transfer; nothing else")
    func startFailure() {
        let failure = TransferFailure(reason: .storage, detail: "cannot create")
        var machine = Self.machine()
        _ = machine.submit(now: Self.start)
        #expect(machine.startFailed(failure) == .fail(failure))
        #expect(machine.startFailed(failure) == .none)
    }

    // MARK: Every ordering

    /// The events a transfer can meet, as the loop delivers them (a start only to a queued
    /// transfer, bytes and completions only to one in libcurl).
    enum Event: CaseIterable {
        case submit, cancel, start, firstBytes, typeAnswer, completion, connectionFailure, deadline
    }

    /// Applies `event` as the loop would; `nil` when the loop would not deliver it in this state.
    static func apply(_ event: Event, to machine: inout Machine) -> Machine.Action? {
        let now = Self.beforeDeadline
        switch event {
        case .submit: return machine.submit(now: now)
        case .cancel: return machine.cancel()
        case .start:
            guard machine.queuedAttempt != nil else { return nil }
            machine.started()
            return Machine.Action.none
        case .firstBytes:
            guard case .running = machine.state else { return nil }
            return switch machine.bodyReceived(Self.body(100)) {
            case .proceedAndClassify, .proceed: Machine.Action.none
            case .classifyHere, .stop: Machine.Action.fail(TransferFailure(reason: .network, detail: "unexpected"))
            }
        case .typeAnswer:
            return machine.typeAnswered(attempt: 1, .success(Self.jpeg), body: Self.body(100), now: now)
        case .completion:
            guard case .running = machine.state else { return nil }
            return machine.completed(.response(status: 200), body: Self.body(100), now: now)
        case .connectionFailure:
            guard case .running = machine.state else { return nil }
            return machine.completed(.failed(Self.connectionLost, connectionFailed: true), body: Self.body(100), now: now)
        case .deadline:
            return machine.deadlinePassed(bytesReceived: 100)
        }
    }

    static func isAnswer(_ action: Machine.Action) -> Bool {
        switch action {
        case .fail, .finishBody, .finishNotModified: true
        case .none, .enqueue, .requestClassification, .awaitType, .requeue, .forget: false
        }
    }

    /// All orderings of `events` (Heap's algorithm).
    static func permutations(of events: [Event]) -> [[Event]] {
        var result: [[Event]] = []
        var items = events
        func generate(_ count: Int) {
            guard count > 1 else {
                result.append(items)
                return
            }
            for index in 0..<count {
                generate(count - 1)
                items.swapAt(count.isMultiple(of: 2) ? index : 0, count - 1)
            }
        }
        generate(items.count)
        return result
    }

    @Test("Every ordering of the eight events answers the caller exactly once, and nothing acts after the answer")
    func everyOrdering() {
        let orderings = Self.permutations(of: Event.allCases)
        #expect(orderings.count == 40_320)
        #expect(Set(orderings.map { $0.map { "\($0)" }.joined(separator: ",") }).count == 40_320)
        for ordering in orderings {
            var machine = Self.machine()
            var answers: [Machine.Action] = []
            var enqueued = 0
            var forgotten = false
            for event in ordering {
                guard let action = Self.apply(event, to: &machine) else { continue }
                if !answers.isEmpty, action != .none, action != .forget {
                    Issue.record("\(ordering): \(action) after the answer \(answers[0])")
                }
                if Self.isAnswer(action) { answers.append(action) }
                if action == .enqueue { enqueued += 1 }
                if action == .forget { forgotten = true }
            }
            let cancelFirst = ordering.firstIndex(of: .cancel)! < ordering.firstIndex(of: .submit)!
            #expect(answers.count == 1, "\(ordering): \(answers)")
            #expect(forgotten == cancelFirst, "\(ordering)")
            #expect(enqueued == (cancelFirst ? 0 : 1), "\(ordering)")
            if cancelFirst { #expect(answers.first == .fail(Machine.cancellation), "\(ordering)") }
            #expect(machine.isFinished, "\(ordering): \(machine.state)")
        }
    }
}
