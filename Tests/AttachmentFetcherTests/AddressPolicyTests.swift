@testable import AttachmentFetcher
import Foundation
import MockCDN
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The address policy: the classifier over spellings and range edges (no connection is made
/// for these), then end to end against mock CDNs on loopback, which the default policy refuses
/// before any connection: the listener must see none.
@Suite("Address policy: internal addresses refused where the connection is made", .timeLimit(.minutes(2)))
struct AddressPolicyTests {
    typealias Policy = PushAttachmentFetcher.Configuration.AddressPolicy

    /// Spellings and range edges that are not globally reachable. Only classified, never
    /// connected to.
    static let refused = [
        // Loopback in every spelling getaddrinfo (and libcurl's URL parser) accepts.
        "127.0.0.1", "127.1", "2130706433", "0x7f.1", "0177.0.0.1", "0x7f000001", "127.255.255.255",
        "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "::1", "[::1]", "::127.0.0.1",
        // Cloud metadata: plain, decimal, hex, octal, dotted hex; AWS IPv6; Alibaba (CGNAT).
        "169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "0xa9.0xfe.0xa9.0xfe",
        "fd00:ec2::254", "100.100.100.200",
        // Private, shared, this-network, unspecified, and their edges.
        "10.0.0.5", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.0.1", "192.168.255.255",
        "100.64.0.0", "100.127.255.255", "0.0.0.0", "0.1.2.3", "::", "169.254.0.0", "169.254.255.255",
        // IETF protocol assignments, documentation, benchmarking, 6to4 relay, multicast, reserved, broadcast.
        "192.0.0.1", "192.0.0.8", "192.0.0.255", "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.0",
        "198.19.255.255", "192.88.99.1", "224.0.0.1", "239.255.255.255", "240.0.0.1", "255.255.255.255",
        // IPv6: link-local, site-local, unique local, multicast, documentation, discard, Teredo,
        // benchmarking, NAT64 local-use, SRv6.
        "fe80::1", "febf:ffff::1", "fec0::1", "fc00::1", "fdff:ffff::1", "ff02::1", "2001:db8::1", "3fff::1",
        "100::1", "2001::1", "2001:2::1", "64:ff9b:1::1", "5f00::1",
        // Loopback and metadata wrapped: NAT64 well-known prefix, 6to4.
        "64:ff9b::7f00:1", "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2002:a9fe:a9fe::1",
        "2002:a00:5::1", "2002:c0a8:101::1",
    ]

    /// Globally reachable addresses right past the edges of refused ranges.
    static let allowed = [
        "100.63.255.255", "100.128.0.0", "9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0",
        "192.167.255.255", "192.169.0.0", "169.253.255.255", "169.255.0.0", "198.17.255.255", "198.20.0.0",
        "192.0.0.9", "192.0.0.10", "192.0.1.0", "1.0.0.0", "8.8.8.8", "223.255.255.255", "126.255.255.255",
        "128.0.0.0", "::ffff:8.8.8.8", "2606:4700:4700::1111", "2001:4860:4860::8888", "2001:1::1",
        "2001:20::1", "2001:3::1", "2001:200::1", "64:ff9b::808:808", "2002:808:808::1", "2620:4f:8000::1",
        "3fff:1000::1", "2000::1", "3ffe:ffff::1",
    ]

    @Test("The default policy refuses every non-global spelling and range edge", arguments: refused)
    func refusedAddress(host: String) {
        #expect(Policy().permits(numericHost: host) == false)
    }

    @Test("The default policy allows global addresses right past the edges", arguments: allowed)
    func allowedAddress(host: String) {
        #expect(Policy().permits(numericHost: host) == true)
    }

    @Test("An allow-list opens exactly its networks; allowsPrivateNetworks opens everything")
    func allowList() throws {
        let policy = Policy(allowedNetworks: [try #require(IPNetwork("10.20.0.0/16")), try #require(IPNetwork("::1"))])
        #expect(policy.permits(numericHost: "10.20.0.0") == true)
        #expect(policy.permits(numericHost: "10.20.255.255") == true)
        #expect(policy.permits(numericHost: "::ffff:10.20.1.1") == true)
        #expect(policy.permits(numericHost: "10.21.0.0") == false)
        #expect(policy.permits(numericHost: "10.19.255.255") == false)
        #expect(policy.permits(numericHost: "::1") == true)
        #expect(policy.permits(numericHost: "127.0.0.1") == false)
        #expect(policy.permits(numericHost: "8.8.8.8") == true)
        let open = Policy(allowsPrivateNetworks: true)
        for host in ["127.0.0.1", "169.254.169.254", "::1", "fd00:ec2::254"] {
            #expect(open.permits(numericHost: host) == true)
        }
        #expect(Policy().permits(numericHost: "cdn.example.test") == nil)
    }

    @Test("An IPv6 network allows no IPv4 address unless it is written in the IPv4-mapped range: ::/0 opens IPv6, not 127.0.0.1 or the metadata address")
    func ipv6NetworksLeaveIPv4Alone() throws {
        for network in ["::/0", "::/80", "::/95"] {
            let policy = Policy(allowedNetworks: [try #require(IPNetwork(network))])
            for host in ["127.0.0.1", "169.254.169.254", "10.0.0.1", "::ffff:127.0.0.1"] {
                #expect(policy.permits(numericHost: host) == false, "\(network) \(host)")
            }
            #expect(policy.permits(numericHost: "fd00::1") == (network == "::/0"), "\(network)")
            #expect(policy.permits(numericHost: "::1") == true, "\(network)")
        }
        // The IPv4-mapped range written out is IPv4 on purpose.
        let mapped = Policy(allowedNetworks: [try #require(IPNetwork("::ffff:127.0.0.0/104"))])
        #expect(mapped.permits(numericHost: "127.0.0.1") == true)
        #expect(mapped.permits(numericHost: "10.0.0.1") == false)
    }

    @Test("--resolve takes addresses in standard notation only; a proxy must be a URL libcurl takes, its password never echoed")
    func resolveAndProxyChecked() async throws {
        typealias Configuration = PushAttachmentFetcher.Configuration
        #expect(Configuration.isResolveEntry("cdn.test:443:127.0.0.1"))
        #expect(Configuration.isResolveEntry("cdn.test:443:[::1],127.0.0.1"))
        #expect(Configuration.isResolveEntry("-cdn.test:443:"))
        for bad in ["cdn.test:443:127.1", "cdn.test:443:0x7f.1", "cdn.test:443:", "cdn.test:443:localhost", "cdn.test:443:[::1"] {
            #expect(!Configuration.isResolveEntry(bad), "\(bad)")
        }
        #expect(Configuration.proxyProblem("http://proxy.example:3128") == nil && Configuration.proxyProblem("socks5h://[::1]:1080") == nil)
        for bad in ["http://u:secretpw@[::1", "gopher://proxy.example", "proxy.example:3128", "http://"] {
            #expect(Configuration.proxyProblem(bad) != nil, "\(bad)")
        }
        let run = try await CommandRunner.run("fetch-attachment", ["--proxy", "http://u:secretpw@[::1", "-"], stdin: Data("{}".utf8))
        #expect(run.status == 64 && !run.stderr.contains("secretpw") && run.stderr.contains("--proxy"), "\(run.stderr)")
    }

    @Test("Networks parse from standard notation only; bits set past the prefix are refused, not cleared")
    func networkParsing() {
        #expect(IPNetwork("10.0.0.0/8")?.description == "10.0.0.0/8")
        #expect(IPNetwork("192.168.1.0/24")?.description == "192.168.1.0/24")
        #expect(IPNetwork("127.0.0.1")?.description == "127.0.0.1/32")
        #expect(IPNetwork("fd00:ec2::/32")?.description == "fd00:ec2::/32")
        #expect(IPNetwork("192.168.1.10/24") == nil)
        #expect(IPNetwork("fd00:ec2::254/32") == nil)
        #expect(throws: AttachmentFetcherError(
            code: .invalidConfiguration,
            message: "'10.1.2.3/8' has bits set past its /8 prefix, which would widen it to a whole network: did you mean 10.0.0.0/8? (10.1.2.3/32 is the address alone)"
        )) { try IPNetwork(parsing: "10.1.2.3/8") }
        #expect(throws: AttachmentFetcherError(
            code: .invalidConfiguration, message: "'10.0.0.0/33': the prefix length must be a number from 0 to 32"
        )) { try IPNetwork(parsing: "10.0.0.0/33") }
        #expect(IPNetwork("::1")?.description == "::1/128")
        #expect(IPNetwork("0.0.0.0/0")?.prefixLength == 0)
        for bad in ["", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "127.1", "0x7f.1", "host", "[::1]", "10.0.0.0/8/8", "10.0.0.0/ 8"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }

    // MARK: End to end, on loopback

    /// A fixture whose fetcher has the default policy (plus `configure`).
    private func withDefaultPolicy<R: Sendable>(
        _ configure: @escaping (inout PushAttachmentFetcher.Configuration) -> Void = { _ in },
        _ body: (Fixture) async throws -> R
    ) async throws -> R {
        try await Fixture.with(configure: { configuration in
            configuration.addressPolicy = Policy()
            configure(&configuration)
        }, body)
    }

    @Test("Loopback in any spelling is refused before connecting: address-refused, one detail, zero connections")
    func loopbackSpellingsRefused() async throws {
        try await withDefaultPolicy { fixture in
            let port = fixture.server.port
            let hosts = ["127.0.0.1", "127.1", "2130706433", "0x7f.1", "0177.0.0.1", "[::ffff:127.0.0.1]", "localhost"]
            for host in hosts {
                let outcome = await fixture.fetcher.process(Payloads.braze(url: "http://\(host):\(port)/media/x.jpg?bytes=1000"))
                #expect(outcome.reason == .addressRefused, "\(host): \(outcome.result) \(outcome.detail ?? "")")
                #expect(outcome.detail == "the address policy refused every address of the host")
            }
            #expect(fixture.server.stats().connectionsAccepted == 0)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A public-looking name resolving to loopback is refused; allow-listing the address lets it through")
    func nameResolvingToLoopback() async throws {
        try await withDefaultPolicy { fixture in
            let port = fixture.server.port
            let url = "http://media.cdn.test:\(port)/media/x.jpg?bytes=1000"
            let refusing = try fixture.anotherFetcher { $0.resolve = ["media.cdn.test:\(port):127.0.0.1"] }
            let outcome = await refusing.process(Payloads.braze(url: url))
            await refusing.shutdown()
            #expect(outcome.reason == .addressRefused, "\(outcome.detail ?? "")")
            #expect(fixture.server.stats().connectionsAccepted == 0)

            let allowing = try fixture.anotherFetcher {
                $0.resolve = ["media.cdn.test:\(port):127.0.0.1"]
                $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
            }
            let allowed = await allowing.process(Payloads.braze(url: url))
            await allowing.shutdown()
            #expect(allowed.status == .attached, "\(allowed.result) \(allowed.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("Each resolved candidate is judged alone: a refused one is skipped, a permitted one used; refused means all were")
    func candidatesJudgedAlone() async throws {
        let closed = try ClosedPort()
        let closedPort = closed.port
        defer { withExtendedLifetime(closed) {} }
        try await withDefaultPolicy { fixture in
            let port = fixture.server.port
            let fetcher = try fixture.anotherFetcher {
                $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
                $0.resolve = ["two.cdn.test:\(port):127.0.0.2,127.0.0.1", "shut.cdn.test:\(closedPort):127.0.0.2,127.0.0.1"]
            }
            let attached = await fetcher.process(Payloads.braze(url: "http://two.cdn.test:\(port)/media/c.jpg?bytes=1000"))
            // A permitted candidate that is closed: a network failure, not a refusal.
            let closedOutcome = await fetcher.process(Payloads.braze(url: "http://shut.cdn.test:\(closedPort)/media/c.jpg"))
            await fetcher.shutdown()
            #expect(attached.status == .attached, "\(attached.result) \(attached.detail ?? "")")
            #expect(closedOutcome.reason == .network, "\(closedOutcome.result)")
            #expect(closedOutcome.detail == "could not fetch")
        }
    }

    @Test("A redirect from an allowed origin to a refused address is refused at the hop: the target sees no connection")
    func redirectToRefusedAddress() async throws {
        let target = try await MockCDNServer.start(host: "::1", eventLoopThreads: 1)
        do {
            try await withDefaultPolicy({ $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }) { fixture in
                let hop = target.url("/media/inside.jpg?bytes=1000")
                let encoded = hop.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let outcome = await fixture.fetch("/media/moved.jpg?redirect_to=\(encoded)")
                #expect(outcome.reason == .addressRefused, "\(outcome.result) \(outcome.detail ?? "")")
                #expect(fixture.server.stats().requests == 1)
                #expect(target.stats().connectionsAccepted == 0)
                #expect(fixture.filesLeft().isEmpty)
                // The origin itself is allowed: the allow-list, not luck, let the first hop through.
                #expect(await fixture.fetch("/media/direct.jpg?bytes=1000").status == .attached)
            }
        } catch {
            try? await target.shutdown()
            throw error
        }
        try await target.shutdown()
    }

    @Test(
        "A redirect to port 0 is invalid-url, as the payload's own URL would be, and no connection is tried",
        arguments: ["http://127.0.0.1:0/x.jpg", "//127.0.0.1:00/x.jpg", "http://[::1]:0/x.jpg", "HTTP://127.0.0.1:0"])
    func redirectToPortZero(location: String) async throws {
        try await withDefaultPolicy({ $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!, IPNetwork("::1/128")!] }) { fixture in
            let encoded = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await fixture.fetch("/media/moved.jpg?redirect_to=\(encoded)")
            #expect(outcome.reason == .invalidURL, "\(outcome.result) \(outcome.detail ?? "")")
            #expect(outcome.detail == "redirected to a URL whose port is 0, outside 1–65535", "\(outcome.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
            // A port given as it should be is followed.
            let fine = await fixture.fetch("/media/moved.jpg?redirect_to=\(fixture.server.url("/media/to.jpg?bytes=1000").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(fine.status == .attached, "\(fine.result) \(fine.detail ?? "")")
        }
    }

    @Test("With the policy in force a network failure says only 'could not fetch'; opened up, libcurl's text")
    func uniformNetworkDetail() async throws {
        try await withDefaultPolicy({ $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }) { fixture in
            let outcome = await fixture.fetch("/media/cut.jpg?bytes=200000&reset_after=10000")
            #expect(outcome.reason == .network)
            #expect(outcome.detail == "could not fetch")
            // A body cut short where nothing vouched for its end: the same words.
            let cut = await fixture.fetch("/files/photo.jpg?no_length=1&truncate_after=867")
            #expect(cut.reason == .network)
            #expect(cut.detail == "could not fetch")
        }
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/cut.jpg?bytes=200000&reset_after=10000")
            #expect(outcome.reason == .network)
            #expect(outcome.detail != "could not fetch")
        }
    }

    @Test("URLs with credentials are invalid-url and send nothing, unless allowed; a redirect to one too")
    func credentialsRefused() async throws {
        try await Fixture.with { fixture in
            let port = fixture.server.port
            for url in ["http://user:pass@127.0.0.1:\(port)/media/x.jpg", "http://user@127.0.0.1:\(port)/media/x.jpg"] {
                let outcome = await fixture.fetcher.process(Payloads.braze(url: url))
                #expect(outcome.reason == .invalidURL)
                #expect(outcome.detail == "the URL carries credentials (user:pass@), which are not sent (allow them with Configuration.allowsCredentialsInURLs; fetch-attachment --allow-url-credentials)")
            }
            #expect(fixture.server.stats().connectionsAccepted == 0)
            let hop = "http://user:pass@127.0.0.1:\(port)/media/y.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let redirected = await fixture.fetch("/media/moved.jpg?redirect_to=\(hop)")
            #expect(redirected.reason == .invalidURL, "\(redirected.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)

            let allowing = try fixture.anotherFetcher { $0.allowsCredentialsInURLs = true }
            let allowed = await allowing.process(Payloads.braze(url: "http://user:pass@127.0.0.1:\(port)/media/x.jpg?bytes=1000"))
            await allowing.shutdown()
            #expect(allowed.status == .attached, "\(allowed.detail ?? "")")
        }
    }

    @Test("Credentials in a URL are never echoed: outcomes, warnings, details, logs, the human output and the report say ***")
    func credentialsRedacted() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            let port = server.port
            let secret = "s3cretPassw0rd"
            // Refused (the default), allowed and attached, and one that is not a URL at all.
            let refused = Payloads.braze(url: "http://alice:\(secret)@127.0.0.1:\(port)/media/a.jpg?bytes=800")
            let garbled = Payloads.braze(url: "http://bob:\(secret)@[::1/media/b.jpg")
            // A Braze Android push: its picture's URL is in the notification's content too.
            let android = #"{"_ab":"true","t":"T","a":"B","ab_iu":"http://alice:\#(secret)@127.0.0.1:\#(port)/media/c.jpg?bytes=800"}"#
            let batch = directory + "/batch.jsonl"
            let lines = [String(decoding: refused, as: UTF8.self), String(decoding: garbled, as: UTF8.self), android]
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: batch))
            let base = ["--no-cache", "--output-dir", directory, "--allow-private-networks", "--platform", "ios,android"]
            for arguments in [
                base + ["--json", "--batch", batch, "--report", directory + "/report.html"],
                base + ["--verbose", "--batch", batch],
                base + ["--json", "--allow-url-credentials", "-"],
                base + ["--verbose", "--allow-url-credentials", "-"],
            ] {
                let result = try await CommandRunner.run(
                    "fetch-attachment", arguments, stdin: arguments.contains("-") ? refused : Data(), timeout: .seconds(60))
                let everything = result.stdout + result.stderr
                #expect(!everything.contains(secret), "\(arguments): \(everything)")
                #expect(everything.contains("***@127.0.0.1") || everything.contains("***@[::1"), "\(arguments): \(everything)")
                if arguments.contains("--report") {
                    let report = try String(contentsOfFile: directory + "/report.html", encoding: .utf8)
                    #expect(!report.contains(secret))
                    #expect(report.contains("***@127.0.0.1"))
                }
            }
        }
    }

    @Test("A proxy that refuses the tunnel is the proxy's network failure, not the origin's HTTP status")
    func proxyRefusesTunnel() async throws {
        let proxy = try await MockCDNServer.start(eventLoopThreads: 1)
        do {
            try await Fixture.with(configure: { $0.proxy = proxy.baseURL }) { fixture in
                // An https URL goes through CONNECT, which the mock CDN answers 405.
                let outcome = await fixture.fetcher.process(Payloads.braze(url: "https://127.0.0.1:9/x.png"))
                #expect(outcome.reason == .network, "\(outcome.reason.map { "\($0)" } ?? "attached"): \(outcome.detail ?? "")")
                #expect(outcome.detail?.contains("proxy") == true, "\(outcome.detail ?? "")")
            }
        } catch {
            try? await proxy.shutdown()
            throw error
        }
        try await proxy.shutdown()
    }

    @Test("An explicit proxy carries the request, and the policy checks the proxy's address")
    func explicitProxy() async throws {
        let proxy = try await MockCDNServer.start(eventLoopThreads: 1)
        do {
            try await withDefaultPolicy({ $0.proxy = proxy.baseURL }) { fixture in
                // The proxy is on loopback, which the default policy refuses.
                let refused = await fixture.fetch("/media/p.jpg?bytes=1000")
                #expect(refused.reason == .addressRefused, "\(refused.result) \(refused.detail ?? "")")
                #expect(proxy.stats().connectionsAccepted == 0)
                // Allowed, the proxy gets the connection, and the origin none.
                let allowing = try fixture.anotherFetcher { $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }
                _ = await allowing.process(fixture.braze("/media/p.jpg?bytes=1000"))
                await allowing.shutdown()
                #expect(proxy.stats().connectionsAccepted == 1)
                #expect(fixture.server.stats().connectionsAccepted == 0)
            }
        } catch {
            try? await proxy.shutdown()
            throw error
        }
        try await proxy.shutdown()
    }

    @Test("A service that does not speak HTTP (an SSH banner) is network, 'could not fetch' under the policy: not invalid-url with libcurl's words, which told an open port from a closed one")
    func notHTTPIsNetwork() async throws {
        let banner = try BannerServer(banner: "SSH-2.0-OpenSSH_9.2\r\n")
        defer { banner.stop() }
        let payload = Payloads.braze(url: "http://127.0.0.1:\(banner.port)/x.png")
        try await withDefaultPolicy({ $0.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }) { fixture in
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .network)
            #expect(outcome.detail == "could not fetch")
        }
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.reason == .network)
            #expect(outcome.detail?.hasPrefix("the response is not HTTP: ") == true, "\(outcome.detail ?? "")")
        }
    }

    @Test("A server that closes without a response is network, said as 'no response', not only libcurl's 'Empty reply from server'")
    func noResponse() async throws {
        let silent = try BannerServer(banner: "", readingFirst: true)
        defer { silent.stop() }
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Payloads.braze(url: "http://127.0.0.1:\(silent.port)/x.png"))
            #expect(outcome.reason == .network)
            #expect(outcome.detail?.hasPrefix("no response: the server closed the connection, or broke the protocol, before sending one") == true, "\(outcome.detail ?? "")")
        }
    }

    @Test("The credentials check reads the authority only")
    func credentialsInAuthority() throws {
        func has(_ string: String) throws -> Bool { try AttachmentURL.parse(string).get().hasCredentials }
        #expect(try has("http://a:b@cdn.test/x.jpg"))
        #expect(try has("https://a@cdn.test/x.jpg"))
        #expect(try !has("http://cdn.test/a@b.jpg"))
        #expect(try !has("http://cdn.test/x.jpg?u=a@b"))
        #expect(try !has("http://cdn.test:8080/x.jpg#a@b"))
    }

    @Test("Redaction replaces the whole user information, and only it")
    func redaction() {
        #expect(URLCredentials.redacted("http://a:b@cdn.test/x.jpg") == "http://***@cdn.test/x.jpg")
        #expect(URLCredentials.redacted("https://token@cdn.test") == "https://***@cdn.test")
        #expect(URLCredentials.redacted("http://a@b:c@cdn.test/x") == "http://***@cdn.test/x")
        #expect(URLCredentials.redacted("http:\\\\a:b@cdn.test/x") == "http:\\\\***@cdn.test/x")
        #expect(URLCredentials.redacted("http://cdn.test/a@b.jpg") == "http://cdn.test/a@b.jpg")
        #expect(URLCredentials.redacted("http://cdn.test?u=a@b") == "http://cdn.test?u=a@b")
        #expect(URLCredentials.redacted("not a url") == "not a url")
        // A password with a / ? # in it makes no URL: up to the last @ is hidden all the same.
        #expect(URLCredentials.redacted("http://alice:se#cret@cdn.test/x.png") == "http://***@cdn.test/x.png")
        #expect(URLCredentials.redacted("http://alice:ab/cd+e=@cdn.test/x.png") == "http://***@cdn.test/x.png")
        #expect(URLCredentials.redacted("http://alice:p?ss@cdn.test/x.png") == "http://***@cdn.test/x.png")
        // An e-mail address as the user name, then such a password; and the path's own @ stays.
        #expect(URLCredentials.redacted("https://me@example.com:s3cr/et@cdn.example/p.jpg") == "https://***@cdn.example/p.jpg")
        #expect(URLCredentials.redacted("https://me@example.com:s3cr?et@cdn.example/p.jpg") == "https://***@cdn.example/p.jpg")
        #expect(URLCredentials.redacted("https://user:ab/cd@host.example/p@2x.jpg") == "https://***@host.example/p@2x.jpg")
        // A host with a port, and an @ in the path, is a URL without credentials.
        #expect(URLCredentials.redacted("http://cdn.test:8080/a@b.jpg") == "http://cdn.test:8080/a@b.jpg")
        #expect(URLCredentials.redacted("http://[::1]:8080/a@b.jpg") == "http://[::1]:8080/a@b.jpg")
        #expect(URLCredentials.redacted("http://[::1]/a@b.jpg") == "http://[::1]/a@b.jpg")
    }

    @Test("A download the address policy refused sent the origin nothing, and the statistics count no request")
    func refusedSendsNothing() async throws {
        try await Fixture.with(configure: { $0.addressPolicy.allowsPrivateNetworks = false }) { fixture in
            let outcome = await fixture.fetch("/media/refused.jpg?bytes=900")
            #expect(outcome.reason == .addressRefused)
            #expect(fixture.server.stats().requests == 0)
            #expect(fixture.fetcher.statistics.originRequests == 0)
        }
        try await Fixture.with { fixture in
            #expect(await fixture.fetch("/media/allowed.jpg?bytes=900").status == .attached)
            #expect(fixture.fetcher.statistics.originRequests == 1)
        }
    }
}

