import Foundation
import SystemPackage

/// How libcurl's result codes become the engine's failures.
struct CurlFailures {
    var configuration: TransferEngine.Configuration
    var policy: BodyPolicy

    /// The detail of an `address-refused` failure of the attachment's own URL. No refusal's
    /// detail tells anything of the address.
    static let addressRefusedDetail = "the address policy refused every address of the host"

    /// The detail of an `address-refused` failure: the proxy's when one is configured (every
    /// connection goes to it), else a redirect target's, named by its URL, when the refused
    /// request was a redirect hop, else the attachment host's.
    func addressRefusedDetail(of easy: CurlEasy) -> String {
        if let proxy = configuration.proxy {
            return "the address policy refused every address of the proxy \(URLCredentials.redacted(proxy).prefix(300))"
        }
        if easy.guardedHop > 0, let url = easy.effectiveURL, !url.isEmpty {
            return "the address policy refused every address of a redirect target (hop \(easy.guardedHop)): \(URLCredentials.redacted(url).prefix(500))"
        }
        return Self.addressRefusedDetail
    }

    /// `message` (libcurl's words) with the configured proxy, wherever it repeats it, shown as
    /// `URLCredentials.redacted` shows it: libcurl quotes the proxy whole when it cannot use it,
    /// password included.
    func redactingProxy(_ message: String) -> String {
        guard let proxy = configuration.proxy, !proxy.isEmpty, message.contains(proxy) else { return message }
        return message.replacingOccurrences(of: proxy, with: URLCredentials.redacted(proxy))
    }

    /// Whether an HTTP/2 connection failed the attempt rather than the origin answering it:
    /// such an attempt may be retried (see `TransferStateMachine.completed`). Debian's libcurl
    /// 7.88 resets streams it has finished, which servers with rapid-reset protection (SwiftNIO:
    /// over 200 in 30 s) answer with `GOAWAY` and by closing the connection and every stream on
    /// it; the retry goes out on a connection still alive, or a new one.
    ///
    /// What libcurl 7.88.1 with nghttp2 1.52 reports (`message` is its error buffer):
    /// - a stream above a `GOAWAY`'s last stream id, never processed (RFC 9113 §8.7; SwiftNIO's
    ///   rapid-reset `GOAWAY` names stream 0, so every stream): curl error 16, without words;
    /// - the connection failing under a response begun (a TCP reset, a send failing): curl
    ///   error 56 or 55; closed (FIN or TLS `close_notify`, after a `GOAWAY` or not), before the
    ///   response or after: curl error 18, "HTTP/2 stream 1 was not closed cleanly before end of
    ///   the underlying stream", not retried;
    /// - `REFUSED_STREAM` (unprocessed, RFC 9113 §8.7): before a response, libcurl asks again
    ///   itself, up to 5 times, then reports curl error 56; after one began, curl error 56;
    /// - any other reset of the stream, by the origin or by nghttp2 at a breach of the protocol
    ///   in the response (a body longer or shorter than its Content-Length, a `101`): curl error
    ///   92 and `HTTP2StreamReset`'s words. That is the origin's answer to the request, the same
    ///   each time (an origin answering every request so would get each one three times): not
    ///   retried, except `CANCEL`, which is how SwiftNIO's streams end when it tears the
    ///   connection down;
    /// - a request that met a dying connection each of the 5 times libcurl sent it, before any
    ///   byte of a response (`Curl_retry_request`: a reused connection closed under it, or a
    ///   refused stream), HTTP/2 or HTTP/1.1: curl error 55, "Connection died, tried 5 times
    ///   before giving up" (or 56, in the same words). Never processed, so asked again: an
    ///   nginx that ends each connection after 2 requests (`keepalive_requests 2`, a `GOAWAY`
    ///   each time) failed 43–64 payloads of 600 over HTTP/2 that way without it.
    static func isConnectionFailure(_ code: CurlCode, message: String, of easy: CurlEasy) -> Bool {
        if code == .sendError || code == .receiveError, message.hasPrefix("Connection died, tried") { return true }
        if code == .http2StreamError, let reset = HTTP2StreamReset(libcurlMessage: message) {
            return reset.isConnectionTeardown
        }
        // The two HTTP/2 codes say which protocol failed; a lost connection says so only once a
        // response had begun (before that libcurl reports no version).
        return code == .http2FramingError || code == .http2StreamError
            || ((code == .receiveError || code == .sendError) && easy.usedHTTP2)
    }

