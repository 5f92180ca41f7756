@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// The address policy at its edges: proxies libcurl would not take, a refused proxy or redirect
/// hop named as such, ports out of range, networks with host bits, and IPv4 addresses embedded in
/// IPv6 ones. Every server is a mock CDN on loopback; no test reaches another host.
@Suite("Address policy edges: proxies, ports, networks, embedded IPv4, redirect hops", .timeLimit(.minutes(3)))
struct AddressPolicyEdgeTests {
    typealias Policy = PushAttachmentFetcher.Configuration.AddressPolicy
    typealias Configuration = PushAttachmentFetcher.Configuration

    // MARK: Proxies libcurl would not take

    /// Proxy URLs that Foundation's parser reads but libcurl refuses, each with a password that
    /// must never be shown.
    static let unusableProxies = [
        "http://puser:PSECRET@127.0.0.1:99999",
        "http://puser:PSECRET@127.0.0.1:65536",
        "http://puser:PSECRET@127.0.0.1:0",
        "http://puser:PSE@CRET@127.0.0.1:3128",
        "http://pu@ser:PSECRET@127.0.0.1:3128",
        "http://puser:PSE CRET@127.0.0.1:3128",
        "http://puser:PSE\tCRET@127.0.0.1:3128",
    ]

    @Test("The command line refuses a proxy libcurl would not take (exit 64), showing it redacted", arguments: unusableProxies)
    func cliRefusesUnusableProxy(proxy: String) async throws {
        let run = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--allow-private-networks", "--proxy", proxy, "-"],
            stdin: Payloads.braze(url: "http://127.0.0.1:9/a.jpg"))
        #expect(run.status == 64, "\(run.status) \(run.stdout) \(run.stderr)")
        #expect(!run.stderr.contains("CRET") && !run.stdout.contains("CRET"), "\(run.stderr)")
        #expect(run.stderr.contains("--proxy") && run.stderr.contains("***@127.0.0.1"), "\(run.stderr)")
    }

    @Test("The library refuses a proxy libcurl would not take when the fetcher is made, its password unshown", arguments: unusableProxies)
    func libraryRefusesUnusableProxy(proxy: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Configuration(outputDirectory: directory + "/out")
        configuration.proxy = proxy
        #expect(Configuration.proxyProblem(proxy) != nil)
        do {
            _ = try PushAttachmentFetcher(configuration: configuration)
            Issue.record("a fetcher was made with proxy \(proxy)")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.message.contains("CRET"), "\(error.message)")
        }
    }

    @Test("libcurl's words about a proxy it refuses never carry the proxy's password")
    func curlProxyErrorRedacted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The engine takes the proxy as given (the fetcher would have refused it): libcurl's own
        // message repeats it whole.
        let engine = try TransferEngine(
            configuration: .init(
                sizeLimits: .init(), maximumConnectionsPerHost: 4, maximumConcurrentTransfers: 8, maximumRedirects: 5,
                userAgent: "test", addressPolicy: Policy(allowsPrivateNetworks: true),
                proxy: "http://puser:PSECRET@127.0.0.1:99999"),
            logger: .init(label: "test"), classifier: MediaClassifier())
        let url = try AttachmentURL.parse("http://127.0.0.1:9/a.jpg").get()
        let result = await engine.download(
            TransferRequest(
                url: url.string, hostKey: url.hostKey, deadline: ContinuousClock.now.advanced(by: .seconds(10) * TestTiming.scale),
                temporaryDirectory: directory, place: { .success($0) }))
        await engine.shutdown()
        guard case .failure(let failure) = result else {
            Issue.record("a transfer through an unusable proxy succeeded")
            return
        }
        #expect(!failure.detail.contains("PSECRET"), "\(failure.detail)")
        #expect(failure.detail.contains("http://***@127.0.0.1:99999"), "\(failure.detail)")
    }

    // MARK: A refused proxy is named as the proxy

    @Test("A proxy on a refused address is reported as the proxy, redacted, not as the origin")
    func refusedProxyNamed() async throws {
        let proxy = try await MockCDNServer.start(eventLoopThreads: 1)
        do {
            let proxyURL = "http://pu:PWSECRET@127.0.0.1:\(proxy.port)"
            try await Fixture.with(configure: {
                $0.addressPolicy = Policy()
                $0.proxy = proxyURL
            }) { fixture in
                let outcome = await fixture.fetcher.process(Payloads.braze(url: "https://cdn.example.com/a.jpg"))
                #expect(outcome.reason == .addressRefused, "\(outcome.result) \(outcome.detail ?? "")")
                let detail = outcome.detail ?? ""
                #expect(detail.contains("proxy") && detail.contains("http://***@127.0.0.1:\(proxy.port)"), "\(detail)")
                #expect(!detail.contains("PWSECRET") && !detail.contains("every address of the host"), "\(detail)")
                #expect(proxy.stats().connectionsAccepted == 0)
            }
        } catch {
            try? await proxy.shutdown()
            throw error
        }
        try await proxy.shutdown()
    }

    @Test("The command line's hint for a refused proxy suggests allowing the proxy's address alone", arguments: ["127.0.0.1", "[::1]"])
    func refusedProxyHint(host: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let network = host == "[::1]" ? "::1/128" : "127.0.0.1/32"
        let payload = Payloads.braze(url: "https://cdn.example.com/a.jpg")
        let proxy = "http://\(host):9"
        let one = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--output-dir", directory, "--proxy", proxy], stdin: payload)
        #expect(one.status == 1)
        #expect(one.stdout.contains(#""reason":"address-refused""#), "\(one.stdout)")
        #expect(one.stdout.contains("proxy"), "\(one.stdout)")
        #expect(one.stderr.contains("--allow-network \(network)"), "\(one.stderr)")
        #expect(!one.stderr.contains("--allow-private-networks"), "\(one.stderr)")
        let campaign = directory + "/campaign.jsonl"
        try Data((String(decoding: payload, as: UTF8.self) + "\n").utf8).write(to: URL(fileURLWithPath: campaign))
        let batch = try await CommandRunner.run(
            "fetch-attachment", ["--batch", campaign, "--no-cache", "--output-dir", directory, "--proxy", proxy])
        #expect(batch.stderr.contains("--allow-network \(network)"), "\(batch.stderr)")
    }

    // MARK: Ports

    @Test(
        "A port outside 1–65535 is invalid-url, said plainly, and never becomes the default port, whatever the path holds (a space, a bar, non-ASCII: a URL Foundation encodes first)",
        arguments: ["99999999999999999999", "65536", "0", "100000", "00000"], ["/a.jpg", "/a b.jpg", "/a|b.jpg", "/ä.jpg?q=a b"])
    func portOutOfRange(port: String, path: String) async throws {
        let failure: TransferFailure
        let url = "http://127.0.0.1:\(port)\(path)"
        switch AttachmentURL.parse(url) {
        case .success(let url):
            Issue.record("port \(port) parsed as \(url.string)")
            return
        case .failure(let refused): failure = refused
        }
        #expect(failure.reason == .invalidURL)
        #expect(failure.detail.hasPrefix("port \(port) is outside 1–65535"), "\(failure.detail)")
        try await Fixture.with { fixture in
            let outcome = await fixture.fetcher.process(Payloads.braze(url: url))
            #expect(outcome.reason == .invalidURL, "\(outcome.result) \(outcome.detail ?? "")")
            #expect(outcome.detail?.hasPrefix("port \(port) is outside 1–65535") == true, "\(outcome.detail ?? "")")
        }
    }

    @Test("A port is read where Foundation reads the host: past credentials with a backslash or an empty password, never the default port instead")
    func portPastCredentials() throws {
        // Foundation does not end the authority at a backslash: the host and port are after the last '@'.
        #expect(try AttachmentURL.parse(#"http://x:81\@127.0.0.1:8443/a.jpg"#).get().hostKey == "http://127.0.0.1:8443")
        #expect(try AttachmentURL.parse(#"http://u:\@127.0.0.1:8443/a.jpg"#).get().hostKey == "http://127.0.0.1:8443")
        #expect(try AttachmentURL.parse(#"http://u:p\@h.test:82/a.jpg"#).get().hostKey == "http://h.test:82")
        #expect(try AttachmentURL.parse("http://u:p@h.test:82/a b.jpg").get().hostKey == "http://h.test:82")
    }

    @Test("Ports 1 and 65535, a default port and an empty port are kept as URLs are")
    func portsInRange() throws {
        #expect(try AttachmentURL.parse("http://127.0.0.1:1/a.jpg").get().string == "http://127.0.0.1:1/a.jpg")
        #expect(try AttachmentURL.parse("http://127.0.0.1:65535/a.jpg").get().hostKey == "http://127.0.0.1:65535")
        #expect(try AttachmentURL.parse("http://127.0.0.1:80/a.jpg").get().string == "http://127.0.0.1/a.jpg")
        #expect(try AttachmentURL.parse("https://[::1]:443/a.jpg").get().string == "https://[::1]/a.jpg")
        #expect(try AttachmentURL.parse("https://user:pa:ss@cdn.test:8443/a.jpg").get().hostKey == "https://cdn.test:8443")
        #expect(try AttachmentURL.parse("http://cdn.test:/a.jpg").get().string == "http://cdn.test/a.jpg")
    }

    // MARK: Networks with host bits

    @Test(
        "A network with bits set past its prefix is refused, not widened",
        arguments: ["127.0.0.1/0", "10.1.2.3/8", "::ffff:127.0.0.1/96", "192.168.1.10/24", "fd00:ec2::254/32"])
    func hostBitsRefused(text: String) {
        #expect(IPNetwork(text) == nil)
    }

    @Test("The command line refuses a network with host bits (exit 64) and names the network it would mean")
    func cliHostBitsRefused() async throws {
        for (given, meant) in [("10.1.2.3/8", "10.0.0.0/8"), ("127.0.0.1/0", "0.0.0.0/0"), ("::ffff:127.0.0.1/96", "::ffff:0.0.0.0/96")] {
            let run = try await CommandRunner.run(
                "fetch-attachment", ["--json", "--no-cache", "--allow-network", given, "-"], stdin: Data("{}".utf8))
            #expect(run.status == 64, "\(given): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("--allow-network") && run.stderr.contains("did you mean \(meant)?"), "\(run.stderr)")
        }
    }

    // MARK: IPv4 embedded in IPv6

    /// Loopback and metadata inside IPv6 forms that embed an IPv4 address.
    static let embeddedInternal = [
        "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2002:a9fe:a9fe::1", "::7f00:1", "::a9fe:a9fe",
        "::ffff:127.0.0.1", "64:ff9b:1::7f00:1", "64:ff9b:1:7f00:1::",
    ]

    @Test("A broad IPv6 network does not allow an internal IPv4 address embedded in IPv6", arguments: ["::/0", "::/1", "::/95", "2000::/3", "2002::/15", "64:ff9b::/64", "64::/16", "::/80"])
    func broadIPv6LeavesEmbeddedIPv4Alone(network: String) throws {
        let policy = Policy(allowedNetworks: [try #require(IPNetwork(network))])
        let parsed = try #require(IPNetwork(network))
        for host in Self.embeddedInternal where CurlAddressPolicy.numericAddresses(of: host).allSatisfy({ address in
            // Only the hosts the network contains say anything about it.
            zip(address, parsed.bytes).enumerated().allSatisfy { index, pair in
                let kept = min(8, max(0, parsed.mappedPrefixLength - index * 8))
                let mask: UInt8 = kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
                return pair.0 & mask == pair.1 & mask
            }
        }) {
            #expect(policy.permits(numericHost: host) == false, "\(network) allowed \(host)")
        }
        // Embedding a public IPv4 address, they are judged by it.
        for host in ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"] {
            #expect(policy.permits(numericHost: host) == true, "\(network) \(host)")
        }
    }

    @Test("::/0 still allows the IPv6 addresses that embed none")
    func broadIPv6StillAllowsIPv6() throws {
        let policy = Policy(allowedNetworks: [try #require(IPNetwork("::/0"))])
        for host in ["::1", "fd00::1", "fe80::1", "2001:db8::1", "2001::1", "100::1"] {
            #expect(policy.permits(numericHost: host) == true, "\(host)")
        }
        #expect(policy.permits(numericHost: "::") == true)
    }

    @Test("A network at least as long as the embedding prefix allows embedded addresses explicitly")
    func explicitEmbeddingNetworks() throws {
        for (network, host) in [
            ("64:ff9b::/96", "64:ff9b::7f00:1"), ("64:ff9b::7f00:0/120", "64:ff9b::7f00:1"), ("2002::/16", "2002:7f00:1::"),
            ("2002:7f00::/24", "2002:7f00:1::"), ("::/96", "::7f00:1"), ("64:ff9b:1::/48", "64:ff9b:1::7f00:1"),
            ("::ffff:0:0/96", "127.0.0.1"),
        ] {
            let policy = Policy(allowedNetworks: [try #require(IPNetwork(network))])
            #expect(policy.permits(numericHost: host) == true, "\(network) \(host)")
        }
        // Shorter than the embedding prefix by one bit: not explicit.
        for (network, host) in [("64:ff9b::/95", "64:ff9b::7f00:1"), ("2002::/15", "2002:7f00:1::"), ("64:ff9b::/47", "64:ff9b:1::7f00:1")] {
            let policy = Policy(allowedNetworks: [try #require(IPNetwork(network))])
            #expect(policy.permits(numericHost: host) == false, "\(network) \(host)")
        }
    }

    @Test("An embedded IPv4 address is judged by the IPv4 networks allowed")
    func embeddedJudgedByIPv4Networks() throws {
        let loopback = Policy(allowedNetworks: [try #require(IPNetwork("127.0.0.0/8"))])
        for host in ["64:ff9b::7f00:1", "2002:7f00:1::", "::7f00:1", "::ffff:127.0.0.1"] {
            #expect(loopback.permits(numericHost: host) == true, "\(host)")
        }
        for host in ["64:ff9b::a9fe:a9fe", "2002:a00:1::", "::a00:1"] {
            #expect(loopback.permits(numericHost: host) == false, "\(host)")
        }
        // A network that does not contain the embedded address allows nothing of it.
        let ten = Policy(allowedNetworks: [try #require(IPNetwork("10.0.0.0/8")), try #require(IPNetwork("::/0"))])
        #expect(ten.permits(numericHost: "64:ff9b::7f00:1") == false)
        #expect(ten.permits(numericHost: "64:ff9b::a00:1") == true)
    }

    // MARK: A refused redirect hop is named

    @Test("A redirect to a refused address names the redirect target, not the allowed first URL")
    func refusedRedirectHopNamed() async throws {
        try await Fixture.with(configure: {
            $0.addressPolicy = Policy(allowedNetworks: [IPNetwork("127.0.0.1/32")!])
        }) { fixture in
            let port = fixture.server.port
            let hop = "http://127.0.0.2:\(port)/media/inside.jpg?bytes=1000"
            let encoded = hop.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await fixture.fetch("/media/moved.jpg?redirect_to=\(encoded)")
            #expect(outcome.reason == .addressRefused, "\(outcome.result) \(outcome.detail ?? "")")
            let detail = outcome.detail ?? ""
            #expect(detail.contains("redirect") && detail.contains(hop), "\(detail)")
            #expect(!detail.contains("moved.jpg"), "\(detail)")
            #expect(fixture.server.stats().requests == 1)

            // With credentials allowed, a hop's are shown redacted.
            let allowing = try fixture.anotherFetcher { $0.allowsCredentialsInURLs = true }
            let secretHop = "http://u:HOPSECRET@127.0.0.2:\(port)/media/inside.jpg"
            let secretEncoded = secretHop.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let redacted = await allowing.process(fixture.braze("/media/moved2.jpg?redirect_to=\(secretEncoded)"))
            await allowing.shutdown()
            #expect(redacted.reason == .addressRefused, "\(redacted.result) \(redacted.detail ?? "")")
            #expect(redacted.detail?.contains("***@127.0.0.2") == true && redacted.detail?.contains("HOPSECRET") == false, "\(redacted.detail ?? "")")
        }
    }
}
