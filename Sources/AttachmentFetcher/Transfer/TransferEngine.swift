import CCurl
import Foundation
import HeapModule
import DequeModule
import Logging
import Synchronization
import SystemPackage


/// The libcurl multi handle and the one thread that drives it, shared by every payload of a
/// fetcher: connection reuse, HTTP/2 on TLS origins, per-host queues kept here rather than in
/// libcurl, deadlines that cancel transfers the moment they pass, and type and size checks on
/// the bytes as they arrive.
final class TransferEngine: Sendable {
    /// The engine's limits.
    struct Configuration: Sendable {
        var sizeLimits: AttachmentFetcher.Configuration.SizeLimits
        var maximumConnectionsPerHost: Int
        var maximumConcurrentTransfers: Int
        var maximumRedirects: Int
        var userAgent: String
        /// The CA file TLS origins are verified against; `nil` for the system's.
        var trustedCertificatesFile: String?
        /// How many leading bytes libmagic looks at.
        var sniffBytes = 4096
        /// Which addresses connections may be made to.
        var addressPolicy = AttachmentFetcher.Configuration.AddressPolicy()
        /// Whether URLs (and redirects) may carry `user:pass@`.
        var allowsCredentialsInURLs = false
        /// The explicit proxy, or `nil` for none (the environment's is never used).
        var proxy: String?
        /// `CURLOPT_RESOLVE` entries.
        var resolve: [String] = []
    }

    private let multi: CurlMulti
    private let mailbox: Mailbox
    private let exit = ExitSignal()
    private let nextID = Atomic<UInt64>(1)
    /// What the engine has done so far.
    let counters = TransferCounters()

    /// Starts the engine's thread; `classifier` detects the bodies' types.
    init(configuration: Configuration, logger: Logger, classifier: MediaClassifier) throws(AttachmentFetcherError) {
        guard let multi = CurlMulti() else { throw .curlUnavailable("curl_multi_init failed") }
        multi.set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        multi.set(CURLMOPT_MAXCONNECTS, configuration.maximumConcurrentTransfers)
        multi.set(CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        self.multi = multi
        mailbox = Mailbox()
        let loop = EngineLoop(
            multi: multi, mailbox: mailbox, classifier: classifier, configuration: configuration,
            counters: counters, logger: logger)
        let exit = self.exit
        let thread = Thread {
            // Named from the thread itself (Foundation on Linux applies a name set before
            // `start()` to nothing), in at most the 15 characters Linux keeps.
            Thread.current.name = "attachment-curl"
            loop.run()
            exit.signal()
        }
        thread.start()
    }

    deinit { stop() }

    /// Downloads `request`. Returns when the file is placed or the transfer failed, at the
    /// latest (give or take a millisecond) at `request.deadline`. Cancelling the calling task
    /// cancels the transfer at once.
    func download(_ request: TransferRequest) async -> TransferResult {
        let ticket = TransferTicket(id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, request: request)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard ticket.install(continuation) else { return }
                switch mailbox.post(.submit(ticket)) {
                case .wakeEngine: multi.wakeup()
                case .engineAlreadyWoken: break
                case .closed:
                    ticket.finish(.failure(TransferFailure(reason: .network, detail: "the fetcher is shut down")))
                }
            }
        } onCancel: {
            if ticket.requestCancellation(), mailbox.post(.cancel(ticket.id)) == .wakeEngine { multi.wakeup() }
        }
    }

    /// Asks the thread to fail what is still running and end; returns at once.
    func stop() {
        mailbox.close()
        multi.wakeup()
    }

    /// Fails what is still running and waits for the thread to end.
    func shutdown() async {
        stop()
        await exit.wait()
    }
}

/// Commands for the engine's thread, and whether it should stop.
private final class Mailbox: Sendable {
    enum Command {
        case submit(TransferTicket)
        case cancel(UInt64)
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
private final class ExitSignal: Sendable {
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

/// One download's hand-over between the caller's task and the engine's thread. Whichever of
/// finishing, cancelling and installing the continuation comes first is settled here, under one
/// lock, so the continuation is resumed exactly once.
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