    /// Whether libcurl refused a body for a `Content-Encoding` it does not know (7.88 says
    /// "Unrecognized content encoding type"), rather than for a coded stream it could not
    /// decode: only the first is asked again, undecoded.
    static func isUnknownContentCoding(_ code: CurlCode, message: String) -> Bool {
        code == .badContentEncoding && message.hasPrefix("Unrecognized content encoding type")
    }

    /// The failure of a transfer whose connection `EngineHoldBreaker` shut (libcurl's `code`
    /// for it is that of a connection closed under it: 18, 16, 56…). Not asked again: HTTP/2
    /// multiplexes only one origin's transfers on a connection, that of the origin that held the
    /// thread, and asking again would let it hold the thread, and every other download, again.
    func heldEngine(_ code: CurlCode) -> TransferFailure {
        let seconds = EngineHoldBreaker.limit.components.seconds
        return shown(
            TransferFailure(
                reason: .network,
                detail: "the origin's connection held the download engine for over \(seconds) s (a flood of HTTP/2 frames, read without end while every other download waited), so it was closed (curl error \(code.rawValue))"))
    }

    /// The failure `code` means for `transfer`.
    func failure(for code: CurlCode, of transfer: ActiveTransfer) -> TransferFailure {
        let easy = transfer.easy
        if let error = easy.socketOpenError, FileDescriptorBudget.isExhaustion(error), code == .couldNotConnect {
            return TransferFailure(reason: .resources, detail: "cannot open a socket: \(Errno(rawValue: error))")
        }
        // Refused only when no candidate was permitted: a permitted one that failed to connect
        // is a network failure like any other.
        if code == .couldNotConnect, easy.refusedAddresses > 0, easy.openedSockets == 0 {
            return TransferFailure(reason: .addressRefused, detail: addressRefusedDetail(of: easy))
        }
        if code == .loginDenied, !configuration.allowsCredentialsInURLs {
            return TransferFailure(reason: .invalidURL, detail: "a redirect led to a URL with credentials (user:pass@), which are not sent\(PushAttachmentFetcher.allowCredentials)")
        }
        // A name that does not resolve tells nothing of ports, and a payload learns no more
        // than that address-refused tells it: said under the address policy too, so that a typo
        // in a URL is not hidden behind "could not fetch".
        if code == .couldNotResolveHost {
            return TransferFailure(reason: .network, detail: "\(easy.errorMessage(for: code)) (curl error \(code.rawValue))")
        }
        // A certificate refused: a TLS server answered with one, which tells of the port no
        // more than an HTTP status does, so why (expired, another name, a chain that reaches no
        // trusted authority) is said under the address policy too.
        if code == .peerFailedVerification {
            return Self.certificateRefusal(redactingProxy(easy.errorMessage(for: code)), code: code)
        }
        let failure = curlFailure(for: code, of: transfer)
        guard configuration.addressPolicy.hidesNetworkDetails else { return failure }
        switch failure.reason {
        case .deadline where code == .operationTimedOut:
            return TransferFailure(reason: .deadline, detail: FallbackReason.uniformNetworkDetail + " before the deadline")
        default: return shown(failure)
        }
    }

