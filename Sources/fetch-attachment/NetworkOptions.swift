import ArgumentParser
import AttachmentFetcher

/// Where downloads may go: the address policy, credentials in URLs, a proxy, fixed name
/// resolutions, and how many attachments one payload may fetch.
struct NetworkOptions: ParsableArguments {
    @Flag(name: .customLong("allow-private-networks"), help: "Allow connections to every address: loopback, private, link-local… (by default only globally reachable addresses are fetched from).")
    var allowPrivateNetworks = false

    @Option(name: .customLong("allow-network"), help: ArgumentHelp("Also allow this network although it is not public, such as 10.20.0.0/16 or fd00:1::/32 (repeatable; an address with bits set past the prefix, such as 10.1.2.3/8, is refused).", valueName: "cidr"))
    var allowedNetworks: [String] = []

    @Flag(name: .customLong("allow-url-credentials"), help: "Allow URLs with credentials (user:pass@host); by default they are invalid-url and nothing is sent.")
    var allowURLCredentials = false

    @Option(help: ArgumentHelp("Send every download through this proxy (the environment's http_proxy and the like are never used). The address policy then checks the proxy's address: the proxy must enforce it.", valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp("Resolve HOST:PORT to ADDRESS instead of asking DNS, as curl's --resolve ('*' as HOST for every name; repeatable). The address policy still applies.", valueName: "host:port:address"))
    var resolve: [String] = []

    @Option(name: .customLong("user-agent"), help: ArgumentHelp("The User-Agent header of every request (default \(PushAttachmentFetcher.Configuration.defaultUserAgent)). An origin that filters or varies by it answers as it answers the phones only with the app's own, as its extension's URLSession sends it: 'NAME/VERSION CFNetwork/… Darwin/…'. The cache keeps each User-Agent's downloads apart.", valueName: "text"))
    var userAgent: String?

    @Option(name: .customLong("max-connections-per-host"), parsing: .unconditional, help: "Transfers to one host at once (default 48); the others wait in a queue, on their payloads' time.")
    var maximumConnectionsPerHost: Int?

    func validate() throws {
        if let maximumConnectionsPerHost, !(1...10_000).contains(maximumConnectionsPerHost) {
            throw ValidationError("--max-connections-per-host must be between 1 and 10000")
        }
        for network in allowedNetworks {
            do {
                _ = try IPNetwork(parsing: network)
            } catch {
                throw ValidationError("--allow-network \(TerminalText.escaped(error.message))")
            }
        }
        if let userAgent, userAgent.isEmpty { throw ValidationError("--user-agent must not be empty") }
        if let userAgent, PushAttachmentFetcher.Configuration.userAgentHasControlCharacter(userAgent) {
            throw ValidationError("--user-agent '\(TerminalText.escaped(userAgent))' holds a control character: it is one header line")
        }
        if let proxy, proxy.isEmpty { throw ValidationError("--proxy must not be empty") }
        if let proxy, let problem = PushAttachmentFetcher.Configuration.proxyProblem(proxy) {
            throw ValidationError(
                "--proxy '\(TerminalText.escaped(PushAttachmentFetcher.Configuration.redactedProxy(proxy)))' is no proxy URL libcurl takes: \(problem); give one such as http://proxy.example:3128 (http, https, socks4, socks4a, socks5 or socks5h)")
        }
        for entry in resolve where !PushAttachmentFetcher.Configuration.isResolveEntry(entry) {
            throw ValidationError("--resolve '\(entry)' is not HOST:PORT:ADDRESS (addresses in standard notation, comma-separated, an IPv6 one in brackets)")
        }
    }

    /// Writes the options into `configuration`.
    func apply(to configuration: inout PushAttachmentFetcher.Configuration) {
        configuration.addressPolicy = .init(
            allowsPrivateNetworks: allowPrivateNetworks, allowedNetworks: allowedNetworks.compactMap(IPNetwork.init))
        configuration.allowsCredentialsInURLs = allowURLCredentials
        configuration.proxy = proxy
        if let userAgent { configuration.userAgent = userAgent }
        configuration.resolve = resolve
        if let maximumConnectionsPerHost { configuration.connectionPool.maximumConnectionsPerHost = maximumConnectionsPerHost }
    }
}
