import ArgumentParser
import Foundation
import MockCDN
import MockCDNTLS
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `mock-cdn`: runs a ``MockCDNServer`` until `--duration` passes or SIGINT/SIGTERM arrives.
///
/// The first line on stdout is the bound port number alone; a human-readable line goes to stderr.
@main
struct MockCDNCommand: AsyncParsableCommand {
    /// Command metadata.
    static let configuration = CommandConfiguration(
        commandName: "mock-cdn",
        abstract: "HTTP/1.1 (or, with TLS, HTTP/2) origin serving deterministic synthetic media, with fault injection.",
        discussion: """
            Prints the bound port as the first line on stdout. With --tls-cert and --tls-key it serves \
            HTTPS and offers HTTP/2 (h2) and HTTP/1.1 by ALPN. Routes: GET/HEAD /media/NAME.EXT?bytes=N \
            (or /media/NAME?media=EXT) \
            (+ first_bytes, delay_ms, rate, stall_after, stall_ms, reset_after, truncate_after, flood_after, flood_ms, flood_bytes, fault_once, status, content_type, \
            chunked, no_length, rst_no_error, rst, trailer_bytes, early_hints_location, second_content_length, not_modified_cache_control, not_modified_etag, redirects, redirect_to, then_redirect_to, cache_control, no_cache_headers, expires, no_validators, etag, header_bytes, set_cookie, require_cookie, require_user_agent, require_accept_encoding, reject_header, content_range; \
            any other parameter is a 400 naming it, except the free-form filename, padding, i, n, v and x_NAME), \
            GET /files/NAME from a directory given in-process (+ encoding, chunked, no_length, cut_at, \
            truncate_after, rst_no_error), GET /_stats, POST /_stats/reset.
            """
    )

    /// Longest allowed `--duration`, in seconds (one day).
    static let maxDuration: Double = 86_400

    /// Address to bind.
    @Option(help: "Address to bind (loopback only unless --allow-non-loopback).")
    var host: String = "127.0.0.1"

    /// Port to bind; 0 picks a free one.
    @Option(help: "Port to bind; 0 picks a free port.")
    var port: Int = 0

    /// Event loop threads.
    @Option(help: "Number of event loop threads (default: number of cores).")
    var threads: Int?

    /// Seconds to run before shutting down.
    @Option(help: "Seconds to run before shutting down (max 86400).")
    var duration: Double = 3600

    /// The TLS certificate chain (PEM); with `tlsKey`, the server speaks HTTPS and HTTP/2.
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve HTTPS (and HTTP/2) with this PEM certificate chain; needs --tls-key.", valueName: "file"))
    var tlsCertificate: String?

    /// The TLS private key (PEM).
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    /// A UDP port on `host` where queries are read and never answered.
    @Option(
        name: .customLong("silent-dns-port"),
        help: ArgumentHelp("Also read DNS queries on this UDP port of the same address and answer none (a name server that hangs every lookup).", valueName: "port"))
    var silentDNSPort: Int?

    /// Permit binding a non-loopback address.
    @Flag(help: "Allow binding an address other than loopback.")
    var allowNonLoopback = false

