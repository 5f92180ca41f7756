/// The schemes of the redirects a download followed: a redirect that changes the scheme is
/// followed by libcurl and URLSession, not by Android's `HttpURLConnection`, and a hop to plain
/// http is refused by iOS's App Transport Security. A pure value; no I/O.
struct RedirectSchemes: OptionSet, Hashable, Sendable {
    let rawValue: UInt8
    /// A redirect led to a plain-http URL.
    static let http = RedirectSchemes(rawValue: 1)
    /// A redirect led to an https URL.
    static let https = RedirectSchemes(rawValue: 2)

    /// The scheme a `Location` value leads to: its own when it is absolute (`https://…`), none
    /// for a reference relative to the current URL (`/a.jpg`, `//host/a.jpg`, `a.jpg`), which
    /// keeps the current scheme. Other schemes are `invalid-url` before any request.
    static func target(ofLocation value: some Collection<UInt8>) -> RedirectSchemes {
        switch explicitScheme(of: value) {
        case "http": .http
        case "https": .https
        default: []
        }
    }

    /// Whether a `Location` value is absolute with a scheme other than http and https
    /// (`data:`, `javascript:`, `ftp:`…): a redirect there is `invalid-url`.
    static func namesOtherScheme(_ value: some Collection<UInt8>) -> Bool {
        explicitScheme(of: value).map { $0 != "http" && $0 != "https" } ?? false
    }

    /// Whether a `Location` value's authority (`scheme://` or `//`, then up to the path, query or
    /// fragment) writes its port as 0 (`:0`, `:00`…), which libcurl would try to connect to:
    /// a port outside 1–65535, which the payload's own URL may not have either
    /// (`AttachmentURL`). Other bad ports libcurl refuses itself.
    static func namesPortZero(_ value: some Collection<UInt8>) -> Bool {
        let text = Array(value.drop(while: { $0 == 0x20 || $0 == 0x09 }))
        let slashes: [UInt8] = Array("//".utf8)
        guard let start = explicitScheme(of: text).map({ $0.utf8.count + 1 }) ?? (text.starts(with: slashes) ? 0 : nil),
            text[start...].starts(with: slashes)
        else { return false }
        let authority = text[(start + 2)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let hostAndPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority[...]
        // After an IPv6 literal's `]`, else after the host's last `:`.
        let afterHost = hostAndPort.lastIndex(of: UInt8(ascii: "]")).map { hostAndPort[($0 + 1)...] } ?? hostAndPort
        guard let colon = afterHost.lastIndex(of: UInt8(ascii: ":")) else { return false }
        let port = afterHost[(colon + 1)...]
        return !port.isEmpty && port.allSatisfy { $0 == UInt8(ascii: "0") }
    }

    /// The scheme a `Location` value names, lower-cased: RFC 3986 3.1's letter, then letters,
    /// digits, "+", "-" or ".", then ":"; `nil` for a relative reference.
    private static func explicitScheme(of value: some Collection<UInt8>) -> String? {
        var scheme: [UInt8] = []
        for byte in value.drop(while: { $0 == 0x20 || $0 == 0x09 }) {
            if byte == UInt8(ascii: ":") { return scheme.isEmpty ? nil : String(decoding: scheme, as: UTF8.self) }
            let lower = byte | 0x20
            guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower)
                || (!scheme.isEmpty && (byte.isASCIIDigit || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")))
            else { return nil }
            scheme.append(lower)  // "| 0x20" leaves digits, "+", "-" and "." as they are
        }
        return nil
    }

    /// `.https` for an https URL, else `.http`: a normalised URL's scheme is lower-case, and
    /// only http and https are fetched.
    static func scheme(of url: String) -> RedirectSchemes { url.hasPrefix("https:") ? .https : .http }

    /// The other of the two schemes.
    var other: RedirectSchemes { self == .https ? .http : .https }

    /// "https" or "http".
    var name: String { self == .https ? "https" : "http" }

    /// Whether a download that started at `url` was redirected to the other scheme on the way.
    func changesScheme(from url: String) -> Bool { contains(Self.scheme(of: url).other) }
}

extension UInt8 {
    fileprivate var isASCIIDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
}
