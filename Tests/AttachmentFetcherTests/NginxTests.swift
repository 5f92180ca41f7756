import Foundation
import Testing

/// A real nginx on 127.0.0.1, started by the suite: HTTP/1.1 on one port, HTTPS with HTTP/2 on
/// another under a certificate authority the suite makes with openssl, serving the real-media
/// corpus; `/gz/` answers with `gzip_static always` (the `.gz` file, encoded, whatever the client
/// asked), and `/r/N` is a chain of redirects. The CLI is run against it as a user would.
///
/// Without nginx (or openssl) on the machine the suite is skipped, and says so.
@Suite("Against a real nginx", .serialized, .enabled(if: Nginx.isAvailable, "nginx and openssl are not installed"))
struct NginxTests {
    /// One batch through the CLI, without a cache or with the one at `cache`: each line's
    /// outcome, by index.
    static func runBatch(
        _ urls: [String], nginx: Nginx, cache: String? = nil,
        payload: (String) -> String = { #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#($0)"}}}"# }
    ) async throws -> [[String: Any]] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = urls.map(payload)
        let batch = directory + "/batch.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: batch))
        let result = try await CommandRunner.run(
            "fetch-attachment",
            ["--batch", batch, "--json", "--output-dir", directory + "/out", "--cacert", nginx.caPath]
                + (cache.map { ["--cache-dir", $0] } ?? ["--no-cache"]) + Nginx.loopbackFlags + ["--timeout", "\(20 * TestTiming.scale)"])
        let outcomes = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(outcomes.count == urls.count, "\(result.stderr)")
        return outcomes.sorted { ($0["index"] as? Int ?? 0) < ($1["index"] as? Int ?? 0) }
    }

    /// The attached MIME type, or the reason.
    static func verdict(_ outcome: [String: Any]) -> String {
        if let attachment = (outcome["attachments"] as? [[String: Any]])?.first, let mime = attachment["mime"] as? String {
            return mime
        }
        return outcome["reason"] as? String ?? "?"
    }

    static let cases: [(path: String, expected: String)] = [
        ("/media/photo.jpg", "image/jpeg"),
        ("/media/animated.gif", "image/gif"),
        ("/media/tone-cover-art.mp3", "audio/mpeg"),
        ("/media/tone.m4a", "audio/x-m4a"),
        ("/media/clip.m4v", "video/x-m4v"),
        ("/media/clip.mp4", "video/mp4"),
        ("/media/clip.mov", "unsupported-type"),
        ("/media/tone-id3.flac", "unsupported-type"),
        ("/media/photo.webp", "unsupported-type"),
        ("/media/with space.png", "image/png"),  // a raw space in the payload's URL
        ("/gz/logo.png", "image/png"),  // gzip_static always: encoded whatever was asked
        ("/r/1", "image/jpeg"),  // 20 redirects
        ("/r/0", "http-status"),  // 21 redirects
        ("/media/missing.jpg", "http-status"),
        ("/empty", "http-status"),  // 204
    ]

    @Test("Real media over HTTP/1.1 and over HTTPS with HTTP/2: the verdicts an iPhone would give")
    func verdicts() async throws {
        try await Nginx.with { nginx in try await Self.checkVerdicts(nginx) }
    }

    static func checkVerdicts(_ nginx: Nginx) async throws {
        for base in [nginx.httpBase, nginx.httpsBase] {
            let outcomes = try await Self.runBatch(Self.cases.map { base + $0.path }, nginx: nginx)
            for (item, outcome) in zip(Self.cases, outcomes) {
                #expect(Self.verdict(outcome) == item.expected, "\(base)\(item.path): \(outcome["detail"] ?? "")")
            }
            let redirected = outcomes[11]["attachments"] as? [[String: Any]]
            #expect(redirected?.first?["url"] as? String == base + "/r/1")
            #expect(outcomes[12]["detail"] as? String == "too many redirects (20)")
            let spaced = outcomes[9]["attachments"] as? [[String: Any]]
            #expect(spaced?.first?["url"] as? String == base + "/media/with%20space.png")
            #expect(spaced?.first?["payload_url"] as? String == base + "/media/with space.png")
            let gzipped = outcomes[10]["attachments"] as? [[String: Any]]
            #expect(gzipped?.first?["bytes"] as? Int == (try RealMediaTests.size(of: "logo.png")))
            let warnings = outcomes[0]["warnings"] as? [String] ?? []
            #expect(warnings.contains { $0.contains("App Transport Security") } == base.hasPrefix("http:"))
        }
        // The HTTPS requests went over HTTP/2.
        let log = try String(contentsOfFile: nginx.accessLogPath, encoding: .utf8)
        #expect(log.contains("https HTTP/2.0 /media/photo.jpg"), "\(log.prefix(2000))")
        #expect(log.contains("http HTTP/1.1 /media/photo.jpg"))
    }

