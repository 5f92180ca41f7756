/// Why a `PushAttachmentFetcher` could not be created or used.
///
/// Processing a payload never throws (its failures are an `Outcome` with a `FallbackReason`);
/// this error is for setting a fetcher up, and for what throws around it (`AttachmentCache`'s
/// tidying, `IPNetwork(parsing:)`). Compare with the stable statics, e.g.
/// `error.code == AttachmentFetcherError.Code.outputDirectoryUnusable`.
public struct AttachmentFetcherError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable text ("output-directory-unusable").
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The output directory could not be created or written.
        public static let outputDirectoryUnusable = Code("output-directory-unusable")
        /// The cache's directory (`Configuration.Cache.directory`, or one inside it) could not be
        /// created, opened or listed.
        public static let cacheDirectoryUnusable = Code("cache-directory-unusable")
        /// The cache's directory is refused as unsafe: it belongs to another user or others may
        /// write it (unless `Configuration.Cache.allowsSharedDirectory`), or it, or a directory the
        /// cache keeps in it, is a symbolic link, which the cache never follows.
        public static let cacheDirectoryUnsafe = Code("cache-directory-unsafe")
        /// libmagic could not be opened or its database could not be loaded.
        public static let magicUnavailable = Code("magic-unavailable")
        /// libcurl could not be initialised.
        public static let curlUnavailable = Code("curl-unavailable")
        /// A configuration value is out of range.
        public static let invalidConfiguration = Code("invalid-configuration")
    }

    /// What kind of failure this is.
    public let code: Code
    /// The underlying system, libcurl or libmagic message.
    public let message: String

    /// An error of `code` with a human-readable `message`.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    static func outputDirectoryUnusable(_ message: String) -> Self { .init(code: .outputDirectoryUnusable, message: message) }
    static func cacheDirectoryUnusable(_ message: String) -> Self { .init(code: .cacheDirectoryUnusable, message: message) }
    static func cacheDirectoryUnsafe(_ message: String) -> Self { .init(code: .cacheDirectoryUnsafe, message: message) }
    static func magicUnavailable(_ message: String) -> Self { .init(code: .magicUnavailable, message: message) }
    static func curlUnavailable(_ message: String) -> Self { .init(code: .curlUnavailable, message: message) }
    static func invalidConfiguration(_ message: String) -> Self { .init(code: .invalidConfiguration, message: message) }
}
