import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOConcurrencyHelpers

/// An HTTP/1.1 keep-alive origin on SwiftNIO that serves deterministic synthetic media and injects faults on request.
/// Given a certificate (``TLS``) it serves HTTPS instead and offers HTTP/2 by ALPN, as CDNs do: each HTTP/2
/// stream is served like one HTTP/1.1 request, faults included (a reset then resets the stream).
///
/// Routes: `GET|HEAD /media/NAME.EXT?bytes=N` with the optional query parameters `delay_ms`, `rate`,
/// `stall_after`, `stall_ms`, `reset_after`, `truncate_after`, `fault_once`, `status`, `content_type`, `chunked`,
/// `redirects`, `redirect_to`, `cache_control`, `no_cache_headers`, `expires`, `no_validators` and `etag`;
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

    /// The certificate a TLS server presents: PEM files, as `openssl req -x509` writes them.
    public struct TLS: Sendable {
        /// The certificate chain, leaf first.
        public var certificateChainPath: String
        /// The leaf certificate's private key.
        public var privateKeyPath: String

        /// A certificate from these two PEM files.
        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// Starts listening; `port: 0` picks a free port. With `tls`, the server speaks HTTPS and
    /// offers `h2` and `http/1.1` by ALPN.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        eventLoopThreads: Int = System.coreCount,
        tls: TLS? = nil
    ) async throws -> MockCDNServer {
        let sslContext = try tls.map { tls in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateChainPath).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)))
            configuration.applicationProtocols = ["h2", "http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        }
        let scheme = sslContext == nil ? "http" : "https"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, eventLoopThreads))
        let recorder = StatsRecorder()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                @Sendable func serveHTTP1(_ channel: any Channel) -> EventLoopFuture<Void> {
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(MockCDNHandler(stats: recorder, scheme: scheme))
                    }
                }
                @Sendable func serveHTTP2(_ channel: any Channel) -> EventLoopFuture<Void> {
                    channel.configureHTTP2Pipeline(mode: .server, inboundStreamInitializer: { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(MockCDNHandler(stats: recorder, scheme: scheme))
                        }
                    }).map { _ in }
                }
                let counted = channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectionCounter(stats: recorder))
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                }
                guard sslContext != nil else { return counted.flatMap { serveHTTP1(channel) } }
                return counted.flatMap {
                    channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: serveHTTP2, http1ChannelConfigurator: serveHTTP1)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
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
            isTLS: sslContext != nil
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

/// Makes ``MockCDNServer/shutdown()`` idempotent.
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
