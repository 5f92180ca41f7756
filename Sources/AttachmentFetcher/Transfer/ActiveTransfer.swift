import SystemPackage

/// A transfer the engine's loop knows of, confined to its thread: the caller's ticket, the
/// state machine that decides what becomes of it, and its attempt in libcurl while it has one.
final class LiveTransfer {
    let ticket: TransferTicket
    var machine: TransferStateMachine
    /// The attempt in libcurl (or whose whole body waits for its type); `nil` while queued.
    var active: ActiveTransfer?
    /// When the engine took it.
    let submitted = ContinuousClock.now
    /// How long it waited in its host's queue before its first attempt started.
    var waited: Duration = .zero
    /// What it waited for there (see `TransferStateMachine.QueueLimit`).
    var waitedFor: TransferStateMachine.QueueLimit?

    init(ticket: TransferTicket, policy: BodyPolicy) {
        self.ticket = ticket
        machine = TransferStateMachine(
            deadline: ticket.request.deadline, isConditional: !ticket.request.headers.isEmpty, policy: policy)
    }

    var id: UInt64 { ticket.id }

    /// Brings the machine's deadline up to where the requester moved it, if it did.
    func takeLaterDeadline() {
        if let later = ticket.request.laterDeadline?.current { machine.extendDeadline(to: later) }
    }
}

/// One attempt in libcurl's hands, confined to the engine's thread. It owns the body's
/// temporary file, the only place the engine touches it: created with the attempt, then either
/// closed and handed on (`finishedBody`) or removed (`discardBody`). It passes the body's bytes
/// as they arrive to its transfer's state machine, through the loop.
final class ActiveTransfer: CurlResponseSinkDelegate {
    unowned let owner: LiveTransfer
    let easy: CurlEasy
    private var file: FileDescriptor?
    let temporaryPath: String
    unowned let loop: EngineLoop

    var sink: CurlResponseSink { easy.sink }

    /// Takes the body's temporary file (a nameless one made ahead, with `preparedFiles`) or
    /// creates it in the request's directory, and points the handle's sink at it.
    static func make(
        for owner: LiveTransfer, easy: CurlEasy, loop: EngineLoop
    ) -> Result<ActiveTransfer, TransferFailure> {
        let request = owner.ticket.request
        let created = request.preparedFiles.map { $0.file() } ?? TemporaryFiles.create(in: request.temporaryDirectory)
        return created.map { created in
            ActiveTransfer(owner: owner, easy: easy, file: created.file, temporaryPath: created.path, loop: loop)
        }
    }

    private init(
        owner: LiveTransfer, easy: CurlEasy, file: FileDescriptor, temporaryPath: String, loop: EngineLoop
    ) {
        self.owner = owner
        self.easy = easy
        self.file = file
        self.temporaryPath = temporaryPath
        self.loop = loop
        easy.sink.file = file
        easy.sink.delegate = self
    }

    /// The body as the state machine sees it.
    var body: TransferStateMachine.Body {
        var body = progress
        body.announcedLength = easy.contentLength.map { Int(clamping: $0) }
        return body
    }

    /// The same without the announced length, which costs a call into libcurl: for each chunk.
    var progress: TransferStateMachine.Body {
        TransferStateMachine.Body(
            bytesReceived: sink.bytesReceived, contentEncoded: sink.contentEncoded, windowFull: sink.window.isFull)
    }

    func responseSinkShouldContinue(_ sink: CurlResponseSink) -> Bool {
        loop.bodyReceived(by: self)
    }

    /// Closes the body's file (the body stays on disk).
    func closeFile() {
        try? file?.close()
        file = nil
    }

    /// Closes and removes the body's file (through the directory it was made in, for one made
    /// by `preparedFiles`).
    func discardBody() {
        closeFile()
        if let prepared = owner.ticket.request.preparedFiles { prepared.remove(temporaryPath) } else { TemporaryFiles.remove(temporaryPath) }
    }

