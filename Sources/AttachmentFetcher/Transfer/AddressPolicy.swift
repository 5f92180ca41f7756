import Foundation

extension PushAttachmentFetcher.Configuration {
    /// Which addresses downloads may connect to: a defence against payloads that point the
    /// fetcher at internal services (server-side request forgery).
    ///
    /// The policy is checked where libcurl opens each connection's socket, after name resolution,
    /// for every candidate address of the first request and of every redirect hop: no spelling
    /// of an address (`127.1`, `2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`), no DNS answer and no
    /// redirect gets around it, and a refused address never receives a packet. IPv4-mapped
    /// (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged by
    /// the IPv4 address inside; IPv4-compatible (`::/96`, but `::` and `::1`) and local-use NAT64
    /// (`64:ff9b:1::/48`) addresses are never globally reachable.
    ///
    /// By default only globally reachable addresses are allowed: not unspecified, loopback,
    /// private (RFC 1918, CGNAT `100.64.0.0/10`, `fc00::/7`), link-local (`169.254.0.0/16`, where
    /// cloud metadata services live, `fe80::/10`), multicast, documentation, benchmarking or
    /// reserved (every entry of IANA's IPv4 and IPv6 special-purpose registries whose "Globally
    /// Reachable" is false, and everything outside IPv6's `2000::/3`). A download refused
    /// outright gets reason `address-refused`; while private networks are not allowed, network
    /// failures say no more than "could not fetch", so libcurl's messages do not describe a port
    /// (a reason and its time still tell an allowed address's open port from a closed one).
    public struct AddressPolicy: Sendable, Hashable {
        /// Allow every address, private, loopback and link-local included (for a CDN on the
        /// local network, tests, demos). Default `false`.
        public var allowsPrivateNetworks: Bool
        /// Networks allowed although they are not globally reachable, such as `10.20.0.0/16`
        /// for an internal CDN. Default: none.
        ///
        /// An IPv6 network allows an address that embeds an IPv4 address (IPv4-mapped,
        /// IPv4-compatible, NAT64, 6to4) only when its prefix is at least as long as the
        /// embedding prefix (`::ffff:0:0/96`, `::/96`, `64:ff9b::/96`, `64:ff9b:1::/48`,
        /// `2002::/16`): `64:ff9b::/96` allows NAT64 addresses explicitly, while `::/0` or
        /// `2000::/3` open IPv6 alone. Any other embedded address is judged by the IPv4 address
        /// inside: allowed when an allowed IPv4 network holds it (`127.0.0.0/8` allows
        /// `64:ff9b::7f00:1`), or when it is globally reachable.
        public var allowedNetworks: [IPNetwork]

        /// Globally reachable addresses, plus `allowedNetworks`; everything with
        /// `allowsPrivateNetworks`.
        public init(allowsPrivateNetworks: Bool = false, allowedNetworks: [IPNetwork] = []) {
            self.allowsPrivateNetworks = allowsPrivateNetworks
            self.allowedNetworks = allowedNetworks
        }

        /// Whether the policy is in force, hiding network details (private networks not allowed).
        var hidesNetworkDetails: Bool { !allowsPrivateNetworks }

        /// Whether a connection to the numeric address `host` ("127.1", "::1", "0x7f.1") would be
        /// made, after the resolution libcurl would do (`getaddrinfo` with `AI_NUMERICHOST`);
        /// `nil` when `host` is not a numeric address.
        func permits(numericHost host: String) -> Bool? {
            let addresses = CurlAddressPolicy.numericAddresses(of: host)
            guard !addresses.isEmpty else { return nil }
            let policy = CurlAddressPolicy(self)
            return addresses.allSatisfy { policy.permits($0) }
        }
    }
}

