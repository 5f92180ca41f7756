/// Credentials in a URL's authority, kept out of everything shown. A pure function of text:
/// the payload readers use it too (and the payload fuzzer runs it).
enum URLCredentials {
    /// `string` with the user information of its authority (`user:pass@`, or a token before an
    /// `@`) replaced by `***`: what outcomes, warnings, logs and reports show of a URL. Read as
    /// `AttachmentURL.hasCredentials` reads the authority (slashes or backslashes after the
    /// scheme, up to the first `/`, `?`, `#` or `\`), up to its last `@`. A password holding
    /// one of those (`user:ab/cd@host`, a base64 token) cuts the authority short at a `user:ab`
    /// that is no `host:port` (its port is not a number), so that string is no URL: then
    /// everything up to the text's last `@` is user information. Works on any text, a URL or not.
    static func redacted(_ string: String) -> String {
        let bytes = string.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return string }
        let authority = bytes[bytes.index(after: colon)...].drop { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }
        var lastAt: String.Index?
        var end = authority.endIndex
        scan: for index in authority.indices {
            switch authority[index] {
            case UInt8(ascii: "@"): lastAt = index
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"):
                end = index
                break scan
            default: continue
            }
        }
        // After an IPv6 literal's brackets, if any.
        let host = authority[..<end].lastIndex(of: UInt8(ascii: "]")).map { authority.index(after: $0) } ?? authority.startIndex
        if lastAt == nil, end != authority.endIndex, let portColon = authority[host..<end].firstIndex(of: UInt8(ascii: ":")),
            !authority[authority.index(after: portColon)..<end].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        {
            lastAt = authority[end...].lastIndex(of: UInt8(ascii: "@"))
        }
        guard let lastAt else { return string }
        return String(string[..<authority.startIndex]) + "***" + String(string[lastAt...])
    }
}
