import Crypto
import Foundation
import SystemPackage

extension PushAttachmentFetcher {
    /// How a fetcher downloads, checks and stores attachments. Every field has a documented
    /// default; only the output directory must be given.
    public struct Configuration: Sendable {
        /// Where attachment files are written (created if missing, and made again if it goes
        /// while the fetcher lives). Without a cache, bodies are also made here (as nameless
        /// files where the file system allows), so that each appears whole under its name or not
        /// at all; with one, in the cache's `tmp/`. Each outcome's files are the caller's: the
        /// fetcher never removes one it handed out (remove each once shown, as iOS moves an
        /// attachment's file into its own store; `AttachmentCache.removeOutputFiles(in:unlinkedOnly:minimumAge:)`
        /// tidies a directory of them).
        public var outputDirectory: String

        /// How long a payload may take, measured from the moment it is handed in. Default 30 s,
        /// the time iOS gives a service extension before `serviceExtensionTimeWillExpire`.
        ///
        /// Each payload's deadline is this long after `process(_:timeout:)` is called, unless the
        /// call gives its own timeout or deadline.
        public var timeout: Duration

        /// The largest file accepted for each type class.
        public var sizeLimits: SizeLimits

        /// How many connections and transfers run at once.
        public var connectionPool: ConnectionPool

        /// How many redirects a download may follow: 0 to 100. Default 20, as URLSession.
        public var maximumRedirects: Int

        /// The `User-Agent` header sent with every request. Default `defaultUserAgent`. An origin
        /// that filters or varies by it (a CDN rule serving only an app's clients) answers a
        /// preflight as it answers the phones only when this is what the app's extension sends
        /// (URLSession's is "NAME/VERSION CFNetwork/… Darwin/…"). A cache keeps the downloads
        /// of each User-Agent apart (see `cacheScope`).
        public var userAgent: String

        /// Payloads larger than this are `invalid-payload` without being parsed. Default 4,096
        /// bytes: APNs' limit for a notification payload (and FCM's for its data), so no payload
        /// a device can receive is refused.
        public var maximumPayloadBytes: Int

        /// The most attachments one payload may download. The payload's attachment URLs are
        /// deduplicated in payload order (a URL named twice is fetched once), then the first
        /// `maximumAttachmentsPerPayload` are fetched; an outcome warning names every URL left
        /// out. Default 4: a notification shows one attachment (the first) and rarely carries
        /// more than a few.
        public var maximumAttachmentsPerPayload: Int

        /// Which addresses downloads may connect to. Default: globally reachable addresses only
        /// (see `AddressPolicy`).
        public var addressPolicy: AddressPolicy

        /// Whether attachment URLs (and redirects) may carry credentials (`user:pass@host`).
        /// Default `false`: such a URL is `invalid-url` and nothing is sent.
        public var allowsCredentialsInURLs: Bool

        /// The proxy every download goes through (libcurl's `CURLOPT_PROXY`, such as
        /// `http://proxy.internal:3128`), or `nil` (the default) for none. The environment
        /// (`http_proxy`, `https_proxy`, `ALL_PROXY`, `no_proxy`) is never read. The address
        /// policy then checks the proxy's address, not the origin's: the proxy must enforce the
        /// policy itself; a refused proxy is `address-refused` naming the proxy. The proxy must
        /// be a URL libcurl takes (a port from 1 to 65535, one `@` at most, no space or control
        /// character), else making the fetcher throws `invalidConfiguration`; its credentials are
        /// never shown, in errors, details or libcurl's messages alike.
        public var proxy: String?

        /// Fixed name resolutions, in curl's `--resolve` form `HOST:PORT:ADDRESS[,ADDRESS…]`
        /// (`HOST` may be `*` for every name), used instead of DNS (libcurl's `CURLOPT_RESOLVE`).
        /// The address policy still checks the addresses. Default: none.
        public var resolve: [String]

        /// A PEM file of the certificate authorities that TLS origins are verified against
        /// (libcurl's `CURLOPT_CAINFO`), for a CDN behind a private CA. `nil` (the default): the
        /// system's store. Verification itself is never switched off.
        public var trustedCertificatesFile: String?

        /// The shared on-disk cache, or `nil` (the default) for none: then every payload downloads
        /// its own copy.
        public var cache: Cache?

