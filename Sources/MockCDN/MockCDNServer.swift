import NIOCore
import NIOHTTP1
import NIOPosix
import NIOConcurrencyHelpers

/// An HTTP/1.1 keep-alive origin on SwiftNIO that serves deterministic synthetic media and injects faults on request.
/// Given a certificate (``TLS``) it serves HTTPS instead and offers HTTP/2 by ALPN, as CDNs do: each HTTP/2
/// stream is served like one HTTP/1.1 request, faults included (a reset then resets the stream).
///
/// Routes: `GET|HEAD /media/NAME.EXT?bytes=N` (or `/media/NAME?media=EXT`) with the optional query parameters `first_bytes` (the size on the first request for the exact URL), `delay_ms`, `rate`,
/// `stall_after`, `stall_ms`, `reset_after`, `truncate_after`, `fault_once`, `status`, `content_type`, `chunked`,
/// `no_length` (neither Content-Length nor chunked: on HTTP/1.1 the body ends with the connection), `rst_no_error`
/// (on HTTP/2 a truncation resets the stream with `NO_ERROR`, which libcurl takes for the body's end), `redirects`, `redirect_to`, `then_redirect_to`, `cache_control`, `no_cache_headers`, `expires`, `no_validators`, `etag`, `header_bytes`, `set_cookie`, `require_cookie`, `require_user_agent`, `require_accept_encoding` and `reject_header`;
/// `GET /_stats` (JSON of ``MockCDNStats``) and `POST /_stats/reset`; anything else is a 404.
public struct MockCDNServer: Sendable {
    /// The host the server listens on, as given to ``start(host:port:eventLoopThreads:)``.
    public let host: String
    /// The port the server listens on (the real one when started with port 0).
    public let port: Int

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let recorder: StatsRecorder
    private let shutDown: ShutdownFlag
    /// Whether the server speaks TLS (and so HTTP/2 where the client offers it).
    public let isTLS: Bool

