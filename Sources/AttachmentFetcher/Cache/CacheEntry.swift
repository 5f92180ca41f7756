import Foundation

/// A cached body that matched its metadata (and, on its first use in this process, libmagic)
/// when it was looked up.
struct CachedEntry: Sendable, Hashable {
    /// Whose entry.
    var key: CacheKey
    /// What the metadata says.
    var metadata: CacheEntryMetadata
    /// The body's type: libmagic's answer for the download, or on the body's first use here.
    var media: MediaType
    /// `entries/<key>`.
    var bodyPath: String
    /// The body's inode: a link made by name is checked to be this file.
    var inode: UInt64

    /// Whether it may be served without asking the origin.
    func isFresh(at now: Date) -> Bool { metadata.freshUntil > now }

    /// The body as a validated file.
    var file: DownloadedFile {
        DownloadedFile(
            path: bodyPath, media: media, byteCount: metadata.size, effectiveURL: key.normalizedURL, headerBlock: "",
            redirectSchemes: metadata.changedScheme ? RedirectSchemes.scheme(of: key.normalizedURL).other : [],
            redirectSetCookie: metadata.redirectSetCookie, downloadTime: metadata.downloadTime,
            unsuffixedName: metadata.unsuffixedName, unsuffixedReason: metadata.unsuffixedReason, oneSignalUntypedMIME: metadata.oneSignalUntypedMIME,
            cleverTapUntypedMIME: metadata.cleverTapUntypedMIME, airshipUntypedMIME: metadata.airshipUntypedMIME,
            cutAtOrigin: metadata.cutAtOrigin)
    }
}

/// The time the cache reads: wall-clock dates for freshness (entries carry them from process to
/// process), and the continuous clock for failure memory. Tests give a clock they move by hand.
struct CacheClock: Sendable {
    /// Now, as a date.
    var date: @Sendable () -> Date = { Date() }
    /// Now, on the continuous clock.
    var instant: @Sendable () -> ContinuousClock.Instant = { .now }

    /// The system's clocks.
    static let system = CacheClock()
}

/// Counts and sizes of a cache directory.
public struct CacheStatistics: Sendable, Codable, Hashable {
    /// The cache directory.
    public var directory: String
    /// Entries: bodies with their metadata.
    public var entries: Int
    /// Of those, fresh ones.
    public var freshEntries: Int
    /// Bytes of all bodies.
    public var bytes: Int
    /// The configured budget.
    public var maximumBytes: Int
    /// Named temporary files (downloads in progress on a file system without nameless files,
    /// copies being made, or a crash's leftovers until a later start-up removes them).
    public var temporaryFiles: Int

    /// Statistics with these values.
    public init(directory: String, entries: Int, freshEntries: Int, bytes: Int, maximumBytes: Int, temporaryFiles: Int) {
        self.directory = directory
        self.entries = entries
        self.freshEntries = freshEntries
        self.bytes = bytes
        self.maximumBytes = maximumBytes
        self.temporaryFiles = temporaryFiles
    }
}
