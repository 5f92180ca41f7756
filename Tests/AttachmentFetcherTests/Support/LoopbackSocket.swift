import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Plain TCP sockets on 127.0.0.1 for the tests' own small servers (`BannerServer`,
/// `ConnectProxy`).
enum LoopbackSocket {
    /// A listening socket on a free port of 127.0.0.1, and that port.
    static func listening(backlog: Int32 = 64) throws -> (descriptor: Int32, port: Int) {
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listener, generic, length) == 0 && listen(listener, backlog) == 0 && getsockname(listener, generic, &length) == 0
            }
        }
        guard bound else {
            let error = Errno(rawValue: errno)
            close(listener)
            throw error
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// 127.0.0.1 at `port`.
    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