    /// A server's certificate that libcurl refused, in libcurl's words (OpenSSL's reason, or
    /// the host name the certificate does not name). A chain that reaches no trusted authority
    /// ("unable to get local issuer certificate") is most often a server that leaves out its
    /// intermediate certificate: Android's TLS stack refuses it as this one does, while Apple's
    /// trust evaluation may fetch the missing certificate from the leaf's Authority Information
    /// Access URL, so iPhones may show what is refused here.
    static func certificateRefusal(_ message: String, code: CurlCode) -> TransferFailure {
        var detail = "the server's TLS certificate is not accepted (\(message), curl error \(code.rawValue)): phones check it too, against their own certificate authorities"
        if message.contains("unable to get local issuer certificate") {
            detail += "; when the server leaves out its intermediate certificate, Android refuses it as well, while iPhones may fetch the missing one from the certificate's AIA URL: serve the whole chain"
        }
        return TransferFailure(reason: .network, detail: detail)
    }

    /// `failure` in the words the configuration allows: while the address policy is in force, a
    /// `network` failure says only `FallbackReason.uniformNetworkDetail`.
    func shown(_ failure: TransferFailure) -> TransferFailure {
        guard configuration.addressPolicy.hidesNetworkDetails, failure.reason == .network else { return failure }
        return TransferFailure(reason: .network, detail: FallbackReason.uniformNetworkDetail)
    }

    private func curlFailure(for code: CurlCode, of transfer: ActiveTransfer) -> TransferFailure {
        let easy = transfer.easy
        let message = redactingProxy(easy.errorMessage(for: code))
        switch code {
        // The request's URL is http or https: a URL that is not came from a redirect; with an
        // http(s) URL, the response was not HTTP (a service speaking another protocol, which
        // libcurl calls HTTP/0.9): a network failure, its words hidden under the policy, lest
        // payloads tell open ports from closed ones.
        // A target libcurl cannot parse (`data:`, `javascript:`) leaves the transfer's URL as it
        // was: the `Location` seen says where it led.
        case .unsupportedProtocol
        where transfer.sink.locationLeavesHTTP
            || RedirectSchemes.target(ofLocation: (easy.effectiveURL ?? transfer.owner.ticket.request.url).utf8).isEmpty:
            return TransferFailure(reason: .invalidURL, detail: "redirected to a URL that is not http or https: \(message)")
        case .unsupportedProtocol:
            return TransferFailure(reason: .network, detail: "the response is not HTTP: \(message)")
        case .urlMalformed:
            return TransferFailure(reason: .invalidURL, detail: message)
        case .tooManyRedirects:
            return TransferFailure(reason: .httpStatus, detail: "too many redirects (\(configuration.maximumRedirects))")
        case .badContentEncoding:
            return TransferFailure(reason: .network, detail: "the body's Content-Encoding cannot be decoded: \(message)")
        // The proxy's own refusal of the tunnel says nothing of the origin.
        case .httpReturnedError where easy.proxyConnectCode >= 300:
            return TransferFailure(reason: .network, detail: "the proxy refused the tunnel to the origin: HTTP \(easy.proxyConnectCode)")
        case .httpReturnedError:
            var failure = TransferFailure(reason: .httpStatus, detail: "HTTP \(easy.responseCode)")
            failure.errorResponse = .init(
                status: easy.responseCode, contentType: TransferFailure.ErrorResponse.mediaType(of: easy.contentType),
                announcedLength: easy.contentLength)
            return failure
        case .fileSizeExceeded:
            return policy.ceilingExceeded
        case .writeError:
            if transfer.sink.redirectToPortZero {
                return TransferFailure(reason: .invalidURL, detail: "redirected to a URL whose port is 0, outside 1–65535")
            }
            if transfer.sink.conflictingLengths {
                return TransferFailure(reason: .network, detail: "the response has two different Content-Length headers")
            }
            if transfer.sink.headersOverflowed {
                return TransferFailure(
                    reason: .network,
                    detail: "the response's header lines, trailers after its body included, pass \(CurlResponseSink.maximumHeaderBytes / 1024) KiB")
            }
            if let error = transfer.sink.writeFailure {
                // A nameless file's path (/proc/self/fd/N) would say nothing: its directory does.
                let file = TemporaryFiles.isAnonymous(transfer.temporaryPath)
                    ? "the body in \(transfer.owner.ticket.request.temporaryDirectory)" : transfer.temporaryPath
                let outOfRoom = error == .noSpace || error == .diskQuotaExceeded
                return TransferFailure(
                    reason: .storage, detail: "cannot write \(file): \(error)",
                    roomWanted: outOfRoom ? max(easy.contentLength.map { Int(clamping: $0) } ?? 0, transfer.sink.bytesReceived) : nil,
                    roomIsQuota: error == .diskQuotaExceeded)
            }
            return TransferFailure(reason: .network, detail: message)
        case .operationTimedOut:
            return TransferFailure(reason: .deadline, detail: message)
        // libcurl's "Empty reply from server" also stands for a server that broke the protocol
        // before any response (an HTTP/2 window overflow, a push promise, HTTP/1.1 after ALPN
        // chose h2): it did reply, with nothing usable.
        case .gotNothing:
            return TransferFailure(
                reason: .network,
                detail: "no response: the server closed the connection, or broke the protocol, before sending one (\(message), curl error \(code.rawValue))")
        // libcurl refuses a response header line over 100 KB (`CURL_MAX_HTTP_HEADER`) with its
        // out-of-memory code and no message of its own; memory truly running out is far rarer.
        case .outOfMemory:
            return TransferFailure(
                reason: .network,
                detail: "a response header line is longer than libcurl accepts (100 KB), or memory ran out (curl error \(code.rawValue))")
        // A stream reset (but `CANCEL`, see `isConnectionFailure`): the origin's answer.
        case .http2StreamError:
            guard let reset = HTTP2StreamReset(libcurlMessage: message), !reset.isConnectionTeardown else { fallthrough }
            return TransferFailure(
                reason: .network,
                detail: "the HTTP/2 stream was reset with \(reset.name) (by the origin, or by libcurl at a breach of the protocol in the response): its answer, not asked for again (\(message), curl error \(code.rawValue))")
        default:
            return TransferFailure(reason: .network, detail: "\(message) (curl error \(code.rawValue))")
        }
    }
}

