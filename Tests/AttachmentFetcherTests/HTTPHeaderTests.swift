@testable import AttachmentFetcher
import Foundation
import Testing

@Suite("Cache: response headers as the cache reads them")
struct HTTPHeaderTests {
    @Test("Only line feeds end a line: a vertical tab, form feed or NEL inside a value stays there; an ETag over 1,024 bytes is no validator; Vary: * is never stored")
    func valuesKeepTheirCharacters() {
        let block = "ETag: \"a\u{0B}b\u{0C}c\u{85}d\"\r\nX-Next: 1\r\n"
        #expect(HTTPHeader.parse(block) == [HTTPHeader(name: "etag", value: "\"a\u{0B}b\u{0C}c\u{85}d\""), HTTPHeader(name: "x-next", value: "1")])
        let long = HTTPFreshness(headers: [HTTPHeader(name: "etag", value: "\"" + String(repeating: "e", count: 1100) + "\"")])
        #expect(long.etag == nil)
        #expect(HTTPFreshness(headers: [HTTPHeader(name: "vary", value: "Accept, *")]).noStore)
        #expect(!HTTPFreshness(headers: [HTTPHeader(name: "vary", value: "Accept-Encoding")]).noStore)
    }

    @Test("The cache reads Cache-Control as the shared cache it is: private is never stored, s-maxage wins over max-age and Expires, no-cache over both")
    func sharedCacheDirectives() {
        func freshness(_ cacheControl: String, expires: String? = nil) -> HTTPFreshness {
            HTTPFreshness(headers: [HTTPHeader(name: "cache-control", value: cacheControl)] + (expires.map { [HTTPHeader(name: "expires", value: $0)] } ?? []))
        }
        #expect(freshness("private, max-age=3600").noStore)
        #expect(freshness("max-age=3600, PRIVATE=\"set-cookie\"").noStore)
        #expect(!freshness("public, max-age=3600").noStore)
        #expect(freshness("max-age=3600, s-maxage=0").lifetime == .zero)
        #expect(freshness("s-maxage=120, max-age=0").lifetime == .seconds(120))
        #expect(freshness("s-maxage=120", expires: "Thu, 01 Jan 1970 00:00:00 GMT").lifetime == .seconds(120))
        #expect(freshness("s-maxage=soon, max-age=3600").lifetime == .zero)
        #expect(freshness("no-cache, s-maxage=120").lifetime == .zero)
        #expect(freshness("max-age=60").lifetime == .seconds(60))
    }

