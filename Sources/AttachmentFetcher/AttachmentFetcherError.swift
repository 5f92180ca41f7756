/// Why a `PushAttachmentFetcher` could not be created or used.
///
/// Processing a payload never throws (its failures are an `Outcome` with a `FallbackReason`);
/// this error is only for setting a fetcher up. Compare with the stable statics, e.g.
/// `error.code == AttachmentFetcherError.Code.outputDirectoryUnusable`.
public struct AttachmentFetcherError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable text ("output-directory-unusable").
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The output (or cache) directory could not be created or written.
        public static let outputDirectoryUnusable = Code("output-directory-unusable")
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
    static func magicUnavailable(_ message: String) -> Self { .init(code: .magicUnavailable, message: message) }
    static func curlUnavailable(_ message: String) -> Self { .init(code: .curlUnavailable, message: message) }
    static func invalidConfiguration(_ message: String) -> Self { .init(code: .invalidConfiguration, message: message) }
}
