import CCurl

/// An entry of the deadline heap.
struct DeadlineEntry: Comparable {
    var deadline: ContinuousClock.Instant
    var id: UInt64

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.deadline < rhs.deadline }
}

/// The per-host queues, the deadlines, and the handles: starting a queued transfer in libcurl
/// and taking it out again.
extension EngineLoop {
    private var hasFreeSlot: Bool { running.count < configuration.maximumConcurrentTransfers }

    /// What held `host`'s queue the last time it could not advance (`queueHeldBy`), else what
    /// would hold it now: every transfer slot taken, or its host's connections.
    func queueLimit(holding host: String) -> TransferStateMachine.QueueLimit {
        queueHeldBy[host] ?? (hasFreeSlot ? perHostLimit : inAllLimit)
    }

    private var perHostLimit: TransferStateMachine.QueueLimit { .perHost(configuration.maximumConnectionsPerHost) }
    private var inAllLimit: TransferStateMachine.QueueLimit { .inAll(configuration.maximumConcurrentTransfers) }

    /// Notes what holds `host`'s queue, which has transfers waiting, now: the transfers of all
    /// hosts when none is free, else its host's connections (see `queueHeldBy`).
    func noteQueueHeld(_ host: String) {
        if !hasFreeSlot {
            queueHeldBy[host] = inAllLimit
        } else if runningPerHost[host, default: 0] >= configuration.maximumConnectionsPerHost {
            queueHeldBy[host] = perHostLimit
        }
    }

    func startQueuedTransfers() {
        guard queuesMayAdvance else { return }
        queuesMayAdvance = false
        guard hasFreeSlot, !queues.isEmpty else { return }
        for host in Array(queues.keys) {
            while hasFreeSlot, runningPerHost[host, default: 0] < configuration.maximumConnectionsPerHost,
                let transfer = queues[host]?.popFirst()
            {
                // Cancelled or expired while queued.
                guard let attempt = transfer.machine.queuedAttempt else { continue }
                if attempt == 1 {
                    transfer.waited = transfer.submitted.duration(to: .now)
                    transfer.waitedFor = queueHeldBy[host]
                }
                start(transfer)
            }
            if queues[host]?.isEmpty == true {
                queues[host] = nil
                queueHeldBy[host] = nil
            } else {
                noteQueueHeld(host)
            }
        }
    }

    func nextWakeUpMilliseconds() -> Int {
        var milliseconds = 1_000
        if let suggested = multi.suggestedTimeoutMilliseconds() { milliseconds = min(milliseconds, suggested) }
        // A deadline a second or more away wakes nothing sooner (and a far one, in milliseconds,
        // would overflow).
        if let next = deadlines.min, case let remaining = ContinuousClock.now.duration(to: next.deadline), remaining < .seconds(1) {
            let (seconds, attoseconds) = remaining.components
            let remainingMilliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            milliseconds = min(milliseconds, max(0, Int(remainingMilliseconds)))
        }
        if queuesMayAdvance, hasFreeSlot, !queues.isEmpty { milliseconds = 0 }
        return milliseconds
    }

    func expireDeadlines() {
        let now = ContinuousClock.now
        while let next = deadlines.min, next.deadline <= now {
            _ = deadlines.popMin()
            // A shared download's deadline may have moved later since it went into the heap.
            if let transfer = live[next.id], transfer.ticket.request.laterDeadline != nil {
                transfer.takeLaterDeadline()
                if transfer.machine.deadline > now {
                    deadlines.insert(DeadlineEntry(deadline: transfer.machine.deadline, id: next.id))
                    continue
                }
            }
            deadlinePassed(next.id)
        }
    }

    // MARK: Handles