    /// Starts listening on plain HTTP/1.1; `port: 0` picks a free port (`MockCDNTLS` adds
    /// HTTPS with HTTP/2). With `filesDirectory`, `/files/NAME` serves that directory's file NAME
    /// as it is (real media made by real encoders); `?encoding=gzip` serves `NAME.gz` with
    /// `Content-Encoding: gzip` whatever the request asked, as S3 objects uploaded gzipped are
    /// (`?encoding=deflate`: `NAME.zz`; any other coding labels the file as it is, an origin's
    /// mistake such as `utf-8`), and `?chunked=1` leaves out Content-Length; `?no_length=1`
    /// sends neither, `?cut_at=N` serves the (encoded) file's first N bytes under honest framing, and
    /// `truncate_after` and `rst_no_error` cut the body as on `/media/`.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        eventLoopThreads: Int = System.coreCount,
        filesDirectory: String? = nil
    ) async throws -> MockCDNServer {
        try await start(host: host, port: port, eventLoopThreads: eventLoopThreads, filesDirectory: filesDirectory, secure: nil)
    }

    /// Starts listening, serving each connection through `secure` when given (TLS, then HTTP/2 or
    /// HTTP/1.1): the seam through which `MockCDNTLS` adds HTTPS, so that a program that needs
    /// only plain HTTP does not link a TLS stack.
    package static func start(
        host: String, port: Int, eventLoopThreads: Int, filesDirectory: String?, secure: SecureServing?
    ) async throws -> MockCDNServer {
        let scheme = secure == nil ? "http" : "https"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, eventLoopThreads))
        let recorder = StatsRecorder()
        let serving = ServingHandlers(
            http1: { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Framing as the plan says: a response without Content-Length or chunked
                    // coding is delimited by the connection's close (`no_length`), where NIO
                    // would otherwise make it chunked.
                    var encoder = HTTPResponseEncoder.Configuration()
                    encoder.automaticallySetFramingHeaders = false
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withErrorHandling: true, withEncoderConfiguration: encoder)
                    try channel.pipeline.syncOperations.addHandler(
                        MockCDNHandler(stats: recorder, scheme: scheme, filesDirectory: filesDirectory))
                }
            },
            makeHandler: { MockCDNHandler(stats: recorder, scheme: scheme, filesDirectory: filesDirectory) })
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                let counted = channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectionCounter(stats: recorder))
                }
                guard let secure else { return counted.flatMap { serving.http1(channel) } }
                return counted.flatMap { secure.initialize(channel, serving) }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
            // NIO's words name the system call ("bind(descriptor:ptr:bytes:)"); these say what failed.
            if let error = error as? IOError {
                throw ListenFailure(description: "cannot listen on \(host):\(port): \(String(cString: strerror(error.errnoCode)))")
            }
            throw error
        }
        let boundPort = channel.localAddress?.port ?? port
        return MockCDNServer(
            host: host,
            port: boundPort,
            group: group,
            channel: channel,
            recorder: recorder,
            shutDown: ShutdownFlag(),
            isTLS: secure != nil
        )
    }

    private init(
        host: String,
        port: Int,
        group: MultiThreadedEventLoopGroup,
        channel: any Channel,
        recorder: StatsRecorder,
        shutDown: ShutdownFlag,
        isTLS: Bool
    ) {
        self.host = host
        self.port = port
        self.group = group
        self.channel = channel
        self.recorder = recorder
        self.shutDown = shutDown
        self.isTLS = isTLS
    }

    /// "http://127.0.0.1:PORT", or "https://…" with TLS (IPv6 hosts are bracketed).
    public var baseURL: String {
        let h = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(isTLS ? "https" : "http")://\(h):\(port)"
    }

    /// baseURL + path, e.g. `server.url("/media/a.jpg?bytes=100")`.
    public func url(_ pathAndQuery: String) -> String {
        pathAndQuery.hasPrefix("/") ? baseURL + pathAndQuery : baseURL + "/" + pathAndQuery
    }

    /// Snapshot of the counters.
    public func stats() -> MockCDNStats {
        recorder.snapshot()
    }

    /// Zeroes the counters (keeps `currentConnections`; `peakConnections` restarts from it).
    public func resetStats() {
        recorder.reset()
    }

    /// Stops listening, closes every connection and shuts the event loops down. Safe to call more than once.
    public func shutdown() async throws {
        guard shutDown.claim() else { return }
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// Suspends until the listening socket is closed (e.g. by ``shutdown()`` from another task).
    public func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }
}

/// Why the server could not listen on its address (in use, not permitted…).
public struct ListenFailure: Error, CustomStringConvertible {
    /// What failed, in the system's words.
    public var description: String
}

/// Makes ``MockCDNServer/shutdown()`` idempotent.
/// How a secure server takes each new connection (TLS, then HTTP/2 or HTTP/1.1 by ALPN), given
/// how this server serves HTTP/1.1 and each request stream.
package struct SecureServing: Sendable {
    package var initialize: @Sendable (_ channel: any Channel, _ serving: ServingHandlers) -> EventLoopFuture<Void>

    package init(initialize: @escaping @Sendable (_ channel: any Channel, _ serving: ServingHandlers) -> EventLoopFuture<Void>) {
        self.initialize = initialize
    }
}

/// What a connection is served with: an HTTP/1.1 pipeline, or a handler per request stream
/// (behind an HTTP/2-to-HTTP/1 codec).
package struct ServingHandlers: Sendable {
    /// Sets up HTTP/1.1 serving on a connection.
    package let http1: @Sendable (any Channel) -> EventLoopFuture<Void>
    /// A new handler for one request stream.
    package let makeHandler: @Sendable () -> any ChannelHandler
}

private final class ShutdownFlag: Sendable {
    private let done = NIOLockedValueBox(false)

    /// True for the first caller only.
    func claim() -> Bool {
        done.withLockedValue { done in
            defer { done = true }
            return !done
        }
    }
}

/// Counts a connection (a TCP connection, whatever protocol it then speaks) while it is open.
/// It is the first handler of every connection, so HTTP/2 streams are never counted as connections.
private final class ConnectionCounter: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let stats: StatsRecorder

    init(stats: StatsRecorder) {
        self.stats = stats
    }

    func channelActive(context: ChannelHandlerContext) {
        stats.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stats.connectionClosed()
        context.fireChannelInactive()
    }
}
