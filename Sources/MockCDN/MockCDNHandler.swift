import Foundation
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves one HTTP/1.1 connection, or one HTTP/2 stream: requests are handled strictly one at a time (on
/// HTTP/1.1 the pipelining handler in front of it holds back the next request until this one's `.end` has
/// been written). Connections are counted by the `ConnectionCounter` in front of everything.
///
/// All state lives on the channel's event loop; callbacks use the loop-isolated NIO APIs.
final class MockCDNHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Body chunk size when not rate limited.
    static let chunkSize = 64 * 1024

    private struct ActiveResponse {
        let id: Int
        let plan: ResponsePlan
        let version: HTTPVersion
        /// Whether the statistics count this response (false for `/_stats`).
        let counted: Bool
        /// Bytes of the body to send before stopping (the body length, or a fault's offset).
        let limit: Int
        var offset = 0
        var bodyStart = NIODeadline.now()
        /// Set once a deliberate fault has been injected.
        var faulted = false
    }

    private let stats: StatsRecorder
    /// "http" or "https", for the server's own URLs.
    private let scheme: String
    /// Where `/files/NAME` is served from, if anywhere.
    private let filesDirectory: String?
    private var requestHead: HTTPRequestHead?
    private var response: ActiveResponse?
    private var generation = 0
    private var scheduled: Scheduled<Void>?
    private var isOpen = true

    init(stats: StatsRecorder, scheme: String, filesDirectory: String? = nil) {
        self.filesDirectory = filesDirectory
        self.stats = stats
        self.scheme = scheme
    }

    // MARK: - Channel events

    func channelInactive(context: ChannelHandlerContext) {
        isOpen = false
        scheduled?.cancel()
        scheduled = nil
        if let r = response {
            response = nil
            if r.counted && !r.faulted { stats.responseAborted() }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // I/O errors such as ECONNRESET: just drop the connection (channelInactive does the accounting).
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestHead = head
        case .body:
            break  // request bodies are ignored
        case .end:
            guard let head = requestHead else { return }
            requestHead = nil
            handleRequest(context: context, head: head)
        }
    }

    // MARK: - Requests

    private func handleRequest(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let (path, query) = Router.splitTarget(head.uri)
        // An HTTP/2 stream ends with its last frame and never closes the connection (NIO's
        // `isKeepAlive` answers false for any version but 1.x, which would close each stream).
        let keepAlive = head.version.major >= 2 || head.isKeepAlive
        if path == "/_stats" || path == "/_stats/reset" {
            var plan = statsPlan(method: head.method, path: path)
            plan.headers.add(name: "Date", value: HTTPDate.format(HTTPDate.now()))
            plan.keepAlive = keepAlive
            if !keepAlive { plan.headers.add(name: "Connection", value: "close") }
            if head.method == .HEAD { plan.sendBody = false }
            start(context: context, plan: plan, version: head.version, counted: false)
            return
        }
        let conditional =
            head.headers.contains(name: "If-None-Match") || head.headers.contains(name: "If-Modified-Since")
        let earlierRequests = stats.requestReceived(
            path: String(path), url: head.uri, conditional: conditional, http2: head.version.major == 2)
        let request = Router.Request(
            scheme: scheme,
            method: head.method,
            uri: head.uri,
            path: path,
            query: query,
            headers: head.headers,
            version: head.version,
            keepAlive: keepAlive,
            earlierRequests: earlierRequests,
            filesDirectory: filesDirectory
        )
        let plan = Router.plan(for: request, fallbackHost: fallbackHost(context: context))
        start(context: context, plan: plan, version: head.version, counted: true)
    }

    private func fallbackHost(context: ChannelHandlerContext) -> String {
        guard let address = context.channel.localAddress, let ip = address.ipAddress, let port = address.port
        else { return "127.0.0.1" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    private func statsPlan(method: HTTPMethod, path: Substring) -> ResponsePlan {
        if path == "/_stats/reset" {
            guard method == .POST else {
                var plan = Router.htmlPage(status: .methodNotAllowed)
                plan.headers.add(name: "Allow", value: "POST")
                return plan
            }
            stats.reset()
            var plan = ResponsePlan()
            plan.status = .noContent
            plan.sendBody = false
            return plan
        }
        guard method == .GET || method == .HEAD else {
            var plan = Router.htmlPage(status: .methodNotAllowed)
            plan.headers.add(name: "Allow", value: "GET, HEAD")
            return plan
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(stats.snapshot())) ?? Data("{}".utf8)
        var plan = ResponsePlan()
        plan.headers.add(name: "Content-Type", value: "application/json")
        plan.headers.add(name: "Content-Length", value: String(data.count))
        plan.headers.add(name: "Cache-Control", value: "no-store")
        plan.body = .fixed(ByteBuffer(bytes: data))
        return plan
    }

    // MARK: - Responses

    private func start(context: ChannelHandlerContext, plan: ResponsePlan, version: HTTPVersion, counted: Bool) {
        generation += 1
        let id = generation
        let bodyLength = plan.sendBody ? plan.body.count : 0
        let limit = plan.fault.map { min($0.after, bodyLength) } ?? bodyLength
        response = ActiveResponse(id: id, plan: plan, version: version, counted: counted, limit: limit)
        if plan.delayMs > 0 {
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(plan.delayMs)) {
                self.scheduled = nil
                self.sendHead(context: context, id: id)
            }
        } else {
            sendHead(context: context, id: id)
        }
    }

    private func sendHead(context: ChannelHandlerContext, id: Int) {
        guard isOpen, var r = response, r.id == id else { return }
        let plan = r.plan
        // `rst` without a truncation: the stream ends before any response (as a truncation at 0).
        if plan.resetBeforeHead {
            injectFault(context: context, id: id, kind: .truncate)
            return
        }
        let head = HTTPResponseHead(version: r.version, status: plan.status, headers: plan.headers)
        if let hints = plan.earlyHints {
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: r.version, status: .custom(code: 103, reasonPhrase: "Early Hints"), headers: hints))), promise: nil)
        }
        if r.counted && plan.notModified { stats.notModifiedSent() }
        let bodyLength = plan.sendBody ? plan.body.count : 0
        if bodyLength == 0 {
            if r.counted { stats.responseCompleted() }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            finishResponse(context: context, id: id)
            return
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        r.bodyStart = .now()
        response = r
        pump(context: context, id: id)
    }

    /// Chunks written back to back (when writes complete synchronously) before yielding the event loop.
    static let maxChunksPerTick = 16

    /// Sends body chunks until a write is pending, the rate budget is used up or `limit` is reached
    /// (then finishes the response or injects the fault). Loops instead of recursing when writes
    /// complete synchronously, and yields to other connections every ``maxChunksPerTick`` chunks.
    private func pump(context: ChannelHandlerContext, id: Int) {
        var burst = 0
        while true {
            guard isOpen, let r = response, r.id == id else { return }
            if r.offset >= r.limit {
                if let fault = r.plan.fault, r.limit < r.plan.body.count {
                    context.flush()
                    injectFault(context: context, id: id, kind: fault.kind)
                } else {
                    finishResponse(context: context, id: id)
                }
                return
            }
            if burst >= Self.maxChunksPerTick {
                context.eventLoop.assumeIsolated().execute { self.pump(context: context, id: id) }
                return
            }
            burst += 1
            let remaining = r.limit - r.offset
            guard let rate = r.plan.rate else {
                let chunk = r.plan.body.chunk(at: r.offset, maxLength: min(Self.chunkSize, remaining))
                guard writeChunk(context: context, id: id, chunk: chunk) else { return }
                continue
            }
            // Rate limited: small chunks, each sent once the budget for it has accrued since the body started.
            let chunkMax = max(1, min(Self.chunkSize, rate / 20))
            let chunk = r.plan.body.chunk(at: r.offset, maxLength: min(chunkMax, remaining))
            let sentAfter = Double(r.offset + chunk.readableBytes)
            let due = r.bodyStart + .nanoseconds(Int64(sentAfter * 1_000_000_000 / Double(rate)))
            if due > .now() {
                context.flush()  // the head, if nothing else went out yet
                scheduled = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) {
                    self.scheduled = nil
                    if self.writeChunk(context: context, id: id, chunk: chunk) {
                        self.pump(context: context, id: id)
                    }
                }
                return
            }
            guard writeChunk(context: context, id: id, chunk: chunk) else { return }
        }
    }

    /// Writes one body chunk. Returns true if the write completed synchronously and successfully (the
    /// caller continues); otherwise the completion (or the failure handling) happens later/has happened.
    private func writeChunk(context: ChannelHandlerContext, id: Int, chunk: ByteBuffer) -> Bool {
        guard isOpen, var r = response, r.id == id else { return false }
        let length = chunk.readableBytes
        r.offset += length
        let completing = r.offset == r.plan.body.count
        response = r
        let counted = r.counted
        // Count before handing the bytes to the socket, so a client never sees data the stats don't.
        if counted {
            stats.addBytes(length)
            if completing { stats.responseCompleted() }
        }
        var registering = true
        var inlineResult: Result<Void, any Error>?
        let future = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))))
        future.assumeIsolated().whenComplete { result in
            if registering {
                inlineResult = result  // completed already: handled below, without recursing
                return
            }
            if self.writeFinished(context: context, id: id, result: result, length: length, completing: completing, counted: counted) {
                self.pump(context: context, id: id)
            }
        }
        registering = false
        guard let result = inlineResult else { return false }
        return writeFinished(context: context, id: id, result: result, length: length, completing: completing, counted: counted)
    }

    /// Handles a body write's outcome; true on success.
    private func writeFinished(
        context: ChannelHandlerContext,
        id: Int,
        result: Result<Void, any Error>,
        length: Int,
        completing: Bool,
        counted: Bool
    ) -> Bool {
        switch result {
        case .success:
            return true
        case .failure:
            if counted { stats.writeFailed(bytes: length, wasCompleting: completing) }
            abort(context: context, id: id)
            return false
        }
    }

    private func finishResponse(context: ChannelHandlerContext, id: Int) {
        guard let r = response, r.id == id else { return }
        // Clear the state first: writing `.end` may synchronously deliver the next pipelined request.
        response = nil
        let keepAlive = r.plan.keepAlive
        context.writeAndFlush(wrapOutboundOut(.end(r.plan.sendBody ? r.plan.trailers : nil))).assumeIsolated().whenComplete { result in
            if case .failure = result {
                context.close(promise: nil)
            } else if !keepAlive {
                context.close(promise: nil)
            }
        }
    }

    /// The client went away mid-response (a write failed).
    private func abort(context: ChannelHandlerContext, id: Int) {
        guard let r = response, r.id == id else { return }
        response = nil
        scheduled?.cancel()
        scheduled = nil
        if r.counted && !r.faulted { stats.responseAborted() }
        context.close(promise: nil)
    }

    /// How long a `reset_after` fault waits for the sent bytes to reach the client before resetting anyway.
    static let resetDrainTimeout = TimeAmount.seconds(2)

    /// Resets the connection (SO_LINGER {1,0} + close) once the kernel has delivered everything written so
    /// far (an RST discards unsent data), or when `deadline` passes.
    private func resetWhenDrained(context: ChannelHandlerContext, id: Int, deadline: NIODeadline) {
        guard isOpen, response?.id == id else { return }
        let reset = {
            guard self.isOpen, let current = self.response, current.id == id else { return }
            self.response = nil
            if let provider = context.channel as? SocketOptionProvider {
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            context.close(promise: nil)
        }
        #if os(Linux)
        if let provider = context.channel as? SocketOptionProvider, NIODeadline.now() < deadline {
            let info: EventLoopFuture<RawTCPInfo> = provider.unsafeGetSocketOption(level: .tcp, name: .tcp_info)
            info.assumeIsolated().whenComplete { result in
                if case .success(let info) = result, !info.isDrained {
                    self.scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(2)) {
                        self.scheduled = nil
                        self.resetWhenDrained(context: context, id: id, deadline: deadline)
                    }
                } else {
                    reset()
                }
            }
            return
        }
        #endif
        reset()
    }

    private func injectFault(context: ChannelHandlerContext, id: Int, kind: FaultKind) {
        guard var r = response, r.id == id else { return }
        r.faulted = true
        if r.counted { stats.faultInjected() }
        switch kind {
        case .truncate:
            response = nil
            if let code = r.plan.streamReset, r.version.major == 2 {
                // Passed down to the stream's own channel (see `StreamReset`).
                context.triggerUserOutboundEvent(StreamReset(code: code), promise: nil)
            } else {
                context.close(promise: nil)
            }
        case .reset:
            response = r
            resetWhenDrained(context: context, id: id, deadline: .now() + Self.resetDrainTimeout)
        case .stall, .flood:
            response = r  // stays "in flight": the pipelining handler holds back further requests
            if kind == .flood, r.version.major == 2 {
                // Written below the HTTP/2 codec of the stream's connection (see `FrameFlood`).
                context.triggerUserOutboundEvent(FrameFlood(duration: .milliseconds(r.plan.floodMs), frameBytes: r.plan.floodFrameBytes), promise: nil)
            }
            if let ms = kind == .flood ? r.plan.floodMs : r.plan.stallMs {
                scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(ms)) {
                    self.scheduled = nil
                    guard let current = self.response, current.id == id else { return }
                    self.response = nil
                    context.close(promise: nil)
                }
            }
        }
    }
}

