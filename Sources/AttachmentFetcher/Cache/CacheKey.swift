import Crypto
import Foundation
import SystemPackage

/// The cache key of a URL: the SHA-256 of its normalised form (`AttachmentURL.string`: scheme
/// and host lowercased, the host in IDNA form, invalid characters percent-encoded, default port
/// and fragment dropped; path and query otherwise as they are, the origin's to interpret), in
/// hex, which is also the entry's file name. Under a network scope other than the defaults'
/// (`Configuration.cacheScope`), the scope and a line break come before the URL: a body fetched
/// where a wider address policy, a proxy, fixed resolutions or other CAs let it be is never a
/// hit for a fetcher whose own rules would refuse it.
struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// 64 hex digits.
    let hex: String
    /// The normalised URL.
    let normalizedURL: String
    /// The entry's file name (`hex`), made once: a hit links it by this name.
    let name: FilePath
    /// The number in the first 16 hex digits: what the key hashes, rather than all 64.
    private let hashPrefix: UInt64

    init(_ url: AttachmentURL, scope: String = "") {
        let hashed = scope.isEmpty ? url.string : scope + "\n" + url.string
        self.init(hex: Hex.encode(SHA256.hash(data: Data(hashed.utf8))), normalizedURL: url.string)
    }

    /// A key read back from an entry's file name.
    init(hex: String) {
        self.init(hex: hex, normalizedURL: "")
    }

    private init(hex: String, normalizedURL: String) {
        self.hex = hex
        self.normalizedURL = normalizedURL
        name = FilePath(hex)
        hashPrefix = Self.hashPrefix(of: hex)
    }

    var description: String { hex }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.hex == rhs.hex }
    func hash(into hasher: inout Hasher) { hasher.combine(hashPrefix) }

    /// Derived from `hex` alone, so that equal keys hash alike; 0 for a name that is not hex (a
    /// stray file in the cache directory).
    private static func hashPrefix(of hex: String) -> UInt64 { UInt64(hex.prefix(16), radix: 16) ?? 0 }
}
