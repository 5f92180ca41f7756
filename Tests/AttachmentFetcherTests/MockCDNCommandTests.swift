import Foundation
import Testing

/// `mock-cdn --tls-cert/--tls-key` with files that are no certificate or key.
@Suite("mock-cdn: TLS files", .timeLimit(.minutes(1)))
struct MockCDNTLSFileTests {
    @Test("A file that is no PEM certificate or key is named, with the reason, exit 64")
    func notPEM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = directory + "/notes.txt"
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: text))
        let certificate = directory + "/garbage.pem"
        try Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: certificate))
        let key = directory + "/garbage.key"
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: key))

        let noCertificate = try await CommandRunner.run("mock-cdn", ["--tls-cert", text, "--tls-key", key, "--duration", "1"])
        #expect(noCertificate.status == 64, "\(noCertificate.stderr)")
        #expect(noCertificate.stderr.contains("--tls-cert \(text): no PEM certificate in it"), "\(noCertificate.stderr)")
        let noKey = try await CommandRunner.run("mock-cdn", ["--tls-cert", certificate, "--tls-key", text, "--duration", "1"])
        #expect(noKey.status == 64, "\(noKey.stderr)")
        #expect(noKey.stderr.contains("--tls-key \(text): no PEM private key in it"), "\(noKey.stderr)")
        // PEM that does not load: the file is named, with the library's reason.
        let broken = try await CommandRunner.run("mock-cdn", ["--tls-cert", certificate, "--tls-key", key, "--duration", "1"])
        #expect(broken.status == 64, "\(broken.stderr)")
        #expect(broken.stderr.contains("cannot serve HTTPS with --tls-cert \(certificate): its PEM is no X.509 certificate"), "\(broken.stderr)")
    }
}