    /// Marks the ticket cancelled; `true` when the engine already has it and must be told.
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

    static let cancellation = TransferFailure(reason: .deadline, detail: "cancelled before the attachment was ready")
}

/// One attempt at a transfer (retries are further attempts): what a classifier answer is for.
private struct TransferAttempt: Sendable {
    var id: UInt64
    var attempt: Int
}

/// An entry of the deadline heap.
private struct DeadlineEntry: Comparable {
    var deadline: ContinuousClock.Instant
    var id: UInt64

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.deadline < rhs.deadline }
}

/// Everything the engine's thread owns. `@unchecked Sendable` only so that it can be handed to
/// the thread once: after `TransferEngine.init` it is touched by that thread alone (the libmagic
/// cookie included, which must never be shared).
private final class EngineLoop: @unchecked Sendable {
    private enum LiveTransfer {
        case queued(TransferTicket)
        case running(ActiveTransfer)
    }

    let multi: CurlMulti
    let mailbox: Mailbox
    let classifier: MediaClassifier
    let configuration: TransferEngine.Configuration
    let counters: TransferCounters
    let logger: Logger

    private var live: [UInt64: LiveTransfer] = [:]
    private var queues: [String: Deque<TransferTicket>] = [:]
    private var runningPerHost: [String: Int] = [:]
    private var running: [UInt: ActiveTransfer] = [:]
    /// Easy handles whose transfers ended, reset and ready for the next (see `recycle`).
    private var idleHandles: [CurlEasy] = []
    private var deadlines = Heap<DeadlineEntry>()
    /// How many times each live transfer was retried (see `isRetryable`).
    private var retries: [UInt64: Int] = [:]
    /// Whether a queued transfer may be able to start: set when one is queued or a running one
    /// ends, cleared once the queues have been served. Without it, a queue held back only by the
    /// per-host limit would make the loop poll with a zero timeout, spinning a core.
    private var queuesMayAdvance = false
    /// First bytes waiting to go to the classifier at the end of this turn of the loop.
    private var classificationJobs: [ClassificationJob<TransferAttempt>] = []
    /// The address policy every handle's sockets are checked against.
    private let addressPolicy: CurlAddressPolicy
    /// The fixed name resolutions, made once and shared by every handle.
    private let resolveList: CurlStringList?