/// Asks an HTTP/2 stream's channel to end the stream with `RST_STREAM(code)`, where a body stops
/// short or before any response, without `END_STREAM`. With `NO_ERROR` the server says it is done
/// with the stream, and nothing says the body was whole (closing the stream's channel would send
/// `CANCEL`, which clients report as a failure); with another code, the server rejects the request
/// (`REFUSED_STREAM`: unprocessed, to be tried again). `MockCDNTLS` writes the frame, below the
/// HTTP/2-to-HTTP/1 codec.
package struct StreamReset: Sendable {
    /// The HTTP/2 error code (RFC 9113 §7).
    package var code: UInt32

    package init(code: UInt32) {
        self.code = code
    }
}

/// Asks an HTTP/2 stream's connection to send, without a pause, empty `DATA` frames on the stream
/// (no body, no flow control spent, nothing to hand on), for `duration`, then to close: an origin
/// that floods a connection, holding a client that reads as long as frames are waiting.
/// `MockCDNTLS` writes them, below the connection's HTTP/2 codec.
package struct FrameFlood: Sendable {
    package var duration: TimeAmount
    /// The body bytes each frame carries (0: empty frames).
    package var frameBytes: Int
    /// The stream's id (the stream's own channel knows it; 0 until it is told).
    package var streamID: Int

    package init(duration: TimeAmount, frameBytes: Int = 0, streamID: Int = 0) {
        self.duration = duration
        self.frameBytes = frameBytes
        self.streamID = streamID
    }
}

#if os(Linux)
/// The kernel's `struct tcp_info` viewed as 32-bit words (Glibc's declaration lacks the newer fields).
struct RawTCPInfo: Sendable {
    var words: (
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32
    ) = (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    )

    private func word(atByteOffset offset: Int) -> UInt32 {
        withUnsafeBytes(of: words) { $0.load(fromByteOffset: offset, as: UInt32.self) }
    }

    /// No unacknowledged segments (`tcpi_unacked`, byte 24) and no unsent bytes (`tcpi_notsent_bytes`, byte 144).
    var isDrained: Bool {
        word(atByteOffset: 24) == 0 && word(atByteOffset: 144) == 0
    }
}
#endif
