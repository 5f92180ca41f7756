import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP/1.1 keep-alive origin on SwiftNIO that serves deterministic synthetic media and injects faults on request.
///
/// Routes: `GET|HEAD /media/NAME.EXT?bytes=N` with the optional query parameters `delay_ms`, `rate`,
/// `stall_after`, `stall_ms`, `reset_after`, `truncate_after`, `status`, `content_type`, `chunked`,
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

    /// Starts listening; `port: 0` picks a free port.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        eventLoopThreads: Int = System.coreCount
    ) async throws -> MockCDNServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, eventLoopThreads))
        let recorder = StatsRecorder()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MockCDNHandler(stats: recorder))
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
            shutDown: ShutdownFlag()
        )
    }

    private init(
        host: String,
        port: Int,
        group: MultiThreadedEventLoopGroup,
        channel: any Channel,
        recorder: StatsRecorder,
        shutDown: ShutdownFlag
    ) {
        self.host = host
        self.port = port
        self.group = group
        self.channel = channel
        self.recorder = recorder
        self.shutDown = shutDown
    }

    /// "http://127.0.0.1:PORT" (IPv6 hosts are bracketed).
    public var baseURL: String {
        let h = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(h):\(port)"
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
    private let done = Mutex(false)

    /// True for the first caller only.
    func claim() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
