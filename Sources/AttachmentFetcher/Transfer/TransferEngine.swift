import CCurl
import Foundation
import Logging
import Synchronization

/// The libcurl multi handle and the one thread that drives it, shared by every payload of a
/// fetcher: connection reuse, HTTP/2 on TLS origins, per-host queues kept here rather than in
/// libcurl, deadlines that cancel transfers the moment they pass, and type and size checks on
/// the bytes as they arrive.
///
/// The callers' side is here; the thread's side is `EngineLoop`, which executes what each
/// transfer's `TransferStateMachine` decides.
final class TransferEngine: Sendable {
    /// The engine's limits.
    struct Configuration: Sendable {
        var sizeLimits: PushAttachmentFetcher.Configuration.SizeLimits
        var maximumConnectionsPerHost: Int
        var maximumConcurrentTransfers: Int
        var maximumRedirects: Int
        var userAgent: String
        /// The CA file TLS origins are verified against; `nil` for the system's.
        var trustedCertificatesFile: String?
        /// How many leading bytes libmagic looks at.
        var sniffBytes = 4096
        /// Which addresses connections may be made to.
        var addressPolicy = PushAttachmentFetcher.Configuration.AddressPolicy()
        /// Whether URLs (and redirects) may carry `user:pass@`.
        var allowsCredentialsInURLs = false
        /// The explicit proxy, or `nil` for none (the environment's is never used).
        var proxy: String?
        /// `CURLOPT_RESOLVE` entries.
        var resolve: [String] = []

        /// The size rules every body is held to.
        var bodyPolicy: BodyPolicy { BodyPolicy(limits: sizeLimits) }
    }

    private let multi: CurlMulti
    private let mailbox: Mailbox
    private let exit = ExitSignal()
    private let nextID = Atomic<UInt64>(1)
    /// Answers the callers the engine's thread has not answered by their deadlines: the thread,
    /// when it is not held up, answers well within `answerGrace`, with the transfer's own words.
    private let watch = DeadlineWatch(grace: answerGrace)
    static let answerGrace = Duration.milliseconds(40)
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
            // libcurl works on this thread: a redirect to a non-ASCII host needs UTF-8 here.
            Syscalls.useUTF8CharacterTypeOnThisThread()
            loop.run()
            exit.signal()
        }
        thread.start()
    }

    deinit { stop() }

    /// Downloads `request`, conditional or not. Returns when the file is placed, a `304` answered
    /// a conditional request, or the transfer failed, at the latest (give or take a millisecond)
    /// at `request.deadline`. Cancelling the calling task cancels the transfer at once.
    func download(_ request: TransferRequest) async -> TransferResult {
        await download(request, beforeSubmitting: {})
    }

    /// Downloads a request without validators (`request.headers` empty): only a file or a
    /// failure can answer it (a `304` to it is the origin's error, `HTTP 304`).
    func downloadFile(_ request: UnconditionalRequest) async -> Result<DownloadedFile, TransferFailure> {
        switch await download(request.transferRequest) {
        case .success(.file(let file)): return .success(file)
        case .failure(let failure): return .failure(failure)
        case .success(.notModified):
            // `TransferStateMachine.completed` answers `.notModified` only to a conditional
            // request, which an `UnconditionalRequest` cannot make.
            preconditionFailure("a 304 answered a request without validators")
        }
    }

    /// The same as `download(_:)`, with `beforeSubmitting` run between the ticket's hand-over
    /// and its submission (tests cancel the task there).
    func download(_ request: TransferRequest, beforeSubmitting: () -> Void) async -> TransferResult {
        let ticket = TransferTicket(id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, request: request)
        // The engine's thread answers at the deadline, with what the transfer had done by then;
        // should that thread be held up, the watch answers soon after (see `DeadlineWatch`). A
        // deadline a shared download moves later is its waiters' to keep, each wait watched to
        // its own deadline.
        let (mailbox, multi) = (mailbox, multi)
        let watched = request.laterDeadline != nil ? nil : watch.watch(until: request.deadline) {
            let failure = TransferFailure(reason: .deadline, detail: "the deadline passed before the download finished")
            if ticket.finish(.failure(failure)), mailbox.post(.cancel(ticket)) == .wakeEngine { multi.wakeup() }
        }
        defer { if let watched { watch.unwatch(watched) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard ticket.install(continuation) else { return }
                beforeSubmitting()
                switch mailbox.post(.submit(ticket)) {
                case .wakeEngine: multi.wakeup()
                case .engineAlreadyWoken: break
                case .closed:
                    ticket.finish(.failure(TransferFailure(reason: .network, detail: "the fetcher is shut down")))
                }
            }
        } onCancel: {
            if ticket.requestCancellation(), mailbox.post(.cancel(ticket)) == .wakeEngine { multi.wakeup() }
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