    @Test("A 404 that carries a placeholder image (nginx's error_page): http-status, and for Firebase's iOS extension, which attaches it all the same, a warning naming the type nginx served; none for Braze, nor for an empty 404")
    func errorResponseBodies() async throws {
        try await Nginx.with { nginx in
            let urls = [nginx.httpsBase + "/placeholder/missing.jpg", nginx.httpsBase + "/media/missing.jpg", nginx.httpsBase + "/gone-empty/missing.jpg"]
            let firebase = try await Self.runBatch(urls, nginx: nginx) {
                #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"fcm_options":{"image":"\#($0)"}}"#
            }
            let braze = try await Self.runBatch(urls, nginx: nginx)
            for outcome in firebase + braze {
                #expect(outcome["reason"] as? String == "http-status" && (outcome["detail"] as? String)?.hasPrefix("HTTP 404") == true)
            }
            func statusWarnings(_ outcome: [String: Any]) -> [String] {
                (outcome["warnings"] as? [String] ?? []).filter { $0.contains("does not check the status") }
            }
            #expect(statusWarnings(firebase[0]) == [
                "\(urls[0]) answered HTTP 404 with a body served as image/png: Firebase's iOS extension does not check the status, so iPhones attach that body if iOS takes it for an image, a sound or a video (a CDN's placeholder image, say); its body was not downloaded, so whether it is one is not judged"
            ])
            #expect(statusWarnings(firebase[1]).count == 1 && statusWarnings(firebase[1])[0].contains("served as text/html"))
            #expect(statusWarnings(firebase[2]).isEmpty, "an empty 404 gives the extension nothing to attach")
            #expect(braze.allSatisfy { statusWarnings($0).isEmpty })
        }
    }

    @Test("The cache against nginx's own validators and freshness: a spike is one request, a no-cache body is revalidated with a 304 and served again, an expires one is not asked again")
    func cacheRevalidation() async throws {
        try await Nginx.with { nginx in
            let cache = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: cache) }
            // `/revalidate/` says `Cache-Control: no-cache` (asked again every time, with the
            // ETag and Last-Modified nginx gave); `/week/` says `expires 7d`.
            let paths = ["/revalidate/photo.jpg", "/revalidate/tone.m4a", "/week/clip.mp4"] + Array(repeating: "/week/logo.png", count: 20)
            for base in [nginx.httpBase, nginx.httpsBase] {
                let logBefore = try Self.accessLog(nginx)
                let first = try await Self.runBatch(paths.map { base + $0 }, nginx: nginx, cache: cache)
                let second = try await Self.runBatch(paths.map { base + $0 }, nginx: nginx, cache: cache)
                for (path, (one, two)) in zip(paths, zip(first, second)) {
                    #expect(one["status"] as? String == "attached", "\(base)\(path): \(one["detail"] ?? "")")
                    #expect(two["status"] as? String == "attached", "\(base)\(path): \(two["detail"] ?? "")")
                    let bytes = { (outcome: [String: Any]) in (outcome["attachments"] as? [[String: Any]])?.first?["bytes"] as? Int }
                    #expect(bytes(one) == (try RealMediaTests.size(of: String(path.split(separator: "/").last!))))
                    #expect(bytes(two) == bytes(one), "\(base)\(path)")
                }
                let scheme = base.hasPrefix("https") ? "https" : "http"
                let requests = try Self.accessLog(nginx).dropFirst(logBefore.count).filter { $0.hasPrefix(scheme + " ") }
                func statuses(_ path: String) -> [String] {
                    requests.filter { $0.split(separator: " ").dropFirst(2).first.map(String.init) == path }.map { String($0.split(separator: " ").last!) }
                }
                // First run: each URL once, however many payloads ask for it. Second run: the
                // no-cache bodies revalidated (304), the others not asked at all.
                #expect(statuses("/revalidate/photo.jpg") == ["200", "304"], "\(requests)")
                #expect(statuses("/revalidate/tone.m4a") == ["200", "304"], "\(requests)")
                #expect(statuses("/week/clip.mp4") == ["200"], "\(requests)")
                #expect(statuses("/week/logo.png") == ["200"], "\(requests)")
                #expect(requests.count == 6, "\(requests)")
                try? FileManager.default.removeItem(atPath: cache)
            }
        }
    }

    @Test("An origin that ends each connection after 2 requests (a GOAWAY on HTTP/2, Connection: close on HTTP/1.1) loses no payload of a batch of 600 distinct URLs")
    func connectionChurn() async throws {
        try await Nginx.with { nginx in
            for base in [nginx.churnHTTPSBase, nginx.churnHTTPBase] {
                let urls = (0..<600).map { base + "/media/logo.png?i=\($0)" }
                let outcomes = try await Self.runBatch(urls, nginx: nginx)
                let failed = outcomes.filter { $0["status"] as? String != "attached" }
                #expect(failed.isEmpty, "\(base): \(failed.count) of 600 not attached: \(Set(failed.map { "\($0["reason"] ?? ""): \($0["detail"] ?? "")" }))")
                let scheme = base.hasPrefix("https") ? "https" : "http"
                let requests = try Self.accessLog(nginx).filter { $0.hasPrefix(scheme + " ") && $0.contains("/media/logo.png") }
                // Every URL asked for at least once.
                #expect(requests.count >= 600, "\(requests.count) requests")
            }
            let errors = (try? String(contentsOfFile: nginx.root + "/error.log", encoding: .utf8)) ?? ""
            #expect(!errors.contains("[alert]") && !errors.contains("[emerg]"), "\(errors.suffix(2000))")
        }
    }

    /// nginx's access log, a line each request (`$scheme $server_protocol $uri $status`).
    static func accessLog(_ nginx: Nginx) throws -> [String] {
        let text = (try? String(contentsOfFile: nginx.accessLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}

/// An nginx process of the suite's own, on two free loopback ports.
struct Nginx: Sendable {
    let root: String
    let httpPort: Int
    let httpsPort: Int
    /// HTTPS with HTTP/2 as on `httpsPort`, and HTTP/1.1 on `churnHTTPPort`, where nginx ends
    /// each connection after `churnRequests` requests (`keepalive_requests`, 1,000 by default):
    /// a `GOAWAY` on HTTP/2, `Connection: close` on HTTP/1.1, as a busy origin or CDN does.
    let churnHTTPSPort: Int
    let churnHTTPPort: Int
    /// Two: most of a batch's HTTP/2 streams then meet a closing connection, and some meet one
    /// on each of the 5 sends libcurl makes of them (without a retry of its own the fetcher lost
    /// 43–64 payloads of 600 in each run; none from 10 requests a connection up).
    static let churnRequests = 2

    /// Flags every run against a loopback origin passes: private addresses are refused by default.
    static let loopbackFlags = ["--allow-private-networks"]

    static let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var isAvailable: Bool { binary != nil && openssl != nil }

    var httpBase: String { "http://127.0.0.1:\(httpPort)" }
    var httpsBase: String { "https://127.0.0.1:\(httpsPort)" }
    var churnHTTPSBase: String { "https://127.0.0.1:\(churnHTTPSPort)" }
    var churnHTTPBase: String { "http://127.0.0.1:\(churnHTTPPort)" }
    var caPath: String { root + "/ca.pem" }
    var accessLogPath: String { root + "/access.log" }

    /// Runs `body` with an nginx of its own, then stops it and removes its files.
    static func with(_ body: @Sendable (Nginx) async throws -> Void) async throws {
        let nginx = try await prepare()
        defer { try? FileManager.default.removeItem(atPath: nginx.root) }
        _ = try await CommandRunner.withRunning(
            binary!, ["-p", nginx.root, "-c", nginx.root + "/nginx.conf", "-g", "daemon off;"], stdin: Data()
        ) { program in
            defer { program.send(SIGTERM) }
            // Ready when every port accepts: at most 10 s.
            let ports = [nginx.httpPort, nginx.httpsPort, nginx.churnHTTPSPort, nginx.churnHTTPPort]
            try await TestTiming.wait(atMost: .seconds(10), every: .milliseconds(50)) { ports.allSatisfy(isListening) }
            guard ports.allSatisfy(isListening) else {
                let log = (try? String(contentsOfFile: nginx.root + "/error.log", encoding: .utf8)) ?? ""
                throw NginxError(message: "nginx did not start: \(log)")
            }
            try await body(nginx)
        }
    }

    /// Its directory: certificates, configuration and the media it serves.
    private static func prepare() async throws -> Nginx {
        let root = try makeTemporaryDirectory()
        // nginx's workers run as nobody: everything they read must be readable by all.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        try await makeCertificates(in: root)
        let media = root + "/media"
        try FileManager.default.createDirectory(atPath: root + "/gz", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixture.mediaDirectory, toPath: media)
        try FileManager.default.copyItem(atPath: media + "/logo.png", toPath: media + "/with space.png")
        try FileManager.default.copyItem(atPath: media + "/logo.png.gz", toPath: root + "/gz/logo.png.gz")
        try Data().write(to: URL(fileURLWithPath: root + "/nothing.bin"))
        let (httpPort, httpsPort, churnHTTPSPort, churnHTTPPort) = (try freePort(), try freePort(), try freePort(), try freePort())
        let redirects = (1...20).map { hop in
            "location = /r/\(hop) { return 302 \(hop == 20 ? "/media/photo.jpg" : "/r/\(hop + 1)"); }"
        }.joined(separator: "\n        ")
        let configuration = """
            worker_processes 1;
            error_log \(root)/error.log;
            pid \(root)/nginx.pid;
            events { worker_connections 256; }
            http {
                types { image/jpeg jpg; image/png png; image/gif gif; audio/mpeg mp3; video/mp4 mp4 m4v; }
                default_type application/octet-stream;
                log_format plain '$scheme $server_protocol $uri $status';
                access_log \(root)/access.log plain;
                client_body_temp_path \(root)/tmp-body;
                proxy_temp_path \(root)/tmp-proxy;
                fastcgi_temp_path \(root)/tmp-fastcgi;
                uwsgi_temp_path \(root)/tmp-uwsgi;
                scgi_temp_path \(root)/tmp-scgi;
                root \(root);
                server {
                    listen 127.0.0.1:\(httpPort);
                    include \(root)/locations.conf;
                }
                server {
                    listen 127.0.0.1:\(httpsPort) ssl http2;
                    ssl_certificate \(root)/server.pem;
                    ssl_certificate_key \(root)/server.key;
                    include \(root)/locations.conf;
                }
                server {
                    listen 127.0.0.1:\(churnHTTPSPort) ssl http2;
                    ssl_certificate \(root)/server.pem;
                    ssl_certificate_key \(root)/server.key;
                    keepalive_requests \(churnRequests);
                    include \(root)/locations.conf;
                }
                server {
                    listen 127.0.0.1:\(churnHTTPPort);
                    keepalive_requests \(churnRequests);
                    include \(root)/locations.conf;
                }
            }
            """
        let locations = """
            location /gz/ { gzip_static always; gunzip off; }
            location = /empty { return 204; }
            location /placeholder/ { alias \(root)/media/; error_page 404 /media/logo.png; }
            location /gone-empty/ { alias \(root)/media/; error_page 404 /nothing.bin; }
            location /revalidate/ { alias \(root)/media/; add_header Cache-Control "no-cache"; }
            location /week/ { alias \(root)/media/; expires 7d; }
            location = /r/0 { return 302 /r/1; }
            \(redirects)
            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: root + "/nginx.conf"))
        try Data(locations.utf8).write(to: URL(fileURLWithPath: root + "/locations.conf"))
        return Nginx(root: root, httpPort: httpPort, httpsPort: httpsPort, churnHTTPSPort: churnHTTPSPort, churnHTTPPort: churnHTTPPort)
    }

    /// A certificate authority, and a certificate for 127.0.0.1 and localhost that it signed.
    private static func makeCertificates(in root: String) async throws {
        let extensions = root + "/server.ext"
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: extensions))
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", root + "/ca.key", "-out", root + "/ca.pem",
             "-days", "2", "-subj", "/CN=AttachmentFetcher test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", root + "/server.key", "-out", root + "/server.csr",
             "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", root + "/server.csr", "-CA", root + "/ca.pem", "-CAkey", root + "/ca.key",
             "-CAcreateserial", "-out", root + "/server.pem", "-days", "2", "-extfile", extensions],
        ]
        for arguments in steps {
            let result = try await CommandRunner.run(openssl!, arguments)
            guard result.status == 0 else {
                throw NginxError(message: "openssl \(arguments.first ?? "") failed: \(result.stderr)")
            }
        }
        for file in ["server.key", "server.pem", "ca.pem"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root + "/" + file)
        }
    }

    /// A port that was free a moment ago on 127.0.0.1.
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw NginxError(message: "socket failed") }
        defer { close(socket) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(socket, pointer, length) == 0 else { return -1 }
                return getsockname(socket, pointer, &length)
            }
        }
        guard bound == 0 else { throw NginxError(message: "bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func isListening(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

struct NginxError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
