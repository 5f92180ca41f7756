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
        hex = Hex.encode(SHA256.hash(data: Data(normalizedURL.utf8)))
    }

    var description: String { hex }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.hex == rhs.hex }
    func hash(into hasher: inout Hasher) { hasher.combine(hex) }
}

/// Lowercase hexadecimal text of bytes.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lowercase hex digits per byte.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
