import Foundation
import SystemPackage

/// What is kept with each cached body: in the body file's extended attribute
/// `user.attachment-fetcher.entry` (JSON), set before the body gets its name, so that an entry
/// appears with its metadata in one `linkat` and needs no second file.
struct CacheEntryMetadata: Codable, Sendable, Hashable {
    /// The normalised URL the body came from.
    var url: String
    /// The MIME type libmagic found.
    var mime: String
    /// Its iOS type class.
    var kind: MediaKind
    /// The suffix files made from it get.
    var fileExtension: String
    /// The body's size in bytes.
    var size: Int
    /// The body's SHA-256, hex, computed as it streamed.
    var sha256: String
    /// The body's modification time when it was stored (nanoseconds since 1970): a body
    /// written in place since then no longer matches it, and is hashed again before use.
    var modified: Int64
    /// Validators for revalidation.
    var etag: String?
    var lastModified: String?
    /// When the body was stored, and until when it is fresh.
    var storedAt: Date
    var freshUntil: Date

    var media: MediaType { MediaType(mime: mime, kind: kind, fileExtension: fileExtension) }

    /// The extended attribute that holds it.
    static let attributeName = "user.attachment-fetcher.entry"

    /// The JSON kept in the attribute.
    func encoded() -> [UInt8] { (try? Array(JSONEncoder().encode(self))) ?? [] }

    /// Metadata read back from an attribute; `nil` when it is not ours or damaged.
    static func decode(_ bytes: [UInt8]) -> CacheEntryMetadata? {
        try? JSONDecoder().decode(CacheEntryMetadata.self, from: Data(bytes))
    }
}

/// A cached body that matched its metadata (and, on its first use in this process, libmagic)
/// when it was looked up.
struct CachedEntry: Sendable, Hashable {
    /// Whose entry.
    var key: CacheKey
    /// What the metadata says.
    var metadata: CacheEntryMetadata
    /// `entries/<key>`.
    var bodyPath: String
    /// The body's inode: a link made by name is checked to be this file.
    var inode: UInt64

    /// Whether it may be served without asking the origin.
    func isFresh(at now: Date) -> Bool { metadata.freshUntil > now }

    /// The body as a validated file.
    var file: DownloadedFile {
        DownloadedFile(
            path: bodyPath, media: metadata.media, byteCount: metadata.size, effectiveURL: metadata.url, headerBlock: "")
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
}