        /// The platforms whose rules judge every payload's files, for a preflight that asks what
        /// iOS and Android users would each see: the file is downloaded once, each platform judges
        /// it, and `Outcome.verdicts` holds each one's verdict. The outcome is the payload's own
        /// platform's verdict when that platform is listed (its users are who receive the
        /// payload), else `attached` when one of the listed platforms shows a file; a file only
        /// another platform shows stays, named by its verdict and the failure's `file`. Empty
        /// (the default): the payload's own platform judges alone. Each platform at most once.
        /// A Linux client that shows the pushes itself sets `[.linux]` (``Platform/linux``).
        public var platforms: [Platform] = []

        /// What decides, besides a URL, whether and from where its body may be fetched, and what
        /// the origin answers: the address policy, the proxy, fixed resolutions, trusted CAs,
        /// credentials in URLs, the redirects followed and the User-Agent, as one text; empty with the defaults. Cache keys include it, so that an entry fetched under wider rules (an
        /// internal CDN allowed with `allowedNetworks`) is never served to a fetcher whose rules
        /// refuse its origin.
        var cacheScope: String {
            var parts: [String] = []
            if addressPolicy.allowsPrivateNetworks { parts.append("private-networks") }
            if !addressPolicy.allowedNetworks.isEmpty {
                parts.append("networks " + addressPolicy.allowedNetworks.map(\.description).sorted().joined(separator: ","))
            }
            if let proxy { parts.append("proxy " + proxy) }
            if !resolve.isEmpty { parts.append("resolve " + resolve.sorted().joined(separator: ",")) }
            if let trustedCertificatesFile { parts.append("cacert " + Self.certificatesIdentity(trustedCertificatesFile)) }
            if allowsCredentialsInURLs { parts.append("credentials") }
            if maximumRedirects != Self.defaultMaximumRedirects { parts.append("redirects \(maximumRedirects)") }
            // An origin may answer another User-Agent otherwise (`Vary: User-Agent`, a CDN's rule).
            if userAgent != Self.defaultUserAgent { parts.append("user-agent " + userAgent) }
            return parts.joined(separator: "; ")
        }

        /// A certificates file as the cache's scope knows it: its absolute path and the SHA-256 of
        /// what it holds now, so that the same name typed in two directories, or a file replaced
        /// under one name, is two scopes.
        static func certificatesIdentity(_ path: String) -> String {
            let absolute = FilePath.absolute(path)
            guard let file = try? Syscalls.open(absolute, flags: O_RDONLY) else { return absolute.string + " (unreadable)" }
            defer { try? file.close() }
            return absolute.string + " sha256 " + (sha256(of: file) ?? "(unreadable)")
        }

        /// SHA-256 of an open file from its first byte, in 1 MiB pieces; `nil` when it cannot be read.
        private static func sha256(of file: FileDescriptor) -> String? {
            var hasher = SHA256()
            do {
                try file.forEachChunk(ofSize: 1 << 20) { piece in
                    hasher.update(bufferPointer: piece)
                    return true
                }
            } catch {
                return nil
            }
            return Hex.encode(hasher.finalize())
        }

        /// URLSession's limit.
        static let defaultMaximumRedirects = 20

        /// The `User-Agent` sent unless `userAgent` says otherwise.
        public static let defaultUserAgent = "AttachmentFetcher/1.0"

        /// Whether `userAgent` holds a control character: it is one header line, and a line break
        /// would add headers of the text's choosing.
        package static func userAgentHasControlCharacter(_ userAgent: String) -> Bool {
            userAgent.utf8.contains { $0 < 0x20 || $0 == 0x7F }
        }

        /// A configuration writing into `outputDirectory`, with every other field at its default.
        public init(outputDirectory: String, timeout: Duration = .seconds(30)) {
            self.outputDirectory = outputDirectory
            self.timeout = timeout
            sizeLimits = SizeLimits()
            connectionPool = ConnectionPool()
            maximumRedirects = Self.defaultMaximumRedirects
            userAgent = Self.defaultUserAgent
            maximumPayloadBytes = 4096
            maximumAttachmentsPerPayload = 4
            addressPolicy = AddressPolicy()
            allowsCredentialsInURLs = false
            proxy = nil
            resolve = []
            trustedCertificatesFile = nil
            cache = nil
        }

