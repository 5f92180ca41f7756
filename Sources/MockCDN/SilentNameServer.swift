import NIOCore
import NIOPosix

/// A name server that reads every query and answers none, as an attacker's authoritative server
/// may: each lookup through it waits out the resolver's own timeout (`options timeout:` in
/// `resolv.conf`, up to 30 s a try). Tests point `/etc/resolv.conf` at it inside a network
/// namespace of their own.
public struct SilentNameServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The UDP port it listens on.
    public let port: Int

    /// Listens for queries on UDP `host`:`port` (0 picks a free port).
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> SilentNameServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            // No handler: the pipeline's tail drops each datagram it reads.
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            return SilentNameServer(group: group, channel: channel, port: channel.localAddress?.port ?? port)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening.
    public func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}