    /// The `Content-Range` of a 206 response (`nil` for other statuses, or without one).
    var partialContentRange: String? {
        guard easy.responseCode == 206 else { return nil }
        return HTTPHeader.parse(sink.headerBlock).last { $0.name == "content-range" }?.value
    }

    /// Why nothing vouched for the end of the body; `nil` when its framing did: a
    /// `Content-Length` that libcurl held it to, or HTTP/1.1 chunked framing, and no
    /// `Content-Encoding` (libcurl 7.88 does not check that a compressed stream reached its end).
    /// libcurl reports success for a body that an HTTP/2 stream reset with `NO_ERROR` cut short,
    /// or that the connection's close cut short where nothing but that close delimits it.
    var unvouchedEnd: String? {
        if let coding = sink.contentCoding {
            return "a \(coding) Content-Encoding, whose compressed stream libcurl does not check to its end"
        }
        if easy.contentLength != nil { return nil }
        if easy.usedHTTP2 { return "HTTP/2 without Content-Length" }
        if sink.chunked { return nil }
        return "\(easy.httpVersionName) without Content-Length or chunked framing, ended by the connection's close"
    }

    /// A body nothing vouched for whose own format shows it cut short (`BodyCompleteness`, read
    /// through its file), as the failure it is; `nil` otherwise. A body its framing vouched for is
    /// not read at all.
    private func cutShort(_ media: MediaType) -> TransferFailure? {
        guard let unvouched = unvouchedEnd, let format = BodyCompleteness.Format(media), let file else { return nil }
        do {
            switch try BodyCompleteness.check(format, FileBytes(file: file, count: sink.bytesReceived)) {
            case .complete:
                return nil
            case .cutShort(let missing):
                return TransferFailure(
                    reason: .network, detail: "the body ended before \(missing): nothing vouched for its end (\(unvouched))")
            }
        } catch {
            // A nameless file's path (/proc/self/fd/N) would say nothing: its directory does.
            let body = TemporaryFiles.isAnonymous(temporaryPath)
                ? "the body in \(owner.ticket.request.temporaryDirectory)" : temporaryPath
            return TransferFailure(reason: .storage, detail: "cannot read \(body) back: \(error)")
        }
    }

    /// Whether a body its framing vouched for is a file cut short at the origin
    /// (`BodyCompleteness.isCutAtOrigin`: a JPEG's, PNG's or GIF's last bytes, read back, and
    /// the whole body only when they are not its end mark). A body that cannot be read back is
    /// not said to be cut.
    private func cutAtOrigin(_ media: MediaType) -> Bool {
        guard unvouchedEnd == nil, let format = BodyCompleteness.Format(media), format.endMark != nil, let file else { return false }
        return (try? BodyCompleteness.isCutAtOrigin(format, FileBytes(file: file, count: sink.bytesReceived))) ?? false
    }

    /// The whole body of type `media`, its file closed, under its temporary name; a failure when
    /// nothing vouched for its end and its format shows it cut short (see `cutShort`).
    func finishedBody(media: MediaType) -> Result<DownloadedFile, TransferFailure> {
        if let failure = cutShort(media) { return .failure(failure) }
        let cutAtOrigin = cutAtOrigin(media)
        // A nameless body goes on open: closing it would remove it.
        let handedOn = owner.ticket.request.anonymousBody ? file : nil
        do {
            if handedOn == nil { try file?.close() }
            file = nil
        } catch {
            file = nil
            return .failure(TransferFailure(reason: .storage, detail: "cannot close \(temporaryPath): \(error)"))
        }
        return .success(
            DownloadedFile(
                path: temporaryPath, media: media, byteCount: sink.bytesReceived,
                effectiveURL: easy.effectiveURL ?? owner.ticket.request.url, headerBlock: sink.headerBlock,
                redirectSchemes: sink.redirectSchemes, redirects: sink.redirects, redirectSetCookie: sink.redirectSetCookie,
                downloadTime: easy.totalTime, cutAtOrigin: cutAtOrigin, descriptor: handedOn))
    }
}