    init(
        multi: CurlMulti, mailbox: Mailbox, classifier: MediaClassifier, configuration: TransferEngine.Configuration,
        counters: TransferCounters, logger: Logger
    ) {
        addressPolicy = CurlAddressPolicy(configuration.addressPolicy)
        resolveList = configuration.resolve.isEmpty ? nil : CurlStringList(configuration.resolve)
        self.multi = multi
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
                case .submit(let ticket): enqueue(ticket)
                case .cancel(let id): terminate(id, with: TransferTicket.cancellation)
                case .classified(let answers):
                    for answer in answers { classified(answer.tag, answer.detection) }
                }
            }
            if closed, !stopping {
                stopping = true
                for id in Array(live.keys) {
                    terminate(id, with: TransferFailure(reason: .network, detail: "the fetcher was shut down"))
                }
            }
            expireDeadlines()
            startQueuedTransfers()
            _ = multi.perform()
            for (key, result) in multi.completedTransfers() { complete(key, result) }
            sendClassificationJobs()
            if stopping, live.isEmpty { break }
            multi.poll(timeoutMilliseconds: nextWakeUpMilliseconds())
        }
    }

    // MARK: Queue

    private func enqueue(_ ticket: TransferTicket) {
        let request = ticket.request
        guard ContinuousClock.now < request.deadline else {
            ticket.finish(.failure(TransferFailure(reason: .deadline, detail: "the deadline passed before the download started")))
            return
        }
        live[ticket.id] = .queued(ticket)
        queues[request.hostKey, default: []].append(ticket)
        queuesMayAdvance = true
        deadlines.insert(DeadlineEntry(deadline: request.deadline, id: ticket.id))
    }

    private var hasFreeSlot: Bool { running.count < configuration.maximumConcurrentTransfers }

    private func startQueuedTransfers() {
        guard queuesMayAdvance else { return }
        queuesMayAdvance = false
        guard hasFreeSlot, !queues.isEmpty else { return }
        for host in Array(queues.keys) {
            while hasFreeSlot, runningPerHost[host, default: 0] < configuration.maximumConnectionsPerHost,
                let ticket = queues[host]?.popFirst()
            {
                guard case .queued = live[ticket.id] else { continue }  // cancelled or expired while queued
                start(ticket)
            }
            if queues[host]?.isEmpty == true { queues[host] = nil }
        }
    }

    private func nextWakeUpMilliseconds() -> Int {
        var milliseconds = 1_000
        if let suggested = multi.suggestedTimeoutMilliseconds() { milliseconds = min(milliseconds, suggested) }
        if let next = deadlines.min {
            let remaining = ContinuousClock.now.duration(to: next.deadline)
            let (seconds, attoseconds) = remaining.components
            let remainingMilliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            milliseconds = min(milliseconds, max(0, Int(remainingMilliseconds)))
        }
        if queuesMayAdvance, hasFreeSlot, !queues.isEmpty { milliseconds = 0 }
        return milliseconds
    }

    private func expireDeadlines() {
        let now = ContinuousClock.now
        while let next = deadlines.min, next.deadline <= now {
            _ = deadlines.popMin()
            guard let entry = live[next.id] else { continue }
            let detail: String
            switch entry {
            case .queued: detail = "the deadline passed while waiting for a connection"
            case .running(let transfer):
                detail = "the deadline passed after \(transfer.sink.bytesReceived) bytes were received"
            }
            terminate(next.id, with: TransferFailure(reason: .deadline, detail: detail))
        }
    }

    // MARK: Transfers

    private func start(_ ticket: TransferTicket) {
        let request = ticket.request
        guard let easy = idleHandles.popLast() ?? CurlEasy(sniffBytes: configuration.sniffBytes) else {
            live[ticket.id] = nil
            ticket.finish(.failure(TransferFailure(reason: .network, detail: "libcurl could not create a handle")))
            return
        }
        easy.set(CURLOPT_URL, request.url)
        easy.set(CURLOPT_NOSIGNAL, true)
        easy.set(CURLOPT_FOLLOWLOCATION, true)
        easy.set(CURLOPT_MAXREDIRS, configuration.maximumRedirects)
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FAILONERROR, true)
        easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // On TLS origins, wait for a connection's ALPN answer so that HTTP/2 streams share it
        // rather than opening one connection each. Never on plain http: there libcurl would hold
        // new transfers back behind the first response (HTTP/1.1 cannot multiplex anyway).
        easy.set(CURLOPT_PIPEWAIT, request.hostKey.hasPrefix("https:"))
        easy.set(CURLOPT_MAXFILESIZE_LARGE, large: Int64(configuration.sizeLimits.largest))
        // Ask for and decode every Content-Encoding this libcurl supports (gzip, deflate, br…), as
        // URLSession does; an origin that encodes a body unasked is decoded too. Sizes count the
        // decoded bytes.
        easy.set(CURLOPT_ACCEPT_ENCODING, "")
        // Larger reads mean fewer callbacks and write(2) calls per body; curl's own tool uses
        // 100 KiB. Only running transfers hold one (at most 48 per host by default).
        easy.set(CURLOPT_BUFFERSIZE, 100 * 1024)
        easy.set(CURLOPT_USERAGENT, configuration.userAgent)
        easy.set(CURLOPT_SSL_VERIFYPEER, true)
        easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let file = configuration.trustedCertificatesFile { easy.set(CURLOPT_CAINFO, file) }
        // A proxy only when configured: an empty CURLOPT_PROXY (and NOPROXY "*") makes libcurl
        // ignore http_proxy, https_proxy and ALL_PROXY, which would route around the address policy.
        if let proxy = configuration.proxy {
            easy.set(CURLOPT_PROXY, proxy)
            easy.set(CURLOPT_NOPROXY, "")
        } else {
            easy.set(CURLOPT_PROXY, "")
            easy.set(CURLOPT_NOPROXY, "*")
        }
        // Credentials in the URL or a redirect's: refused by libcurl itself (CURLE_LOGIN_DENIED).
        easy.set(CURLOPT_DISALLOW_USERNAME_IN_URL, !configuration.allowsCredentialsInURLs)
        if let resolveList { easy.set(CURLOPT_RESOLVE, resolveList) }
        easy.guardConnections(with: addressPolicy)
        easy.setRequestHeaders(request.headers)

        let file: FileDescriptor
        let temporaryPath: String
        switch TemporaryFiles.create(in: request.temporaryDirectory, anonymous: request.anonymousBody) {
        case .success(let created): (file, temporaryPath) = created
        case .failure(let failure):
            live[ticket.id] = nil
            recycle(easy)
            ticket.finish(.failure(failure))
            return
        }
        let transfer = ActiveTransfer(
            ticket: ticket, attempt: (retries[ticket.id] ?? 0) + 1, easy: easy, file: file,
            temporaryPath: temporaryPath, loop: self)
        easy.sink.file = file
        easy.sink.delegate = transfer
        if request.hashesBody { easy.sink.hashBody() }
        let added = multi.add(easy)
        guard added == .ok else {
            transfer.closeFile()
            TemporaryFiles.remove(temporaryPath)
            recycle(easy)
            live[ticket.id] = nil
            ticket.finish(.failure(TransferFailure(reason: .network, detail: "curl_multi_add_handle: \(added)")))
            return
        }
        live[ticket.id] = .running(transfer)
        running[easy.key] = transfer
        runningPerHost[request.hostKey, default: 0] += 1
        counters.requestStarted(conditional: !request.headers.isEmpty)
    }

    /// Ends a queued or running transfer with `failure`; nothing if it already ended.
    private func terminate(_ id: UInt64, with failure: TransferFailure) {
        switch live[id] {
        case .queued(let ticket):
            live[id] = nil
            retries[id] = nil
            ticket.finish(.failure(failure))
        case .running(let transfer):
            settle(transfer, .failure(failure))
        case nil:
            break
        }
    }

    private func complete(_ key: UInt, _ result: CurlCode) {
        guard let transfer = running[key] else { return }
        if let abort = transfer.abort {
            settle(transfer, .failure(abort))
        } else if result != .ok, isRetryable(transfer, result) {
            retry(transfer)
        } else if result != .ok {
            settle(transfer, .failure(failure(for: result, of: transfer)))
        } else if let ending = responseWithoutBody(of: transfer) {
            settle(transfer, ending)
        } else if transfer.media == nil {
            // The type is still being detected (or, for a body shorter than the sniffed prefix,
            // is only now asked for): the body waits out of libcurl, its connection free.
            if !transfer.classificationRequested { requestClassification(of: transfer) }
            release(transfer)
        } else {
            settle(transfer, finishBody(of: transfer))
        }
    }

    /// How a response ends that has no body to check: `304 Not Modified` to a revalidation, an
    /// HTTP error, an empty body; `nil` for a body.
    private func responseWithoutBody(of transfer: ActiveTransfer) -> TransferTicket.Completion? {
        let status = transfer.easy.responseCode
        if status == 304, !transfer.ticket.request.headers.isEmpty {
            return .success(.notModified(transfer.sink.headerBlock))
        }
        guard (200..<300).contains(status) else {
            return .failure(TransferFailure(reason: .httpStatus, detail: "HTTP \(status)"))
        }
        // A 204, or a 200 with nothing in it: the origin sent no file, whatever it is meant to be.
        guard transfer.sink.bytesReceived > 0 else {
            return .failure(TransferFailure(reason: .httpStatus, detail: "HTTP \(status) with an empty body"))
        }
        return nil
    }

    /// Queues the first bytes of `transfer` for the classifier; they go at the end of this turn
    /// of the loop (`sendClassificationJobs`), and the answer comes back through the mailbox
    /// (`classified`). The transfer goes on meanwhile.
    fileprivate func requestClassification(of transfer: ActiveTransfer) {
        transfer.classificationRequested = true
        classificationJobs.append(
            ClassificationJob(tag: TransferAttempt(id: transfer.ticket.id, attempt: transfer.attempt), window: transfer.sink.window))
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

    /// Applies the classifier's answer: a refused type or an announced size over the type's
    /// limit ends a running transfer at once; a whole body waiting for its type is finished.
    private func classified(_ answered: TransferAttempt, _ detection: Result<MediaType, TransferFailure>) {
        // Gone already (deadline, cancellation, failure), or an answer for an earlier attempt.
        guard case .running(let transfer) = live[answered.id], transfer.attempt == answered.attempt else { return }
        transfer.apply(detection)
        if !transfer.inLibcurl {
            settle(transfer, finishBody(of: transfer))
        } else if let abort = transfer.abort {
            settle(transfer, .failure(abort))
        }
    }

    /// Checks a whole body of known type, closes its file and hands it to the request's `place`.
    private func finishBody(of transfer: ActiveTransfer) -> TransferTicket.Completion {
        if let abort = transfer.abort { return .failure(abort) }
        guard let media = transfer.media else {
            return .failure(TransferFailure(reason: .unsupportedType, detail: "type not detected"))
        }
        // A body may have ended before its type was known, checked only against the largest limit.
        let limit = configuration.sizeLimits.downloadLimit(for: media.kind)
        guard transfer.sink.bytesReceived <= limit else { return .failure(.tooLarge(limit: limit, kind: media.kind)) }
        guard ContinuousClock.now < transfer.ticket.request.deadline else {
            return .failure(TransferFailure(reason: .deadline, detail: "the deadline passed as the download ended"))
        }
        // A nameless body goes on open: closing it would remove it.
        let handedOn = transfer.ticket.request.anonymousBody ? transfer.file : nil
        do {
            if handedOn == nil { try transfer.file?.close() }
            transfer.file = nil
        } catch {
            transfer.file = nil
            return .failure(TransferFailure(reason: .storage, detail: "cannot close \(transfer.temporaryPath): \(error)"))
        }
        let body = DownloadedFile(
            path: transfer.temporaryPath, media: media, byteCount: transfer.sink.bytesReceived,
            effectiveURL: transfer.easy.effectiveURL ?? transfer.ticket.request.url, headerBlock: transfer.sink.headerBlock,
            sha256: transfer.sink.digest, descriptor: handedOn)
        return transfer.ticket.request.place(body).map { .file($0) }
    }

    /// The one detail of every `address-refused` failure: it tells nothing of the address.
    static let addressRefusedDetail = "the address policy refused every address of the host"
    /// While the address policy is in force, the detail of every network failure: libcurl's
    /// messages (connection refused, timed out, an empty reply…) would tell a closed port from a
    /// filtered or a serving one.
    static let uniformNetworkDetail = "could not fetch"

    private func failure(for code: CurlCode, of transfer: ActiveTransfer) -> TransferFailure {
        let easy = transfer.easy
        if let error = easy.socketOpenError, FileDescriptorBudget.isExhaustion(error), code == .couldNotConnect {
            return TransferFailure(reason: .resources, detail: "cannot open a socket: \(String(cString: strerror(error)))")
        }
        // Refused only when no candidate was permitted: a permitted one that failed to connect
        // is a network failure like any other.
        if code == .couldNotConnect, easy.refusedAddresses > 0, easy.openedSockets == 0 {
            return TransferFailure(reason: .addressRefused, detail: Self.addressRefusedDetail)
        }
        if code == .loginDenied, !configuration.allowsCredentialsInURLs {
            return TransferFailure(reason: .invalidURL, detail: "a redirect led to a URL with credentials (user:pass@), which are not sent")
        }
        let failure = curlFailure(for: code, of: transfer)
        guard configuration.addressPolicy.hidesNetworkDetails else { return failure }
        switch failure.reason {
        case .network: return TransferFailure(reason: .network, detail: Self.uniformNetworkDetail)
        case .deadline where code == .operationTimedOut:
            return TransferFailure(reason: .deadline, detail: Self.uniformNetworkDetail + " before the deadline")
        default: return failure
        }
    }

    private func curlFailure(for code: CurlCode, of transfer: ActiveTransfer) -> TransferFailure {
        let easy = transfer.easy
        let message = easy.errorMessage(for: code)
        switch code {
        case .unsupportedProtocol where easy.redirectCount > 0 || transfer.ticket.request.url != easy.effectiveURL:
            return TransferFailure(reason: .invalidURL, detail: "redirected to a URL that is not http or https: \(message)")
        case .unsupportedProtocol, .urlMalformed:
            return TransferFailure(reason: .invalidURL, detail: message)
        case .tooManyRedirects:
            return TransferFailure(reason: .httpStatus, detail: "too many redirects (\(configuration.maximumRedirects))")
        case .badContentEncoding:
            return TransferFailure(reason: .network, detail: "the body's Content-Encoding cannot be decoded: \(message)")
        case .httpReturnedError:
            return TransferFailure(reason: .httpStatus, detail: "HTTP \(easy.responseCode)")
        case .fileSizeExceeded:
            return .tooLarge(limit: configuration.sizeLimits.largest, kind: nil)
        case .writeError:
            if let error = transfer.sink.writeFailure {
                return TransferFailure(reason: .storage, detail: "cannot write \(transfer.temporaryPath): \(error)")
            }
            return TransferFailure(reason: .network, detail: message)
        case .operationTimedOut:
            return TransferFailure(reason: .deadline, detail: message)
        default:
            return TransferFailure(reason: .network, detail: "\(message) (curl error \(code.rawValue))")
        }
    }

    /// Detaches a running transfer, removes its temporary file unless it was placed, and resumes
    /// its caller.
    private func settle(_ transfer: ActiveTransfer, _ completion: TransferTicket.Completion) {
        detach(transfer)
        switch completion {
        case .success(.file): break  // placed, or handed on under its temporary name
        case .success(.notModified), .failure: TemporaryFiles.remove(transfer.temporaryPath)
        }
        recycle(transfer.easy)
        retries[transfer.ticket.id] = nil
        transfer.ticket.finish(completion)
    }

    /// Whether a failed transfer gets another try: at most `maximumRetries` times, before its
    /// deadline, when an HTTP/2 connection failed it (a framing error, a stream reset, or the
    /// connection lost) rather than the response itself. Debian's libcurl 7.88 resets streams it
    /// has finished, which servers with rapid-reset protection (SwiftNIO: over 200 in 30 s) answer
    /// by closing the connection and every stream on it; the retry goes out on a connection still
    /// alive, or a new one. HTTP/1.1 failures are final: there a reset is the server's answer to
    /// this request.
    private func isRetryable(_ transfer: ActiveTransfer, _ result: CurlCode) -> Bool {
        // The two HTTP/2 codes say which protocol failed; a lost connection says so only once a
        // response had begun (before that libcurl reports no version).
        let connectionFailed =
            result == .http2FramingError || result == .http2StreamError
            || ((result == .receiveError || result == .sendError) && transfer.easy.usedHTTP2)
        return connectionFailed && (retries[transfer.ticket.id] ?? 0) < Self.maximumRetries
            && ContinuousClock.now < transfer.ticket.request.deadline
    }

    /// Retries of one transfer after HTTP/2 connection failures. One was not always enough: in
    /// 5 runs of 2,000 payloads over TLS, one retry met a second `GOAWAY`.
    private static let maximumRetries = 2

    /// Starts a failed transfer again from its first byte: its partial file goes, and the ticket
    /// goes to the front of its host's queue (its deadline stays in the heap).
    private func retry(_ transfer: ActiveTransfer) {
        detach(transfer)
        TemporaryFiles.remove(transfer.temporaryPath)
        recycle(transfer.easy)
        let ticket = transfer.ticket
        retries[ticket.id, default: 0] += 1
        live[ticket.id] = .queued(ticket)
        queues[ticket.request.hostKey, default: []].prepend(ticket)
        queuesMayAdvance = true
    }

    /// Takes a running transfer out of libcurl and the engine's books, and closes its file.
    private func detach(_ transfer: ActiveTransfer) {
        release(transfer)
        live[transfer.ticket.id] = nil
        transfer.closeFile()
    }

    /// Takes a transfer out of libcurl (its handle stays with it, its connection and slot go to
    /// the next transfer); it stays live until settled. Nothing if it already left.
    private func release(_ transfer: ActiveTransfer) {
        guard transfer.inLibcurl else { return }
        transfer.inLibcurl = false
        counters.received(bytes: transfer.sink.bytesReceived)
        multi.remove(transfer.easy)
        running[transfer.easy.key] = nil
        let host = transfer.ticket.request.hostKey
        runningPerHost[host, default: 1] -= 1
        if runningPerHost[host] == 0 { runningPerHost[host] = nil }
        if !queues.isEmpty { queuesMayAdvance = true }
    }

    /// Keeps a handle that left libcurl for the next transfer, up to `maximumIdleHandles`.
    private func recycle(_ easy: CurlEasy) {
        guard idleHandles.count < Self.maximumIdleHandles else { return }
        easy.reset()
        idleHandles.append(easy)
    }

    /// Idle easy handles kept for reuse: as many as one host's default connection limit, so a
    /// spike against one CDN makes its handles once rather than once per transfer.
    private static let maximumIdleHandles = 48
}