    @Test("HTTP dates in their three forms, from many threads at once; anything else is no date, and no text stops the process")
    func httpDates() async {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06 08:49:37 UTC
        let forms = ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
        for form in forms { #expect(HTTPDate.parse(form) == expected, "\(form)") }
        for garbage in [
            "0", "", "-1", "Sun, 06 Nov 1994", "tomorrow", "Sun, 30 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:+9:37 GMT",
            // A combining mark after the day's name: Foundation's DateFormatter stopped the
            // process on it ("Incorrect range"), for any response whose Expires said so.
            "Sun\u{31A}vvvvvt; filename*=g\"", "Sun\u{31A}, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{0}",
        ] {
            #expect(HTTPDate.parse(garbage) == nil, "\(garbage.debugDescription)")
        }
        // Names in any case, and UTC for GMT, as servers write them.
        #expect(HTTPDate.parse("sun, 06 nov 1994 08:49:37 UTC") == expected)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 gmt") == expected)
        // RFC 850's two-digit year: the most recent year with those digits that is not more
        // than 50 years ahead (RFC 9110 5.6.7).
        let in2026 = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(HTTPDate.parse("Tuesday, 06-Nov-75 08:49:37 GMT", now: in2026) == HTTPDate.parse("Thu, 06 Nov 2075 08:49:37 GMT"))
        #expect(HTTPDate.parse("Sunday, 06-Nov-77 08:49:37 GMT", now: in2026) == HTTPDate.parse("Sun, 06 Nov 1977 08:49:37 GMT"))
        // An Expires that is no date means already expired.
        #expect(HTTPFreshness(headers: [HTTPHeader(name: "expires", value: "0")]).lifetime == .zero)
        let now = Date(timeIntervalSince1970: 784_111_777 - 600)
        #expect(HTTPFreshness(headers: [HTTPHeader(name: "expires", value: forms[0])], now: now).lifetime == .seconds(600))
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    (0..<200).reduce(0) { count, index in count + (HTTPDate.parse(forms[(task + index) % 3]) == expected ? 0 : 1) }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }

    @Test("A name ends at the first colon, even one a combining mark follows (one Character with it, in Swift)")
    func colonBeforeCombiningMark() {
        #expect(HTTPHeader.parse("X-A:\u{301}b\r\nCache-Control:\u{301}no-store:x\r\n") == [
            HTTPHeader(name: "x-a", value: "\u{301}b"), HTTPHeader(name: "cache-control", value: "\u{301}no-store:x"),
        ])
    }

    @Test("Names are lowercased, values trimmed, lines without a colon skipped, any line ending")
    func parsesABlock() {
        let block = "HTTP/1.1 200 OK\r\nCache-Control:  max-age=60 \r\nETag:\t\"abc\"\t\r\nX-Empty:   \r\nLast-Modified: Tue, 24 Nov 2026 05:00:00 GMT\n\r\n"
        #expect(
            HTTPHeader.parse(block) == [
                HTTPHeader(name: "cache-control", value: "max-age=60"),
                HTTPHeader(name: "etag", value: "\"abc\""),
                HTTPHeader(name: "x-empty", value: ""),
                HTTPHeader(name: "last-modified", value: "Tue, 24 Nov 2026 05:00:00 GMT"),
            ])
    }

    @Test(
        "Values are trimmed of exactly what CharacterSet.whitespaces holds",
        arguments: [
            " a ", "\ta b\t", "\u{A0}v\u{A0}", "\u{2003}x\u{3000}", "\u{202F}\u{205F}", "\u{200B}zero-width\u{200B}",
            "\u{1680}ogham", "\u{180E}mongolian\u{180E}", " \u{200C}\u{2000}\u{200A}", "é\u{301} ", " \u{301}mark", "\u{FEFF}bom", "", "   ", "a\u{0}",
        ])
    func trimsAsFoundation(_ value: String) {
        let parsed = HTTPHeader.parse("X-Test:\(value)")
        #expect(parsed == [HTTPHeader(name: "x-test", value: value.trimmingCharacters(in: .whitespaces))])
    }

    @Test("Every scalar of the Basic Multilingual Plane is trimmed or kept as Foundation would")
    func trimsAsFoundationEverywhere() {
        var differing: [String] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value), !Character(scalar).isNewline else { continue }
            // After a space, so that a combining scalar cannot join the colon.
            let text = " \(scalar)a\(scalar)"
            let parsed = HTTPHeader.parse("X:" + text).first?.value
            if parsed != text.trimmingCharacters(in: .whitespaces) { differing.append(String(value, radix: 16)) }
        }
        #expect(differing == [])
    }

    @Test(
        "A body behind redirects is fresh no longer than each redirect allows, and keeps no validators",
        arguments: [
            (301, "", Duration.seconds(600)), (308, "", .seconds(600)),
            (302, "", .zero), (303, "", .zero), (307, "", .zero), (300, "", .zero),
            (302, "Cache-Control: max-age=60\r\n", .seconds(60)), (301, "Cache-Control: max-age=9000\r\n", .seconds(600)),
        ])
    func redirectBounds(status: Int, headers: String, lifetime: Duration) {
        let target = HTTPFreshness(headers: HTTPHeader.parse("Cache-Control: max-age=600\r\nETag: \"a\"\r\nLast-Modified: x\r\n"))
        let bounded = target.bounded(by: [RedirectResponse(status: status, headerBlock: headers)], defaultLifetime: .seconds(900))
        #expect(bounded.lifetime == lifetime && !bounded.noStore)
        #expect(bounded.etag == nil && bounded.lastModified == nil)
        #expect(target.bounded(by: [], defaultLifetime: .seconds(900)) == target)
        let privateRedirect = target.bounded(
            by: [RedirectResponse(status: 301, headerBlock: ""), RedirectResponse(status: 302, headerBlock: "Cache-Control: no-store\r\n")],
            defaultLifetime: .seconds(900))
        #expect(privateRedirect.noStore)
        // A target that says nothing gets the default; a redirect's longer max-age does not stretch it.
        let silent = HTTPFreshness(headers: [])
        let year = [RedirectResponse(status: 302, headerBlock: "Cache-Control: max-age=31536000\r\n")]
        #expect(silent.bounded(by: year, defaultLifetime: .seconds(900)).lifetime == .seconds(900))
        #expect(silent.bounded(by: [RedirectResponse(status: 301, headerBlock: "")], defaultLifetime: .seconds(900)).lifetime == nil)
    }

    @Test("An error response's Content-Type is quoted only in the shape a media type has")
    func errorResponseContentType() {
        #expect(TransferFailure.ErrorResponse.mediaType(of: "Image/PNG; charset=binary") == "image/png")
        #expect(TransferFailure.ErrorResponse.mediaType(of: "text/html") == "text/html")
        for hostile in ["text/html\u{1B}[31m", "image", "a/b/c", "/png", "image/ png", "image/pñg", "image/" + String(repeating: "x", count: 100), "", nil] {
            #expect(TransferFailure.ErrorResponse.mediaType(of: hostile) == nil, "\(String(describing: hostile))")
        }
    }
}