@Suite("The CLI's address policy and proxy", .timeLimit(.minutes(2)))
struct AddressPolicyCLITests {
    @Test("By default the CLI refuses a loopback origin; --allow-private-networks and --allow-network open it")
    func cliPolicy() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            let payload = Payloads.braze(url: server.url("/media/a.png?bytes=3000"))
            let base = ["--json", "--no-cache", "--output-dir", directory]
            let refused = try await CommandRunner.run("fetch-attachment", base, stdin: payload)
            #expect(refused.status == 1)
            #expect(refused.stdout.contains(#""reason":"address-refused""#), "\(refused.stdout)")
            #expect(server.stats().connectionsAccepted == 0)
            for extra in [["--allow-private-networks"], ["--allow-network", "127.0.0.0/8"]] {
                let result = try await CommandRunner.run("fetch-attachment", base + extra, stdin: payload)
                #expect(result.status == 0, "\(extra): \(result.stdout) \(result.stderr)")
            }
            let bad = try await CommandRunner.run("fetch-attachment", base + ["--allow-network", "127.1/8"], stdin: payload)
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--allow-network"))
        }
    }

    @Test("Proxy variables in the environment are ignored: the proxy they name gets nothing")
    func environmentProxyIgnored() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let proxy = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown { try await proxy.shuttingDown {
            let environment = [
                "http_proxy": proxy.baseURL, "HTTP_PROXY": proxy.baseURL, "https_proxy": proxy.baseURL,
                "ALL_PROXY": proxy.baseURL, "all_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "",
            ]
            let result = try await CommandRunner.run(
                "fetch-attachment", ["--json", "--no-cache", "--output-dir", directory, "--allow-private-networks"],
                stdin: Payloads.braze(url: server.url("/media/a.png?bytes=3000")), environment: environment)
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(server.stats().requests == 1)
            #expect(proxy.stats().connectionsAccepted == 0)
        } }
    }
}

/// A TCP listener on 127.0.0.1 that writes `banner` to every connection and closes it: a service
/// that does not speak HTTP (or, `readingFirst`, one that takes the request and closes without a
/// word). Accepts on a thread of its own until stopped.
final class BannerServer: @unchecked Sendable {
    let port: Int
    private let socket: Int32

    init(banner: String, readingFirst: Bool = false) throws {
        let (listener, port) = try LoopbackSocket.listening(backlog: 16)
        socket = listener
        self.port = port
        let bytes = Array(banner.utf8)
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                // Stopped: the listener is closed here, by the thread that accepts on it, never
                // by `stop()`, whose closing could hand its number to another test's listener
                // while this thread still accepts on that number (it did: this server's banner
                // went to another one's connections).
                guard connection >= 0 else {
                    close(listener)
                    return
                }
                if readingFirst {
                    var request = [UInt8](repeating: 0, count: 4096)
                    _ = request.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
                }
                _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                usleep(100_000)
                close(connection)
            }
        }
    }

    /// Stops accepting: the accepting thread's `accept` fails, and that thread closes the listener.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
    }
}
