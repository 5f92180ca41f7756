import Foundation

/// IMF-fixdate (RFC 1123 / RFC 9110) formatting and parsing without DateFormatter.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970 now.
    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970.rounded(.down))
    }

    /// Process start time, whole seconds: the `Last-Modified` of every synthetic resource.
    static let lastModified: Int64 = now()

    /// e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let hh = secOfDay / 3600, mm = (secOfDay % 3600) / 60, ss = secOfDay % 60
        return "\(weekdays[weekday]), \(two(d)) \(months[Int(m) - 1]) \(y) \(two(hh)):\(two(mm)):\(two(ss)) GMT"
    }

    /// Parses IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), RFC 850 and asctime forms; `nil` if invalid.
    static func parse(_ string: String) -> Int64? {
        let parts = string.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int64?, month: Int64?, year: Int64?, time: [Int64]?
        for part in parts {
            if part.contains(":") {
                let t = part.split(separator: ":").compactMap { Int64($0) }
                if t.count == 3 { time = t }
            } else if part.contains("-") {  // RFC 850: 06-Nov-94
                let f = part.split(separator: "-").map(String.init)
                if f.count == 3, let dd = Int64(f[0]), let mi = months.firstIndex(of: f[1]), var yy = Int64(f[2]) {
                    if yy < 100 { yy += yy < 70 ? 2000 : 1900 }
                    day = dd; month = Int64(mi + 1); year = yy
                }
            } else if let mi = months.firstIndex(of: part) {
                month = Int64(mi + 1)
            } else if let n = Int64(part) {
                if n > 31 { year = n } else { day = n }
            }
        }
        guard let d = day, let m = month, let y = year, let t = time,
            (1...31).contains(d), (0...23).contains(t[0]), (0...59).contains(t[1]), (0...60).contains(t[2])
        else { return nil }
        return days(fromCivil: y, m, d) * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    private static func days(fromCivil year: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Query-string helpers.
enum QueryString {
    /// Splits a raw query into (raw name, raw value) pairs, in order.
    static func rawPairs(_ query: Substring) -> [(name: Substring, value: Substring)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let eq = item.firstIndex(of: "=") {
                return (item[item.startIndex..<eq], item[item.index(after: eq)...])
            }
            return (item, item[item.endIndex...])
        }
    }

    /// Decoded name → decoded value (the last occurrence wins). `+` is kept literally.
    static func parameters(_ query: Substring) -> [String: String] {
        var out: [String: String] = [:]
        for (name, value) in rawPairs(query) {
            out[percentDecode(name)] = percentDecode(value)
        }
        return out
    }

    /// Percent-decodes `%XX` sequences; malformed sequences are kept literally.
    static func percentDecode<S: StringProtocol>(_ s: S) -> String {
        let utf8 = Array(s.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return String(s) }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count)
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count,
                let hi = hex(utf8[i + 1]), let lo = hex(utf8[i + 2])
            {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(utf8[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// 64-bit FNV-1a, used for stable ETags.
enum FNV1a {
    static func hash(_ s: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    static func hex(_ s: String) -> String {
        let v = String(hash(s), radix: 16)
        return String(repeating: "0", count: max(0, 16 - v.count)) + v
    }
}
