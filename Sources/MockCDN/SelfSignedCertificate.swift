import Foundation

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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", certificate.privateKeyPath, "-out", certificate.certificatePath,
        ]
        let messages = Pipe()  // a few lines at most: never fills
        process.standardOutput = FileHandle.nullDevice
        process.standardError = messages
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: Failure(description: "cannot run \(openssl): \(error)"))
            }
        }
        guard status == 0 else {
            let printed = String(decoding: messages.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw Failure(description: "\(openssl) req exited with \(status): \(printed)")
        }
        return certificate
    }
}