    /// Validates the options.
    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535.")
        }
        if let silentDNSPort, !(1...65_535).contains(silentDNSPort) {
            throw ValidationError("--silent-dns-port must be between 1 and 65535.")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        for file in [tlsCertificate, tlsKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("\(file) is not a readable file.")
        }
        if let tlsCertificate, let problem = Self.pemProblem(tlsCertificate, label: "CERTIFICATE", what: "certificate") {
            throw ValidationError("--tls-cert \(tlsCertificate): \(problem).")
        }
        if let tlsKey, let problem = Self.pemProblem(tlsKey, label: "PRIVATE KEY", what: "private key") {
            throw ValidationError("--tls-key \(tlsKey): \(problem).")
        }
        if let threads, !(1...256).contains(threads) {
            throw ValidationError("--threads must be between 1 and 256.")
        }
        guard duration > 0, duration <= Self.maxDuration else {
            throw ValidationError("--duration must be > 0 and <= \(Int(Self.maxDuration)) seconds.")
        }
        if !allowNonLoopback && !Self.isLoopback(host) {
            throw ValidationError("Refusing to bind non-loopback host '\(host)'; pass --allow-non-loopback to override.")
        }
    }

    /// Why `path` is no PEM file of `what` (its `-----BEGIN … LABEL-----` line missing), or nil.
    static func pemProblem(_ path: String, label: String, what: String) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return "is a directory, not a PEM \(what)"
        }
        guard let data = FileManager.default.contents(atPath: path) else { return "cannot be read" }
        let text = String(decoding: data.prefix(1 << 20), as: UTF8.self)
        // "PRIVATE KEY" also matches "RSA PRIVATE KEY" and "EC PRIVATE KEY".
        guard text.contains("-----BEGIN "), text.contains(" \(label)-----") || text.contains("-----BEGIN \(label)-----") else {
            return "no PEM \(what) in it (no -----BEGIN \(label)----- line)"
        }
        return nil
    }

    /// Writes one line to stderr.
    static func log(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Whether `host` names a loopback address.
    static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" || h == "[::1]" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Starts the server, reports the port and waits for the duration or a signal.
    func run() async throws {
        let server: MockCDNServer
        do {
            server = try await MockCDNServer.start(
                host: host,
                port: port,
                eventLoopThreads: threads ?? ProcessInfo.processInfo.activeProcessorCount,
                tls: tlsCertificate.flatMap { certificate in
                    tlsKey.map { MockCDNServer.TLS(certificateChainPath: certificate, privateKeyPath: $0) }
                }
            )
        } catch let error as ListenFailure {
            Self.log("mock-cdn: \(error)")
            throw ExitCode.failure
        } catch where tlsCertificate != nil {
            // The files are PEM (checked above) but did not load: name the one that failed, exit 64 as
            // for any other unusable option.
            var reason = String(describing: error)
            if reason == "failedToLoadCertificate" {
                reason = "its PEM is no X.509 certificate (\(reason))"
            } else if reason == "failedToLoadPrivateKey" {
                reason = "its PEM is no private key (\(reason))"
            }
            let file = reason.localizedCaseInsensitiveContains("key")
                ? "--tls-key \(tlsKey ?? "")" : reason.localizedCaseInsensitiveContains("certificate")
                ? "--tls-cert \(tlsCertificate ?? "")" : "--tls-cert \(tlsCertificate ?? "") and --tls-key \(tlsKey ?? "")"
            Self.log("mock-cdn: cannot serve HTTPS with \(file): \(reason)")
            throw ExitCode.validationFailure
        }
        var nameServer: SilentNameServer?
        do {
            if let silentDNSPort { nameServer = try await SilentNameServer.start(host: host, port: silentDNSPort) }
        } catch {
            try? await server.shutdown()
            throw error
        }
        signal(SIGPIPE, SIG_IGN)  // a reader that went away must not kill the server
        // Caught before the port line is out: a caller may stop the server as soon as it reads it.
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        do {
            // Unbuffered write(2): the port line reaches a reading pipe immediately.
            try FileHandle.standardOutput.write(contentsOf: Data("\(server.port)\n".utf8))
        } catch {
            try? await server.shutdown()
            throw error
        }
        Self.log("mock-cdn listening on \(server.baseURL)")

        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        let watcher = Task {
            for await signal in signals { continuation.yield(signal == .sigint ? "SIGINT" : "SIGTERM") }
        }
        let seconds = duration
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            continuation.yield("duration elapsed")
        }
        var reason = "stream ended"
        for await event in events {
            reason = event
            break
        }
        timer.cancel()
        watcher.cancel()
        Self.log("mock-cdn shutting down (\(reason))")
        try? await nameServer?.shutdown()
        try await server.shutdown()
    }
}
