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
        if owner.ticket.request.hashesBody { easy.sink.hashBody() }
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

    /// Closes and removes the body's file.
    func discardBody() {
        closeFile()
        TemporaryFiles.remove(temporaryPath)
    }

    /// The whole body of type `media`, its file closed, under its temporary name.
    func finishedBody(media: MediaType) -> Result<DownloadedFile, TransferFailure> {
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
                downloadTime: easy.totalTime, sha256: sink.digest, descriptor: handedOn))
    }
}
