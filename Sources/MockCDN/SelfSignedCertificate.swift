import Foundation
import Subprocess
import SystemPackage

/// A self-signed certificate for 127.0.0.1, made by Debian's `openssl` as `cert.pem` and
/// `key.pem` in a directory of the caller's: what a TLS mock CDN presents and, given to a client
/// as the certificates it trusts (`--cacert`), its own certificate authority.
public struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM.
    public let certificatePath: String
    /// Its private key, PEM.
    public let privateKeyPath: String

    /// Where `openssl` is expected.
    public static let openssl = "/usr/bin/openssl"

    /// Whether `openssl` is there to make one.
    public static var canBeMade: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    /// Why no certificate was made: `openssl`'s exit status and what it printed.
    public struct Failure: Error, CustomStringConvertible {
        /// The message.
        public var description: String
    }

    /// Makes a certificate valid for one day, naming 127.0.0.1 as its subject and its IP address.
    public static func make(in directory: String) async throws -> SelfSignedCertificate {
        let certificate = SelfSignedCertificate(certificatePath: directory + "/cert.pem", privateKeyPath: directory + "/key.pem")
        let arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", certificate.privateKeyPath, "-out", certificate.certificatePath,
        ]
        // swift-subprocess rather than Foundation's `Process`, whose `run()` on Linux reads past a
        // buffer while listing /proc/self/fd and can crash a process with many descriptors open
        // (swift-corelibs-foundation#5472), as a test process running other tests is.
        let (status, printed): (TerminationStatus, [UInt8])
        do {
            let result = try await Subprocess.run(
                .path(FilePath(openssl)), arguments: Arguments(arguments), input: .none, output: .discarded,
                error: .bytes(limit: 1 << 16))
            (status, printed) = (result.terminationStatus, result.standardError)
        } catch {
            throw Failure(description: "cannot run \(openssl): \(error)")
        }
        guard case .exited(0) = status else {
            throw Failure(description: "\(openssl) req ended with \(status): \(String(decoding: printed, as: UTF8.self))")
        }
        return certificate
    }
}