/// An IP network in CIDR notation (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1/32`), or a single
/// address (`192.0.2.7`, a /32; `::1`, a /128).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address, with the bits past the prefix cleared: 16 bytes, an IPv4 address
    /// written IPv4-mapped (`::ffff:a.b.c.d`).
    let bytes: [UInt8]
    /// The prefix length in those 128 bits (an IPv4 /n is 96 + n).
    let mappedPrefixLength: Int
    /// Whether the network was written as IPv4.
    public let isIPv4: Bool

    /// The prefix length as written: 0–32 for IPv4, 0–128 for IPv6.
    public var prefixLength: Int { isIPv4 ? mappedPrefixLength - 96 : mappedPrefixLength }

    /// Parses `text`; `nil` when `init(parsing:)` would throw.
    public init?(_ text: String) {
        guard let network = try? IPNetwork(parsing: text) else { return nil }
        self = network
    }

    /// Parses `text`: an address in standard notation (dotted quad, or RFC 4291 IPv6 without
    /// brackets) with an optional `/prefix` in range. An address with bits set past its prefix
    /// (`10.1.2.3/8`, `127.0.0.1/0`) is refused rather than widened to its network, which would
    /// allow far more than the address written (`127.0.0.1/0` is every IPv4 address, cloud
    /// metadata included): the error names the network it would mean.
    ///
    /// - Throws: `AttachmentFetcherError` with code `invalidConfiguration`, whose message starts
    ///   with `text` quoted and says what is wrong with it.
    public init(parsing text: String) throws(AttachmentFetcherError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let parsed = CurlAddressPolicy.standardAddress(String(parts[0])) else {
            throw .invalidConfiguration("'\(text)' is not an address or network such as 10.0.0.0/8 or fd00::/8")
        }
        let maximum = parsed.isIPv4 ? 32 : 128
        var prefix = maximum
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(parts[1]), value <= maximum
            else {
                throw .invalidConfiguration("'\(text)': the prefix length must be a number from 0 to \(maximum)")
            }
            prefix = value
        }
        isIPv4 = parsed.isIPv4
        mappedPrefixLength = parsed.isIPv4 ? prefix + 96 : prefix
        var bytes = parsed.bytes
        for index in 0..<16 {
            let kept = min(8, max(0, mappedPrefixLength - index * 8))
            bytes[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        self.bytes = bytes
        guard bytes == parsed.bytes else {
            let address = CurlAddressPolicy.text(of: parsed.bytes, asIPv4: parsed.isIPv4)
            throw .invalidConfiguration(
                "'\(text)' has bits set past its /\(prefix) prefix, which would widen it to a whole network: did you mean \(description)? (\(address)/\(maximum) is the address alone)")
        }
    }

    /// The network in CIDR notation, such as `10.0.0.0/8`.
    public var description: String {
        "\(CurlAddressPolicy.text(of: bytes, asIPv4: isIPv4))/\(prefixLength)"
    }
}

extension PushAttachmentFetcher.Configuration {
    /// Whether `entry` has curl's `--resolve` shape, `HOST:PORT:ADDRESS[,ADDRESS…]` (a leading
    /// `+` or `-` as libcurl allows): a host, a port number, and at least one address.
    package static func isResolveEntry(_ entry: String) -> Bool {
        var text = Substring(entry)
        if text.first == "+" || text.first == "-" { text = text.dropFirst() }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let port = Int(parts[1]), (0...65_535).contains(port) else {
            return false
        }
        if entry.first == "-" { return parts[2].isEmpty }
        // Addresses in standard notation only (an IPv6 one in brackets), comma-separated, as
        // curl takes them: "127.1" or "0x7f.1" would fail every download instead of the command.
        let addresses = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        return !addresses.isEmpty && addresses.allSatisfy { address in
            let bare = address.hasPrefix("[") && address.hasSuffix("]") ? address.dropFirst().dropLast() : address
            return CurlAddressPolicy.standardAddress(String(bare)) != nil
        }
    }

    /// `proxy` with any credentials in it redacted, for messages.
    package static func redactedProxy(_ proxy: String) -> String { URLCredentials.redacted(proxy) }

    /// The schemes libcurl takes for a proxy.
    static let proxySchemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// Why `proxy` is no proxy URL libcurl takes, or `nil` when it is one: one of
    /// `proxySchemes`, a host, a port from 1 to 65535 if any, at most one `@` (an `@` in a user
    /// name or password is written `%40`), no space or control character, and libcurl's own URL
    /// parser agrees. libcurl would fail every transfer through any other, with an error that
    /// repeats the proxy whole, password included. The reason never quotes `proxy`.
    package static func proxyProblem(_ proxy: String) -> String? {
        if proxy.isEmpty { return "it is empty" }
        if proxy.unicodeScalars.contains(where: { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "it holds a space or a control character (write a space in a user name or password as %20)"
        }
        let bytes = proxy.utf8
        if let separator = proxy.range(of: "://")?.upperBound.samePosition(in: bytes) {
            let authority = bytes[separator...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            if authority.lazy.filter({ $0 == UInt8(ascii: "@") }).count > 1 {
                return "it holds more than one '@' (write one in a user name or password as %40)"
            }
        }
        guard let components = URLComponents(string: proxy), let scheme = components.scheme?.lowercased(),
            proxySchemes.contains(scheme), let host = components.host, !host.isEmpty
        else { return "it is not a URL with a scheme and a host" }
        if let range = components.rangeOfPort, let written = components.string?[range], !written.isEmpty {
            let shown = written.count > 30 ? written.prefix(30) + "…" : written
            guard written.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let port = Int(written),
                (1...65_535).contains(port)
            else { return "its port \(shown) is outside 1–65535" }
        }
        guard CurlURLParser.parsesAsProxy(proxy) else { return "libcurl's URL parser refuses it" }
        return nil
    }
}