/// A transfer in libcurl's hands, confined to the engine's thread. It checks the body as it
/// arrives: the type once the first bytes are in (detected by the classifier, off this
/// thread), then the size against that type's limit.
private final class ActiveTransfer: CurlResponseSinkDelegate {
    let ticket: TransferTicket
    /// 1, then 2 and 3 for the retries of a transfer HTTP/2 connections failed: tells the
    /// classifier's answers for the attempts apart.
    let attempt: Int
    let easy: CurlEasy
    var file: FileDescriptor?
    let temporaryPath: String
    unowned let loop: EngineLoop
    /// Whether the handle is still in libcurl's multi handle; `false` once the body is whole
    /// and waits for its type, or once the transfer ended.
    var inLibcurl = true
    /// Whether the first bytes went to the classifier.
    var classificationRequested = false
    /// The type detected in the first bytes.
    private(set) var media: MediaType?
    /// Why this transfer aborted itself, if it did.
    private(set) var abort: TransferFailure?

    var sink: CurlResponseSink { easy.sink }

    init(
        ticket: TransferTicket, attempt: Int, easy: CurlEasy, file: FileDescriptor, temporaryPath: String,
        loop: EngineLoop
    ) {
        self.ticket = ticket
        self.attempt = attempt
        self.easy = easy
        self.file = file
        self.temporaryPath = temporaryPath
        self.loop = loop
    }

