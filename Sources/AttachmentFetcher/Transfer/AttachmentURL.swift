import Foundation

/// An attachment URL that passed the checks made before any request (absolute, http or https,
/// with a host), in the one form that is fetched, cached and reported.
///
/// A payload's URL is read as iOS reads it: apps linked on iOS 17 or later get
/// `URL(string:)` percent-encoding characters that are invalid in a URL (a space, non-ASCII,
/// `|`, a `%` not followed by two hex digits) rather than failing, and URLSession converts a
/// non-ASCII host name to its IDNA (punycode) form. Foundation's own `URL(string:)` does both
/// here. A port must be 1 to 65535 (`0`, `65536` and numbers too large for any integer are
/// `invalid-url`). On top of that the scheme and host are lower-cased, a default port and the fragment
/// (never sent) are dropped, and an empty path becomes `/`, so that spellings of one resource
/// share one cache entry and one answer.
struct AttachmentURL: Sendable, Hashable {
    /// The fields, behind one reference: a URL is copied into every result and outcome that
    /// names it, and a copy then costs one retain rather than one per string.
    private final class Fields: Sendable {
        let string: String
        let payloadSpelling: String
        let hostKey: String
        let fileStem: String
        let hasCredentials: Bool
        let reported: String
        let reportedPayloadSpelling: String
        let needsEncodingBeforeIOS17: Bool

        init(string: String, payloadSpelling: String, hostKey: String, fileStem: String) {
            self.string = string
            self.payloadSpelling = payloadSpelling
            self.hostKey = hostKey
            self.fileStem = fileStem
            hasCredentials = AttachmentURL.hasCredentials(string)
            reported = hasCredentials ? URLCredentials.redacted(string) : string
            reportedPayloadSpelling = URLCredentials.redacted(payloadSpelling)
            needsEncodingBeforeIOS17 = AttachmentURL.needsEncodingBeforeIOS17(payloadSpelling)
        }
    }

    private let fields: Fields

    /// The normalised URL: what libcurl fetches, what the cache keys on, what outcomes report.
    var string: String { fields.string }
    /// The URL exactly as the payload spelled it.
    var payloadSpelling: String { fields.payloadSpelling }
    /// `scheme://host:port`, lowercased: the unit of the per-host connection limit.
    var hostKey: String { fields.hostKey }
    /// The stem of the local file's name, from the URL's last path component (see
    /// `AttachmentFiles.stem(of:)`), worked out once per URL rather than once per file.
    var fileStem: String { fields.fileStem }
    /// Whether the URL carries credentials: an `@` in its authority (`user:pass@host`), which
    /// libcurl would send as HTTP authentication. A backslash ends the authority too, as some
    /// parsers take it for a slash: the check errs towards refusing.
    var hasCredentials: Bool { fields.hasCredentials }
    /// `string` as outcomes show it: credentials replaced by `***`.
    var reported: String { fields.reported }
    /// `payloadSpelling` as outcomes show it: credentials replaced by `***`.
    var reportedPayloadSpelling: String { fields.reportedPayloadSpelling }
    /// Whether the payload spells the URL with characters a URL may not hold (a space, non-ASCII,
    /// `"<>\^`{|}`, a `%` not followed by two hex digits), which only apps linked on iOS 17 or
    /// later encode: before, `URL(string:)` is `nil` and no attachment shows.
    var needsEncodingBeforeIOS17: Bool { fields.needsEncodingBeforeIOS17 }

    /// The last four are worked out here, once per URL (a parsed URL is remembered, see
    /// `BoundedMemo.parse`), rather than by every outcome that reports it.
    private init(string: String, payloadSpelling: String, hostKey: String, fileStem: String) {
        fields = Fields(string: string, payloadSpelling: payloadSpelling, hostKey: hostKey, fileStem: fileStem)
    }

    /// Two URLs are the same when the payload spelled them alike: every other field follows.
    static func == (lhs: AttachmentURL, rhs: AttachmentURL) -> Bool {
        lhs.fields === rhs.fields || (lhs.string == rhs.string && lhs.payloadSpelling == rhs.payloadSpelling)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(string)
        hasher.combine(payloadSpelling)
    }

    /// `string`'s normalised form, or `string` itself when it is no URL this fetches: how a
    /// payload's attachments are told apart (`AttachmentSelection`).
    static func normalised(_ string: String) -> String {
        if case .success(let url) = parse(string) { return url.string }
        return string
    }

