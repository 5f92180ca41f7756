/// Credentials in a URL's authority, kept out of everything shown. A pure function of text:
/// the payload readers use it too (and the payload fuzzer runs it).
enum URLCredentials {
    /// `string` with the user information of its authority (`user:pass@`, or a token before an
    /// `@`) replaced by `***`: what outcomes, warnings, logs and reports show of a URL. Read as
    /// `AttachmentURL.hasCredentials` reads the authority (slashes or backslashes after the
    /// scheme, up to the first `/`, `?`, `#` or `\`), up to its last `@`. Works on any text, a
    /// URL or not.
    static func redacted(_ string: String) -> String {
        let bytes = string.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return string }
        let authority = bytes[bytes.index(after: colon)...].drop { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }
        var lastAt: String.Index?
        scan: for index in authority.indices {
            switch authority[index] {
            case UInt8(ascii: "@"): lastAt = index
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"): break scan
            default: continue
            }
        }
        guard let lastAt else { return string }
        return String(string[..<authority.startIndex]) + "***" + String(string[lastAt...])
    }
}