    private func start(_ transfer: LiveTransfer) {
        let request = transfer.ticket.request
        guard let easy = idleHandles.popLast() ?? CurlEasy(sniffBytes: configuration.sniffBytes) else {
            execute(
                transfer.machine.startFailed(TransferFailure(reason: .network, detail: "libcurl could not create a handle")),
                for: transfer)
            return
        }
        configure(easy, for: request)
        // After a coding libcurl does not know, the body is taken as it comes (see
        // `TransferStateMachine.decodesContent`); the request still asks what URLSession asks.
        if !transfer.machine.decodesContent { easy.set(CURLOPT_HTTP_CONTENT_DECODING, false) }
        let active: ActiveTransfer
        switch ActiveTransfer.make(for: transfer, easy: easy, loop: self) {
        case .success(let made): active = made
        case .failure(let failure):
            recycle(easy)
            execute(transfer.machine.startFailed(failure), for: transfer)
            return
        }
        let added = multi.add(easy)
        guard added == .ok else {
            active.discardBody()
            recycle(easy)
            execute(
                transfer.machine.startFailed(TransferFailure(reason: .network, detail: "curl_multi_add_handle: \(added)")),
                for: transfer)
            return
        }
        transfer.machine.started()
        transfer.active = active
        running[easy.key] = active
        runningPerHost[request.hostKey, default: 0] += 1
    }

    private func configure(_ easy: CurlEasy, for request: TransferRequest) {
        easy.set(CURLOPT_URL, request.url)
        easy.set(CURLOPT_NOSIGNAL, true)
        // A transfer taken out while its name is still being looked up (its deadline passed,
        // behind a name server that never answers) leaves the resolver's thread to end on its own;
        // without this, curl_multi_remove_handle waits for the lookup, up to 30 s a try, on the
        // engine's thread, and every other transfer and deadline waits with it.
        easy.set(CURLOPT_QUICK_EXIT, true)
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
        easy.set(CURLOPT_MAXFILESIZE_LARGE, large: Int64(policy.ceiling))
        // Ask for the encodings URLSession asks for, in its words, so that a CDN that picks an
        // encoding by the header (zstd, say, which iOS does not ask for) serves what an iPhone
        // gets; an origin that encodes a body unasked with another libcurl decodes (zstd) is
        // decoded too. Sizes count the decoded bytes.
        easy.set(CURLOPT_ACCEPT_ENCODING, Self.acceptEncoding)
        // Larger reads mean fewer callbacks and write(2) calls per body; curl's own tool uses
        // 100 KiB. Only running transfers hold one (at most 48 per host by default).
        easy.set(CURLOPT_BUFFERSIZE, 100 * 1024)
        easy.set(CURLOPT_USERAGENT, configuration.userAgent)
        // Cookies as URLSession keeps them within a download: one a redirect sets goes with the
        // next hop (a "cookie check" redirect works, as on an iPhone). Each transfer starts with
        // none: a recycled handle keeps its cookies through `curl_easy_reset`, so they are erased.
        easy.set(CURLOPT_COOKIEFILE, "")
        easy.set(CURLOPT_COOKIELIST, "ALL")
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
        easy.trackSockets(in: multi.sockets)
        easy.setRequestHeaders(request.headers)
    }

    /// Takes an attempt out of libcurl (its handle stays with it, its connection and slot go to
    /// the next transfer). Nothing if it already left.
    func release(_ active: ActiveTransfer) {
        guard running.removeValue(forKey: active.easy.key) != nil else { return }
        counters.received(bytes: active.sink.bytesReceived)
        // Counted once it went out: an attempt refused by the address policy, or that never
        // connected, sent the origin nothing.
        if active.easy.requestBytes > 0 { counters.requestSent(conditional: !active.owner.ticket.request.headers.isEmpty) }
        multi.remove(active.easy)
        let host = active.owner.ticket.request.hostKey
        runningPerHost[host, default: 1] -= 1
        if runningPerHost[host] == 0 { runningPerHost[host] = nil }
        if !queues.isEmpty { queuesMayAdvance = true }
    }

    /// Keeps a handle that left libcurl for the next transfer, up to `maximumIdleHandles`.
    func recycle(_ easy: CurlEasy) {
        guard idleHandles.count < Self.maximumIdleHandles else { return }
        easy.reset()
        idleHandles.append(easy)
    }

    /// Idle easy handles kept for reuse: as many as one host's default connection limit, so a
    /// spike against one CDN makes its handles once rather than once per transfer.
    private static let maximumIdleHandles = 48

    /// The `Accept-Encoding` of URLSession's requests on iOS.
    static let acceptEncoding = "gzip, deflate, br"
}
