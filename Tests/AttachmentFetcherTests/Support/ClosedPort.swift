import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that refuses every connection for as long as this value is alive: a
/// socket bound to it that never listens. A server started and shut down frees its port, which
/// a test running beside this one may take meanwhile; this one stays refused.
final class ClosedPort: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ClosedPortError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(socket, pointer, length) == 0 else { return -1 }
                return getsockname(socket, pointer, &length)
            }
        }
        guard bound == 0 else {
            close(socket)
            throw ClosedPortError()
        }
        self.socket = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}

struct ClosedPortError: Error {}
