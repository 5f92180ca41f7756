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
                do {
                    try channel.pipeline.syncOperations.addHandler(FrameFlooder())
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2Pipeline(mode: .server, inboundStreamInitializer: { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(StreamResetWriter())
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

/// Ends an HTTP/2 stream with `RST_STREAM` when the handler serving it asks (`StreamReset`, for
/// `rst_no_error` and `rst`), and hands a `FrameFlood` to the stream's connection; passes
/// everything else on.
private final class StreamResetWriter: ChannelOutboundHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if var flood = event as? FrameFlood, let connection = context.channel.parent,
            let stream = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        {
            flood.streamID = Int(stream)
            connection.triggerUserOutboundEvent(flood, promise: promise)
            return
        }
        guard let reset = event as? StreamReset else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.rstStream(HTTP2ErrorCode(networkCode: Int(reset.code)))), promise: promise)
    }
}

/// Floods its connection when a stream asks (`FrameFlood`, for `flood_after`): empty `DATA` frames
/// on the stream, written in bursts for as long as the connection takes them (resumed when it
/// drains), until the flood's time is up or the client has gone; then it closes the connection.
/// It sits below the HTTP/2 codec, which writes whole frames, so that the bursts fall between
/// frames and the codec knows nothing of them. libcurl 7.88 reads on inside one
/// `curl_multi_perform` until its stream has bytes for it, or none are waiting: the bursts keep
/// the kernel's buffers full, so that the client finds frames waiting even when this thread is not
/// scheduled for a while.
private final class FrameFlooder: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// 100,000 `DATA` frames on `stream`, each of nine bytes of header (a length of `bytes`, the
    /// type 0, no flags) and `bytes` body bytes.
    private static func burst(on stream: Int, bytes: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        let id = UInt32(truncatingIfNeeded: stream) & 0x7FFF_FFFF
        for _ in 0..<100_000 {
            buffer.writeBytes([0, 0, UInt8(bytes), 0, 0])
            buffer.writeInteger(id)
            buffer.writeRepeatingByte(0x41, count: bytes)
        }
        return buffer
    }
    /// Bursts written in one turn of the event loop before it serves its other channels.
    private static let burstsPerTurn = 4

    /// When the flood ends, once one began.
    private var end: NIODeadline?
    /// The frames written again and again.
    private var burst = ByteBuffer()
    /// Whether a turn of the flood is scheduled.
    private var scheduled = false

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let flood = event as? FrameFlood else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed(())
        end = .now() + flood.duration
        burst = Self.burst(on: flood.streamID, bytes: flood.frameBytes)
        // A deep backlog in the kernel (see above).
        _ = context.channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: 8 << 20)
        send(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if end != nil, context.channel.isWritable { send(context: context) }
        context.fireChannelWritabilityChanged()
    }

    /// Writes bursts while the connection takes them; on again at the next turn, or once it drains.
    private func send(context: ChannelHandlerContext) {
        guard let end, context.channel.isActive, !scheduled else { return }
        guard NIODeadline.now() < end else {
            self.end = nil
            context.close(promise: nil)
            return
        }
        var written = 0
        while context.channel.isWritable, written < Self.burstsPerTurn {
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(burst)), promise: nil)
            written += 1
        }
        guard context.channel.isWritable else { return }  // channelWritabilityChanged resumes it
        scheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.scheduled = false
            self.send(context: context)
        }
    }
}