        /// The on-disk cache that coalesces concurrent requests for one URL into one download,
        /// in one process and across processes sharing the directory.
        public struct Cache: Sendable, Hashable {
            /// The cache directory (created if missing). It holds `entries/`, `tmp/` and the lock
            /// file `lock`.
            public var directory: String
            /// The size budget for cached bodies; least recently used entries are evicted beyond
            /// it. Default 1 GiB (2^30 bytes).
            public var maximumBytes: Int = 1 << 30
            /// How long an entry stays fresh when the origin sends neither `Cache-Control: max-age`
            /// nor `Expires`. Default 10 minutes. No lifetime, this one or an origin's, is longer
            /// than 2^31 s (68 years, RFC 9111's bound for a delta-seconds value).
            public var defaultFreshness: Duration = .seconds(600)
            /// How long a failed download of a URL is remembered, so that a spike against a
            /// failing origin does not hammer it: payloads for that URL within this time get the
            /// same reason without a request. Default 2 seconds; `.zero` remembers nothing.
            public var failureMemory: Duration = .seconds(2)
            /// Whether a cache directory owned by another user, or writable by other users (group
            /// or world), is used anyway. Default `false`: such a directory is refused, because
            /// whoever may write it may plant or swap entries that every user of the cache would
            /// then serve. Allow it only where every user who can write the directory is trusted.
            public var allowsSharedDirectory = false

            /// A cache in `directory` with the default budget and durations.
            public init(directory: String) {
                self.directory = directory
            }
        }

        /// The largest attachment accepted for each type class, in bytes.
        ///
        /// Apple documents the limits as 10 MB, 5 MB and 50 MB without saying which megabyte;
        /// the defaults use the decimal megabyte (10^6 bytes), the smaller reading, so that every
        /// file accepted here is within iOS's limit under either reading.
        public struct SizeLimits: Sendable, Hashable {
            /// JPEG, GIF, PNG. Default 10,000,000.
            public var image: Int = 10_000_000
            /// AIFF, WAV, MP3, MPEG-4 audio. Default 5,000,000.
            public var audio: Int = 5_000_000
            /// MPEG, MPEG-2, MPEG-4, AVI. Default 50,000,000.
            public var video: Int = 50_000_000
            /// Android's notification picture as FCM's own display draws it (Firebase's,
            /// Customer.io's and MoEngage's pictures). Default 1,048,576: FCM documents "Images
            /// for notifications are limited to 1MB in size", and its code's
            /// `ImageDownload.MAX_IMAGE_SIZE_BYTES` is `1024 * 1024`. The SDKs that draw their own
            /// picture have their own limits (see the *Platform rules* article).
            public var androidPicture: Int = 1_048_576

            /// iOS's and Android's limits.
            public init() {}

            /// iOS's limit for `kind`.
            public func limit(for kind: MediaKind) -> Int {
                switch kind {
                case .image: image
                case .audio: audio
                case .video: video
                }
            }

            /// The most a download of `kind` may bring, whichever platform judges it afterwards.
            func downloadLimit(for kind: MediaKind) -> Int {
                kind == .image ? max(image, androidPicture) : limit(for: kind)
            }

            /// The largest limit of all: no body may ever be larger.
            public var largest: Int { max(image, audio, video, androidPicture) }

            /// The smallest of the classes' download limits (`downloadLimit(for:)`).
            var smallestDownload: Int { min(downloadLimit(for: .image), downloadLimit(for: .audio), downloadLimit(for: .video)) }
        }

        /// Concurrency of the download engine.
        public struct ConnectionPool: Sendable, Hashable {
            /// Transfers (and so connections) to one host at once; more wait in a queue that does
            /// not count against anything but their payload's deadline. Default 48: from 32 to 64
            /// gave the highest throughput in the load test's distinct-URL spike
            /// (docs/performance.md).
            public var maximumConnectionsPerHost: Int = 48
            /// Transfers at once across all hosts. Default: derived from the process's soft
            /// file-descriptor limit, (limit − 64) / 6 between 1 and 1024 (1024 when it is 6,208 or
            /// more; 160 at the common soft limit of 1024), read when the pool is made: a process
            /// that raises its limit (`setrlimit`) does so before making its `Configuration`.
            public var maximumConcurrentTransfers: Int = FileDescriptorBudget.concurrency()

