/// Credentials in a URL's authority, kept out of everything shown. A pure function of text:
/// the payload readers use it too (and the payload fuzzer runs it).
enum URLCredentials {
    /// `string` with the user information of its authority (`user:pass@`, or a token before an
    /// `@`) replaced by `***`: what outcomes, warnings, logs and reports show of a URL. Read as
    /// `AttachmentURL.hasCredentials` reads the authority (slashes or backslashes after the
    /// scheme, up to the first `/`, `?`, `#` or `\`), up to its last `@`. A password holding
    /// one of those (`user:ab/cd@host`, a base64 token) cuts the authority short at a host
    /// (`user:ab`, or `example.com:s3cr` after an e-mail address's `@`) that is no `host:port`,
    /// its port not a number, so that string is no URL: then the user information runs on to
    /// the last `@` before the end of the next authority (the `/`, `?`, `#` or `\` after the
    /// first `@` that follows). Works on any text, a URL or not.
    static func redacted(_ string: String) -> String {
        let bytes = string.utf8
        // Without an `@` there is no user information: the common case, answered in one pass.
        guard bytes.contains(UInt8(ascii: "@")), let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return string }
        let authority = bytes[bytes.index(after: colon)...].drop { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }
        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "\\")
        }
        let end = authority.firstIndex(where: isDelimiter) ?? authority.endIndex
        var lastAt = authority[..<end].lastIndex(of: UInt8(ascii: "@"))
        // The host after the user information, and after an IPv6 literal's brackets, if any.
        let hostStart = lastAt.map { authority.index(after: $0) } ?? authority.startIndex
        let host = authority[hostStart..<end].lastIndex(of: UInt8(ascii: "]")).map { authority.index(after: $0) } ?? hostStart
        if end != authority.endIndex, let portColon = authority[host..<end].firstIndex(of: UInt8(ascii: ":")),
            !authority[authority.index(after: portColon)..<end].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let nextAt = authority[end...].firstIndex(of: UInt8(ascii: "@"))
        {
            let nextEnd = authority[nextAt...].firstIndex(where: isDelimiter) ?? authority.endIndex
            lastAt = authority[nextAt..<nextEnd].lastIndex(of: UInt8(ascii: "@"))
        }
        guard let lastAt else { return string }
        return String(string[..<authority.startIndex]) + "***" + String(string[lastAt...])
    }

    /// `redacted(string)` when `string` starts as a URL does, with a scheme and `://`
    /// (`https://user:pass@host/…`); any other text as it is.
    static func redactedIfURL(_ string: String) -> String {
        let bytes = string.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex,
            bytes[colon...].starts(with: "://".utf8)
        else { return string }
        func isSchemeByte(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
        }
        guard bytes[..<colon].allSatisfy(isSchemeByte) else { return string }
        return redacted(string)
    }
}
