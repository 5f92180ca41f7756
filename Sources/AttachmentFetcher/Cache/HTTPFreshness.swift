import Foundation

/// What a response's caching headers allow (RFC 9111, as a private cache reads them).
struct HTTPFreshness: Sendable, Hashable {
    /// `Cache-Control: no-store`: never keep the body.
    var noStore = false
    /// How long the response is fresh from now; `nil` when the origin does not say.
    var lifetime: Duration?
    /// `ETag`, sent back as `If-None-Match`.
    var etag: String?
    /// `Last-Modified`, sent back as `If-Modified-Since`.
    var lastModified: String?

    /// The longest validator an entry keeps, in bytes.
    static let longestValidator = 1024

    /// Reads `Cache-Control` (`no-store`, `no-cache`, `max-age`), `Expires`, `Age`, `ETag`,
    /// `Last-Modified` and `Vary: *` (kept nowhere, as `no-store`) from `headers`.
    init(headers: [HTTPHeader], now: Date = Date()) {
        var maxAge: Int?
        for header in headers {
            switch header.name {
            case "cache-control":
                for directive in header.value.split(separator: ",") {
                    let parts = directive.split(separator: "=", maxSplits: 1).map {
                        $0.trimmingCharacters(in: .whitespaces).lowercased()
                    }
                    switch parts.first {
                    case "no-store": noStore = true
                    case "no-cache": maxAge = 0
                    case "max-age":
                        // Not a number ("-5", "+5", "soon"): stale, as RFC 9111 §4.2.1 encourages.
                        if maxAge != 0 {
                            maxAge = parts.count == 2 ? Self.deltaSeconds(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) ?? 0 : 0
                        }
                    default: break
                    }
                }
            // A validator longer than the entry keeps (1,024 bytes) would go back cut: none.
            case "etag": etag = header.value.utf8.count <= Self.longestValidator ? header.value : nil
            case "last-modified": lastModified = header.value.utf8.count <= Self.longestValidator ? header.value : nil
            // `Vary: *` never matches a later request (RFC 9111 4.1): nothing to keep.
            case "vary" where header.value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "*" }:
                noStore = true
            default: break
            }
        }
        // An Age that is not a number of seconds is ignored (RFC 9111 §5.1).
        let age = headers.last { $0.name == "age" }.flatMap { Self.deltaSeconds($0.value) } ?? 0
        if let maxAge {
            lifetime = .seconds(max(0, maxAge - age))
        } else if let expires = headers.last(where: { $0.name == "expires" }) {
            // An unparseable Expires (such as "0") means already expired.
            let date = HTTPDate.parse(expires.value) ?? .distantPast
            let seconds = date.timeIntervalSince(now)
            lifetime = .seconds(seconds >= Double(Self.longestDelta) ? Self.longestDelta : max(0, Int(seconds)))
        }
    }

    /// The freshness of a body reached through `redirects`, which the cache keeps under the URL
    /// asked for: this (the final response's), bounded by each redirect's own. RFC 9111 §4.2.2
    /// lets a 301 or 308 be fresh by heuristic, a 302, 303 or 307 only by explicit freshness, so
    /// such a redirect that gives none leaves the body already stale; a `no-store` on any of them
    /// keeps it out. Nor does the entry keep validators: they are the target's, and the target a
    /// redirect leads to may change, so a conditional request could be answered 304 for a body
    /// that is no longer the one the URL leads to.
    /// `defaultLifetime` is what the body is given when no response says: a redirect's own
    /// freshness shortens it, never lengthens it.
    func bounded(by redirects: [RedirectResponse], defaultLifetime: Duration, now: Date = Date()) -> HTTPFreshness {
        guard !redirects.isEmpty else { return self }
        var bounded = self
        bounded.etag = nil
        bounded.lastModified = nil
        for redirect in redirects {
            let own = HTTPFreshness(headers: HTTPHeader.parse(redirect.headerBlock), now: now)
            if own.noStore { bounded.noStore = true }
            guard let limit = own.lifetime ?? ([301, 308].contains(redirect.status) ? nil : .zero) else { continue }
            bounded.lifetime = min(bounded.lifetime ?? defaultLifetime, limit)
        }
        return bounded
    }

    /// The longest lifetime a response is given: 2^31 s (68 years), the value RFC 9111 §1.2.2
    /// gives a delta-seconds too large to represent, so that no sum or product of it overflows.
    static let longestDelta = 1 << 31

    /// A delta-seconds value (digits only), at most `longestDelta`; `nil` when it is not one.
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return min(Int(text) ?? longestDelta, longestDelta)
    }
}

/// HTTP dates (RFC 9110: IMF-fixdate, and the obsolete RFC 850 and asctime forms).
enum HTTPDate {
    /// One formatter per form, made once: making one (ICU's) costs far more than a parse, and
    /// an `Expires` is parsed for every response that gives no `max-age`. Used under the lock.
    private static let formatters = Locked(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        })

    /// The date in `text`, or `nil`.
    static func parse(_ text: String) -> Date? {
        formatters.withLock { formatters in formatters.lazy.compactMap { $0.date(from: text) }.first }
    }
}