    /// Checks and normalises `string`; `invalid-url` explains what is wrong.
    static func parse(_ string: String) -> Result<AttachmentURL, TransferFailure> {
        func invalid(_ why: String) -> Result<AttachmentURL, TransferFailure> {
            .failure(TransferFailure(reason: .invalidURL, detail: "\(why): \(URLCredentials.redacted(string).prefix(200))"))
        }
        guard !string.isEmpty else { return invalid("the URL is empty") }
        guard let url = URL(string: string), let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return invalid("not a URL") }
        guard let scheme = components.scheme?.lowercased() else { return invalid("not an absolute URL") }
        guard scheme == "http" || scheme == "https" else { return invalid("only http and https are fetched") }
        // `encodedHost` is the IDNA (ASCII) form of a host name; IPv6 literals keep their brackets.
        guard let host = components.encodedHost?.lowercased(), !host.isEmpty else {
            return invalid("the URL has no host")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        // The port as written: `components.port` is `nil` for a number too large for an `Int`,
        // which would silently be the default port; libcurl takes 1 to 65535 only.
        var port = defaultPort
        let understood = components.rangeOfPort.flatMap { components.string?[$0] }.flatMap { $0.isEmpty ? nil : $0 }
        let spelled = writtenPort(of: string)
        // Where the spelling and Foundation's reading (the host the fetch goes to) disagree on
        // the port, the URL is read two ways: refused rather than fetched from either.
        if let spelled, let understood, spelled != understood, Int(spelled) == nil || Int(spelled) != Int(understood) {
            return invalid("the URL's port reads two ways, \(spelled.prefix(30)) or \(understood.prefix(30))")
        }
        if let written = spelled ?? understood {
            let shown = written.count > 30 ? written.prefix(30) + "…" : written
            guard written.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return invalid("port \(shown) is not a number")
            }
            guard let value = Int(written), (1...65_535).contains(value) else {
                return invalid("port \(shown) is outside 1–65535")
            }
            port = value
        }
        var normalized = scheme + "://"
        if let user = components.percentEncodedUser {
            normalized += user
            if let password = components.percentEncodedPassword { normalized += ":" + password }
            normalized += "@"
        }
        normalized += host
        if port != defaultPort { normalized += ":\(port)" }
        let path = components.percentEncodedPath
        normalized += path.isEmpty ? "/" : path
        if let query = components.percentEncodedQuery { normalized += "?" + query }
        let last = components.path.split(separator: "/").last.map(String.init) ?? ""
        return .success(
            AttachmentURL(
                string: normalized, payloadSpelling: string, hostKey: "\(scheme)://\(host):\(port)",
                fileStem: AttachmentFiles.stem(of: last)))
    }
}

extension AttachmentURL {
    /// The port `string` spells, if its authority (after `scheme://`, up to the first `/`, `?`
    /// or `#`, as Foundation ends it, past any `user:password@` and IPv6 literal) has one that is
    /// not empty. Read from the payload's spelling: Foundation, which first encodes a URL with a
    /// space or non-ASCII in it, gives back the port it understood (`00000` as `0`, a number too
    /// large for an `Int` not at all).
    fileprivate static func writtenPort(of string: String) -> Substring? {
        guard let schemeEnd = string.range(of: "://") else { return nil }
        let authority = string[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        let afterHost = hostAndPort.lastIndex(of: "]").map { hostAndPort[hostAndPort.index(after: $0)...] } ?? hostAndPort
        return afterHost.lastIndex(of: ":").map { afterHost[afterHost.index(after: $0)...] }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether `string`, a normalised URL, carries credentials (see `hasCredentials`).
    fileprivate static func hasCredentials(_ string: String) -> Bool {
        guard let schemeEnd = string.utf8.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let afterScheme = string.utf8[string.utf8.index(after: schemeEnd)...].drop { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }
        for byte in afterScheme {
            switch byte {
            case UInt8(ascii: "@"): return true
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"): return false
            default: continue
            }
        }
        return false
    }

    /// See `needsEncodingBeforeIOS17`.
    fileprivate static func needsEncodingBeforeIOS17(_ spelling: String) -> Bool {
        let bytes = Array(spelling.utf8)
        // `[` and `]` belong to an IPv6 host alone: in the path or query, the parser before
        // iOS 17 reads no URL (iOS 17 encodes them, `%5B` `%5D`).
        let scheme = bytes.firstIndex(of: UInt8(ascii: ":")).map { $0 + 3 } ?? 0
        let authorityEnd = bytes[min(scheme, bytes.count)...].firstIndex { "/?#".utf8.contains($0) } ?? bytes.count
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case 0x5B where index >= authorityEnd, 0x5D where index >= authorityEnd: return true
            case 0x21, 0x23...0x3B, 0x3D, 0x3F...0x5B, 0x5D, 0x5F, 0x61...0x7A, 0x7E:
                if byte == UInt8(ascii: "%") {
                    let hex = bytes.dropFirst(index + 1).prefix(2)
                    guard hex.count == 2, hex.allSatisfy({ Character(UnicodeScalar($0)).isHexDigit }) else { return true }
                }
            default: return true
            }
        }
        return false
    }
}

extension BoundedMemo where Value == AttachmentURL {
    /// `AttachmentURL.parse(string)`, from memory when `string` was checked before. Only valid
    /// URLs are kept.
    func parse(_ string: String) -> Result<AttachmentURL, TransferFailure> {
        if let known = remembered(string) { return .success(known) }
        let result = AttachmentURL.parse(string)
        if case .success(let url) = result { remember(url, for: string) }
        return result
    }
}
