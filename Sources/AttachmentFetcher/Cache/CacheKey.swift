import Crypto
import Foundation

/// The cache key of a URL: the SHA-256 of its normalised form, in hex, which is also the entry's
/// file name. Normalising lowercases scheme and host, drops a default port and the fragment, and
/// keeps path and query as they are (they are the origin's to interpret).
struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// 64 hex digits.
    let hex: String
    /// The normalised URL.
    let normalizedURL: String

    init(_ url: AttachmentURL) {
        var components = URLComponents(string: url.string) ?? URLComponents()
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80) || (components.scheme == "https" && components.port == 443) {
            components.port = nil
        }
        components.fragment = nil
        if components.path.isEmpty { components.path = "/" }
        normalizedURL = components.string ?? url.string
        hex = SHA256.hash(data: Data(normalizedURL.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    var description: String { hex }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.hex == rhs.hex }
    func hash(into hasher: inout Hasher) { hasher.combine(hex) }
}