/// An HTTP/2 stream reset with an error code (RFC 9113 §7), read from libcurl's words for it:
/// `HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err 1)`, libcurl 7.88.1's
/// (lib/http2.c, `http2_handle_stream_close`, with curl error 92), the code named by nghttp2
/// 1.52's `nghttp2_http2_strerror`. libcurl tells the code in no other way; its words are read
/// here alone. The reset may be the origin's `RST_STREAM`, or nghttp2's own at a breach of the
/// protocol in the response.
struct HTTP2StreamReset: Hashable, Sendable {
    /// The error code's name (`PROTOCOL_ERROR`; `unknown` for a code RFC 9113 does not name).
    var name: String
    /// The error code.
    var code: UInt32

    /// `CANCEL`: how the streams of a SwiftNIO server end when it tears their connection down
    /// (its rapid-reset protection), as well as a stream the origin no longer wants.
    static let cancel: UInt32 = 0x8

    /// The reset in libcurl's `message`, if it tells of one.
    init?(libcurlMessage message: String) {
        guard let start = message.range(of: "was not closed cleanly: ") else { return nil }
        let rest = message[start.upperBound...]
        guard let open = rest.range(of: " (err "), let close = rest[open.upperBound...].firstIndex(of: ")"),
            let code = UInt32(rest[open.upperBound..<close])
        else { return nil }
        name = String(rest[..<open.lowerBound])
        self.code = code
    }

    /// Whether the reset may be the connection's teardown rather than the origin's answer.
    var isConnectionTeardown: Bool { code == Self.cancel }
}
