@testable import AttachmentFetcher
import Foundation
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP proxy on 127.0.0.1 that opens `CONNECT` tunnels to 127.0.0.1 only, as a corporate
/// proxy opens them for HTTPS: it reads the request, connects to the port it names, answers
/// `200`, then relays bytes both ways (two threads a tunnel) until either side ends, and ends the
/// other with it. Any other request is answered `405`. Accepts on a thread of its own until
/// stopped; what each tunnel was asked for is in `targets`.
final class ConnectProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let asked = Locked<[String]>([])

    /// The `CONNECT` targets asked for so far ("127.0.0.1:443"), in order.
    var targets: [String] { asked.withLock { $0 } }

    init() throws {
        let (listener, port) = try LoopbackSocket.listening()
        self.listener = listener
        self.port = port
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                // Stopped: the listener is closed by the thread that accepts on it (see
                // `BannerServer`), never by `stop()`.
                guard client >= 0 else {
                    close(listener)
                    return
                }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// Stops accepting; tunnels open go on until either side ends them.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve(_ client: Int32) {
        // The request head, at most 8 KiB; nothing after it is expected before the answer.
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !head.ends(with: Array("\r\n\r\n".utf8)), head.count < 8192 {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else {
                close(client)
                return
            }
            head += buffer[..<count]
        }
        let line = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ")
        guard line.count == 3, line[0] == "CONNECT", line[1].hasPrefix("127.0.0.1:"), let port = Int(line[1].dropFirst(10)) else {
            write(client, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            close(client)
            return
        }
        asked.withLock { $0.append(String(line[1])) }
        let origin = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = LoopbackSocket.address(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(origin, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            write(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            close(origin)
            close(client)
            return
        }
        write(client, "HTTP/1.1 200 Connection Established\r\n\r\n")
        // Each direction on a thread of its own; the first to end shuts both sockets, which ends
        // the other, and the last closes them.
        let ended = Atomic<Int>(0)
        let relay: @Sendable (Int32, Int32) -> Void = { from, to in
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                guard count > 0, Self.writeAll(to, chunk[..<count]) else { break }
            }
            shutdown(from, Int32(SHUT_RDWR))
            shutdown(to, Int32(SHUT_RDWR))
            if ended.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                close(from)
                close(to)
            }
        }
        Thread.detachNewThread { relay(origin, client) }
        relay(client, origin)
    }

    private func write(_ socket: Int32, _ text: String) {
        _ = Self.writeAll(socket, Array(text.utf8)[...])
    }

    private static func writeAll(_ socket: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            rest = rest.dropFirst(count)
        }
        return true
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}