            /// The defaults, or the limits given.
            public init(
                maximumConnectionsPerHost: Int = 48,
                maximumConcurrentTransfers: Int = FileDescriptorBudget.concurrency()
            ) {
                self.maximumConnectionsPerHost = maximumConnectionsPerHost
                self.maximumConcurrentTransfers = maximumConcurrentTransfers
            }
        }

        func validate() throws(AttachmentFetcherError) {
            guard !outputDirectory.isEmpty else { throw .invalidConfiguration("outputDirectory is empty") }
            guard timeout > .zero else { throw .invalidConfiguration("timeout must be positive") }
            guard sizeLimits.image > 0, sizeLimits.audio > 0, sizeLimits.video > 0, sizeLimits.androidPicture > 0 else {
                throw .invalidConfiguration("size limits must be positive")
            }
            guard connectionPool.maximumConnectionsPerHost > 0, connectionPool.maximumConcurrentTransfers > 0 else {
                throw .invalidConfiguration("connection limits must be positive")
            }
            // URLSession's own is 20; past 100 a loop of redirects only costs the origin more.
            guard (0...100).contains(maximumRedirects) else { throw .invalidConfiguration("maximumRedirects must be between 0 and 100") }
            // Each platform judged once: a platform named twice would give two verdicts for one.
            for (index, platform) in platforms.enumerated() where platforms[..<index].contains(platform) {
                throw .invalidConfiguration("platforms names \(platform) twice")
            }
            guard maximumPayloadBytes > 0 else { throw .invalidConfiguration("maximumPayloadBytes must be positive") }
            guard maximumAttachmentsPerPayload > 0 else {
                throw .invalidConfiguration("maximumAttachmentsPerPayload must be positive")
            }
            for entry in resolve where !Self.isResolveEntry(entry) {
                throw .invalidConfiguration("resolve entry '\(entry)' is not HOST:PORT:ADDRESS")
            }
            if let proxy, proxy.isEmpty { throw .invalidConfiguration("proxy is empty (nil means no proxy)") }
            if let proxy, let problem = Self.proxyProblem(proxy) {
                throw .invalidConfiguration(
                    "proxy '\(URLCredentials.redacted(proxy))' is no proxy URL libcurl takes: \(problem); give one such as http://proxy.example:3128 (schemes: \(Self.proxySchemes.sorted().joined(separator: ", ")))")
            }
            if Self.userAgentHasControlCharacter(userAgent) {
                throw .invalidConfiguration("userAgent holds a control character (a line break would start another header)")
            }
            if let trustedCertificatesFile, (try? Syscalls.checkAccess(FilePath(trustedCertificatesFile), R_OK)) == nil {
                throw .invalidConfiguration("trustedCertificatesFile \(trustedCertificatesFile) is not a readable file")
            }
            if let cache {
                guard !cache.directory.isEmpty else { throw .invalidConfiguration("the cache directory is empty") }
                // Its lock file and entries would sit among the attachments, which are the user's.
                // Compared where they really are: through a symbolic link too, the attachments
                // would sit among files `cache clear` removes.
                let cacheDirectory = FilePath.resolved(cache.directory), output = FilePath.resolved(outputDirectory)
                guard cacheDirectory != output else {
                    throw .invalidConfiguration("the cache directory is the output directory: give the cache a directory of its own")
                }
                // Nor may the attachments sit among the cache's own files (`attachments/` is the
                // command line's default, and the cache's business).
                for inner in [CacheStore.entriesName, "tmp"] {
                    let directory = cacheDirectory.appending(inner)
                    guard !output.starts(with: directory) else {
                        throw .invalidConfiguration("the output directory is inside the cache's \(inner)/: give the attachments a directory of their own")
                    }
                }
                guard cache.maximumBytes > 0 else { throw .invalidConfiguration("the cache budget must be positive") }
                guard cache.defaultFreshness >= .zero, cache.failureMemory >= .zero else {
                    throw .invalidConfiguration("cache durations must not be negative")
                }
            }
        }
    }
}
