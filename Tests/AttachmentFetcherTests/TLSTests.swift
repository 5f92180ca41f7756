import AttachmentFetcher
import Foundation
import Testing

/// `openssl` (Debian's, on every machine this package targets) serves TLS with a self-signed
/// certificate; a fetcher must refuse it, because TLS verification is never switched off.
@Suite("TLS: certificates are verified", .timeLimit(.minutes(2)), .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
struct TLSTests {
    @Test("A self-signed certificate is refused as network, and nothing is written")
    func selfSignedRefused() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try await CommandRunner.run(
            "/usr/bin/openssl",
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
             "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        try #require(made.status == 0, "\(made.stderr)")

        // s_server wants a fixed port: take one the kernel says is free, then hand it over.
        let port = try freeLoopbackPort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/cert.pem",
                            "-key", directory + "/key.pem", "-www", "-quiet"]
        server.standardInput = Pipe()
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        for _ in 0..<100 where !isListening(port) { try await Task.sleep(for: .milliseconds(20)) }

        let output = directory + "/out"
        let outcome = try await withAttachmentFetcher(configuration: .init(outputDirectory: output)) { fetcher in
            await fetcher.process(Payloads.braze(url: "https://127.0.0.1:\(port)/image.jpg"))
        }
        #expect(outcome.reason == .network)
        #expect(outcome.detail?.localizedCaseInsensitiveContains("certificate") == true, "\(outcome.detail ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).isEmpty)
    }

    private func freeLoopbackPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func isListening(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