    func responseSinkShouldContinue(_ sink: CurlResponseSink) -> Bool {
        if media == nil, !classificationRequested, sink.window.isFull {
            if sink.contentEncoded {
                // A few KB of gzip can inflate to megabytes within one turn of the loop, before an
                // answer from another thread could arrive: decide the type here, so that the
                // class limit cuts the body mid-stream. Encoded media is rare; plain bodies keep
                // their type detection off this thread.
                classificationRequested = true
                apply(loop.classifier.classify(sink.window))
            } else {
                loop.requestClassification(of: self)
            }
        }
        if abort != nil { return false }
        let limit = media.map { loop.configuration.sizeLimits.downloadLimit(for: $0.kind) } ?? loop.configuration.sizeLimits.largest
        if sink.bytesReceived > limit {
            abort = .tooLarge(limit: limit, kind: media?.kind)
            return false
        }
        return true
    }

    /// Takes the classifier's answer, and checks an announced length against the type's limit.
    func apply(_ detection: Result<MediaType, TransferFailure>) {
        guard abort == nil else { return }
        switch detection {
        case .failure(let failure):
            abort = failure
        case .success(let detected):
            media = detected
            let limit = loop.configuration.sizeLimits.downloadLimit(for: detected.kind)
            // An encoded response's Content-Length counts encoded bytes: the decoded body is
            // counted as it arrives instead.
            if !sink.contentEncoded, let announced = easy.contentLength, announced > limit {
                abort = .tooLarge(limit: limit, kind: detected.kind)
            }
        }
    }

    func closeFile() {
        try? file?.close()
        file = nil
    }
}
