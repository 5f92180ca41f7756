import Foundation

/// What a response's caching headers allow (RFC 9111, as a shared cache reads them: one entry
/// serves every payload, process and campaign that names its URL, so `private` is not stored
/// and `s-maxage` is the lifetime where it is given).
struct HTTPFreshness: Sendable, Hashable {
    /// `Cache-Control: no-store` (or `private`, or `Vary: *`): never keep the body.
    var noStore = false
    /// How long the response is fresh from now; `nil` when the origin does not say.
    var lifetime: Duration?
    /// `ETag`, sent back as `If-None-Match`.
    var etag: String?
    /// `Last-Modified`, sent back as `If-Modified-Since`.
    var lastModified: String?

    /// The longest validator an entry keeps, in bytes.
    static let longestValidator = 1024

    /// Reads `Cache-Control` (`no-store`, `private`, `no-cache`, `s-maxage`, `max-age`),
    /// `Expires`, `Age`, `ETag`, `Last-Modified` and `Vary: *` (kept nowhere, as `no-store`)
    /// from `headers`.
    init(headers: [HTTPHeader], now: Date = Date()) {
        var maxAge: Int?
        var sharedMaxAge: Int?
        var noCache = false
        for header in headers {
            switch header.name {
            case "cache-control":
                for directive in header.value.split(separator: ",") {
                    let parts = directive.split(separator: "=", maxSplits: 1).map {
                        $0.trimmingCharacters(in: .whitespaces).lowercased()
                    }
                    // Not a number ("-5", "+5", "soon"): stale, as RFC 9111 §4.2.1 encourages.
                    let seconds = parts.count == 2 ? Self.deltaSeconds(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) ?? 0 : 0
                    switch parts.first {
                    // A shared cache stores no `private` response, whatever fields it names
                    // (RFC 9111 §5.2.2.7).
                    case "no-store", "private": noStore = true
                    case "no-cache": noCache = true
                    case "max-age": maxAge = min(maxAge ?? seconds, seconds)
                    case "s-maxage": sharedMaxAge = min(sharedMaxAge ?? seconds, seconds)
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
        // `s-maxage` overrides `max-age` and `Expires` for a shared cache (§5.2.2.10);
        // `no-cache` makes either stale at once.
        if noCache {
            lifetime = .zero
        } else if let maxAge = sharedMaxAge ?? maxAge {
            lifetime = .seconds(max(0, maxAge - age))
        } else if let expires = headers.last(where: { $0.name == "expires" }) {
            // An unparseable Expires (such as "0") means already expired.
            let date = HTTPDate.parse(expires.value, now: now) ?? .distantPast
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

/// HTTP dates (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
///
/// Read field by field, in ASCII, rather than by Foundation's `DateFormatter`: that one stopped
/// the process on some texts a response may hold (a combining mark after the day's name gave
/// "Incorrect range"), and making one cost far more than a parse. Names are taken in any case,
/// `UTC` for `GMT`; the weekday is not checked against the date.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar
    }()

    /// The date in `text`, or `nil`. `now` places an RFC 850 two-digit year: the most recent
    /// year with those digits that is not more than 50 years ahead.
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        guard text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) else { return nil }
        let fields = text.split(separator: " ")
        guard let first = fields.first, first.dropLast(first.last == "," ? 1 : 0).allSatisfy(\.isLetter) else { return nil }
        switch (fields.count, first.last == ",") {
        case (6, true):  // Sun, 06 Nov 1994 08:49:37 GMT
            guard isGMT(fields[5]), fields[3].count == 4 else { return nil }
            return date(day: fields[1], month: fields[2], year: number(fields[3]), time: fields[4])
        case (4, true):  // Sunday, 06-Nov-94 08:49:37 GMT
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            guard isGMT(fields[3]), parts.count == 3, parts[2].count == 2, let twoDigits = number(parts[2])
            else { return nil }
            let thisYear = calendar.component(.year, from: now)
            var year = thisYear - thisYear % 100 + twoDigits
            if year > thisYear + 50 { year -= 100 }
            return date(day: parts[0], month: parts[1], year: year, time: fields[2])
        case (5, false):  // Sun Nov  6 08:49:37 1994
            guard fields[4].count == 4 else { return nil }
            return date(day: fields[2], month: fields[1], year: number(fields[4]), time: fields[3])
        default:
            return nil
        }
    }

    private static func date(day: Substring, month: Substring, year: Int?, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(day.count), let day = number(day), let month = months.firstIndex(of: month.lowercased()), let year,
            clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let components = DateComponents(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: min(second, 59))
        // A day past its month's end (30 Feb) is no date, not the next month's.
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(second == 60 ? 1 : 0)
    }

    private static func isGMT(_ zone: Substring) -> Bool { ["GMT", "UTC"].contains(zone.uppercased()) }

    /// Digits only (`Int` would take a sign).
    private static func number(_ text: Substring) -> Int? {
        text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) ? Int(text) : nil
    }
}
