import MockCDN
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

extension MockCDNServer {
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
    /// offers `h2` and `http/1.1` by ALPN, as CDNs do; without, plain HTTP/1.1. See
    /// `start(host:port:eventLoopThreads:filesDirectory:)` for `filesDirectory`.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        eventLoopThreads: Int = System.coreCount,
        tls: TLS?,
        filesDirectory: String? = nil
    ) async throws -> MockCDNServer {
        guard let tls else {
            return try await start(host: host, port: port, eventLoopThreads: eventLoopThreads, filesDirectory: filesDirectory)
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateChainPath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)))
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        let secure = SecureServing { channel, serving in
            @Sendable func serveHTTP2(_ channel: any Channel) -> EventLoopFuture<Void> {
                channel.configureHTTP2Pipeline(mode: .server, inboundStreamInitializer: { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(QuietStreamResetWriter())
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                        try stream.pipeline.syncOperations.addHandler(serving.makeHandler())
                    }
                }).map { _ in }
            }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            }.flatMap {
                channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: serveHTTP2, http1ChannelConfigurator: serving.http1)
            }
        }
        return try await start(
            host: host, port: port, eventLoopThreads: eventLoopThreads, filesDirectory: filesDirectory, secure: secure)
    }
}

/// Ends an HTTP/2 stream with `RST_STREAM(NO_ERROR)` when the handler serving it asks
/// (`QuietStreamReset`, for `rst_no_error`); passes everything else on.
private final class QuietStreamResetWriter: ChannelOutboundHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is QuietStreamReset else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.rstStream(.noError)), promise: promise)
    }
}
