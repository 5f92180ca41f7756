import Foundation
import MockCDN
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The mock CDN's `/media/` query parameters: a misspelled one is refused, not ignored.
@Suite("mock-cdn: query parameters", .timeLimit(.minutes(1)))
struct MockCDNQueryTests {
    /// One `GET path` over HTTP/1.1 to `port` on 127.0.0.1: the status code and the body.
    private static func get(_ path: String, port: Int) throws -> (status: Int, body: String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = LoopbackSocket.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw POSIXError(.ECONNREFUSED) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, 0) == request.count else { throw POSIXError(.EIO) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // Bounded: the response is small, the connection closes after it, and a read times out after 5 s.
        while response.count < 1 << 20 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    @Test(
        "A misspelled or unknown parameter is a 400 naming it, not a fast healthy 200",
        arguments: [
            ("/media/a.jpg?dealy_ms=800&stauts=500", "dealy_ms"), ("/media/a.jpg?bytes=10&stauts=500", "stauts"),
            ("/media/a.jpg?bytes=10&stall_afer=5", "stall_afer"), ("/media/a?media=jpg&byte=10", "byte"),
        ])
    func unknown(path: String, parameter: String) async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        try await server.shuttingDown {
            let (status, body) = try Self.get(path, port: server.port)
            #expect(status == 400, "\(path): \(status)")
            #expect(body.contains("Unknown query parameter \(parameter)"), "\(body)")
        }
    }

    @Test(
        "The parameters the package's own URLs use, and the free-form ones, are served",
        arguments: [
            "/media/a.jpg?bytes=10", "/media/a.jpg?bytes=10&delay_ms=1&cache_control=max-age%3D60&etag=e1",
            "/media/b.png?bytes=30&filename=f.jpg", "/media/x.jpg?bytes=100&padding=aaaa",
            "/media/a.jpg?bytes=10&i=3&v=2&n=1&x_campaign=spring", "/media/a?media=gif&bytes=10",
            "/media/a.jpg?bytes=10&first_bytes=20&no_validators=1&no_cache_headers=1",
        ])
    func known(path: String) async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        try await server.shuttingDown {
            let (status, body) = try Self.get(path, port: server.port)
            #expect(status == 200, "\(path): \(status) \(body.prefix(300))")
        }
    }
}
