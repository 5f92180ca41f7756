import Foundation
import Testing

/// A self-signed certificate for 127.0.0.1 made by Debian's `openssl` (`cert.pem`, `key.pem` in
/// a directory of the caller's): what a TLS test server presents, and, given to a fetcher as its
/// trusted certificates, its own certificate authority.
struct SelfSignedCertificate {
    let certificatePath: String
    let privateKeyPath: String

    static let openssl = "/usr/bin/openssl"

    /// Whether `openssl` is there to make one.
    static var canBeMade: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    /// Makes a certificate valid for one day, naming 127.0.0.1 as its subject and its IP address.
    static func make(in directory: String) async throws -> SelfSignedCertificate {
        let certificate = SelfSignedCertificate(certificatePath: directory + "/cert.pem", privateKeyPath: directory + "/key.pem")
        let made = try await CommandRunner.run(
            openssl,
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
             "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", certificate.privateKeyPath, "-out", certificate.certificatePath])
        try #require(made.status == 0, "\(made.stderr)")
        return certificate
    }
}
