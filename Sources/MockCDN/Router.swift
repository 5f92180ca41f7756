import Foundation
import NIOCore
import NIOHTTP1

/// A deliberate fault that cuts a body short.
enum FaultKind {
    /// Stop sending and keep the connection open (optionally closing it after `stall_ms`).
    case stall
    /// Reset the connection (TCP RST).
    case reset
    /// Close the connection cleanly (FIN).
    case truncate
    /// On HTTP/2, flood the connection with empty `DATA` frames on the stream, without a pause,
    /// for `floodMs`, then close it (see `FrameFlood`); on HTTP/1.1, stall for as long, then close.
    case flood
}

/// Everything the connection handler needs to send one response.
struct ResponsePlan {
    var status: HTTPResponseStatus = .ok
    var headers = HTTPHeaders()
    var body: BodySource = .empty
    /// False for HEAD requests and statuses that have no body (204, 304).
    var sendBody = true
    var delayMs: Int64 = 0
    /// Body bytes per second, if capped.
    var rate: Int?
    var fault: (kind: FaultKind, after: Int)?
    var stallMs: Int64?
    /// How long a `flood` fault lasts.
    var floodMs: Int64 = 10_000
    /// The body bytes each frame of a `flood` carries: 0, empty `DATA` frames (`flood_bytes`).
    var floodFrameBytes = 0
    var keepAlive = true
    var notModified = false
    /// Trailer fields sent after a chunked body (`trailer_bytes`).
    var trailers: HTTPHeaders?
    /// An informational `103 Early Hints` response sent before the response (`early_hints_location`).
    var earlyHints: HTTPHeaders?
    /// On HTTP/2, the code a truncation resets the stream with, rather than `CANCEL`: `NO_ERROR`,
    /// as if the body had ended (`rst_no_error`), or any other (`rst`).
    var streamReset: UInt32?
    /// On HTTP/2, the stream is reset with `streamReset` before any response (`rst` without a
    /// truncation); on HTTP/1.1 the connection closes instead.
    var resetBeforeHead = false
}

/// Turns a request into a ``ResponsePlan`` (no side effects).
enum Router {
    struct Request {
        /// "http" or "https": the scheme of the server's own URLs (redirects).
        var scheme: String
        var method: HTTPMethod
        var uri: String
        var path: Substring
        var query: Substring
        var headers: HTTPHeaders
        var version: HTTPVersion
        var keepAlive: Bool
        /// How many requests for this exact URL the server had before this one (for `fault_once`).
        var earlierRequests = 0
        /// Where `/files/NAME` is served from, if anywhere.
        var filesDirectory: String?
    }

    /// Splits a request target into path and query, accepting absolute-form targets too.
    static func splitTarget(_ uri: String) -> (path: Substring, query: Substring) {
        var target = Substring(uri)
        if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
        if !target.hasPrefix("/"), let schemeEnd = target.range(of: "://") {
            let afterScheme = target[schemeEnd.upperBound...]
            target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        if let q = target.firstIndex(of: "?") {
            return (target[..<q], target[target.index(after: q)...])
        }
        return (target, target[target.endIndex...])
    }

    private struct BadRequest: Error {
        var message: String
    }

    /// Plans the response for `request`; `fallbackHost` ("host:port") is used when there is no Host header.
    static func plan(for request: Request, fallbackHost: String) -> ResponsePlan {
        var plan: ResponsePlan
        do {
            plan = try route(request, fallbackHost: fallbackHost)
        } catch let error as BadRequest {
            plan = htmlPage(status: .badRequest, detail: error.message)
        } catch {
            plan = htmlPage(status: .internalServerError, detail: "\(error)")
        }
        finish(&plan, request: request)
        return plan
    }

    /// Adds the headers every response carries and applies HEAD / keep-alive rules.
    private static func finish(_ plan: inout ResponsePlan, request: Request) {
        plan.headers.replaceOrAdd(name: "Date", value: HTTPDate.format(HTTPDate.now()))
        plan.headers.replaceOrAdd(name: "Server", value: "mock-cdn")
        if request.method == .HEAD || plan.status == .noContent || plan.status == .notModified {
            plan.sendBody = false
            if plan.status == .noContent || plan.status == .notModified {
                plan.headers.remove(name: "Content-Length")
                plan.headers.remove(name: "Transfer-Encoding")
            }
        }
        if !plan.sendBody { plan.fault = nil; plan.rate = nil }
        if request.version.major == 1, request.version.minor == 0 {
            plan.headers.remove(name: "Transfer-Encoding")  // HTTP/1.0 has no chunked coding
        }
        var keepAlive = request.keepAlive
        // Without Content-Length or chunked framing an HTTP/1 body is delimited by closing the
        // connection (`no_length`; always so on HTTP/1.0, which has no chunked coding).
        if plan.sendBody, plan.body.count > 0, !plan.headers.contains(name: "Content-Length"),
            !plan.headers.contains(name: "Transfer-Encoding"), request.version.major == 1
        {
            keepAlive = false
        }
        plan.keepAlive = keepAlive
        if !keepAlive {
            plan.headers.replaceOrAdd(name: "Connection", value: "close")
        } else if request.version.major == 1, request.version.minor == 0 {
            plan.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
    }

    /// A small HTML page with the given status.
    static func htmlPage(status: HTTPResponseStatus, detail: String? = nil) -> ResponsePlan {
        var plan = ResponsePlan()
        plan.status = status
        let title = "\(status.code) \(status.reasonPhrase)"
        let detailHTML = detail.map { "<p>\(escapeHTML($0))</p>" } ?? ""
        let html = "<!DOCTYPE html>\n<html><head><title>\(title)</title></head>"
            + "<body><h1>\(title)</h1>\(detailHTML)<p>mock-cdn</p></body></html>\n"
        let buffer = ByteBuffer(string: html)
        plan.headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        plan.headers.add(name: "Content-Length", value: String(buffer.readableBytes))
        plan.body = .fixed(buffer)
        return plan
    }

    private static func escapeHTML(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    private static func route(_ request: Request, fallbackHost: String) throws -> ResponsePlan {
        if request.path.hasPrefix("/files/"), let directory = request.filesDirectory {
            return try file(request, in: directory)
        }
        guard request.path.hasPrefix("/media/") else {
            return htmlPage(status: .notFound, detail: "No route for \(request.path)")
        }
        let name = request.path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        // A name without an extension (a CDN's opaque id) serves the media its `media` parameter names.
        let ext: String
        if let dot = name.lastIndex(of: ".") {
            ext = name[name.index(after: dot)...].lowercased()
        } else if let named = QueryString.parameters(request.query)["media"] {
            ext = named.lowercased()
        } else {
            return htmlPage(status: .notFound, detail: "No extension in \(request.path)")
        }
        guard let trueContentType = SyntheticMedia.contentType(forExtension: ext) else {
            return htmlPage(status: .notFound, detail: "Unsupported extension .\(ext)")
        }
        guard request.method == .GET || request.method == .HEAD else {
            var plan = htmlPage(status: .methodNotAllowed)
            plan.headers.add(name: "Allow", value: "GET, HEAD")
            return plan
        }

        let params = QueryString.parameters(request.query)
        // A misspelled fault (`dealy_ms`, `stauts`) must not pass for a healthy origin.
        if let unknown = params.keys.lazy.filter({ !isMediaParameter($0) }).min() {
            throw BadRequest(
                message: "Unknown query parameter \(unknown): not one of mock-cdn's (free-form: "
                    + freeFormMediaParameters.sorted().joined(separator: ", ") + ", and any name starting x_)")
        }
        func int(_ key: String, min lower: Int = 0, max upper: Int = .max) throws -> Int? {
            guard let raw = params[key] else { return nil }
            guard let v = Int(raw), v >= lower, v <= upper else {
                throw BadRequest(message: "Invalid value for \(key): \(raw)")
            }
            return v
        }
        func flag(_ key: String) -> Bool {
            guard let raw = params[key]?.lowercased() else { return false }
            return !(raw == "0" || raw == "false" || raw == "no")
        }
        func headerValue(_ key: String) throws -> String? {
            guard let v = params[key] else { return nil }
            if v.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw BadRequest(message: "Control characters in \(key)")
            }
            return v
        }

        // `first_bytes`: the body's size on the first request for this exact URL, `bytes` after
        // it (an origin whose file changed between two fetches).
        let size = try (request.earlierRequests == 0 ? int("first_bytes") : nil) ?? int("bytes") ?? 1024
        let delayMs = try int("delay_ms") ?? 0
        let rate = try int("rate")
        let stallAfter = try int("stall_after")
        let stallMs = try int("stall_ms")
        let resetAfter = try int("reset_after")
        let truncateAfter = try int("truncate_after")
        let floodAfter = try int("flood_after")
        let floodMs = try int("flood_ms", max: 120_000)
        let floodBytes = try int("flood_bytes", max: 16)
        let statusCode = try int("status", min: 100)
        let redirects = try int("redirects")
        // `then_redirect_to`: where this exact URL redirects from its second request on (served as
        // `redirect_to`, or as media, the first time): a redirect whose target changes.
        let laterTarget = try request.earlierRequests > 0 ? headerValue("then_redirect_to") : nil
        let redirectTo = try laterTarget ?? headerValue("redirect_to")
        let contentType = try headerValue("content_type")
        let cacheControl = try headerValue("cache_control")
        let etagParam = try headerValue("etag")
        // `header_bytes`: one `X-Padding` header line of about this many bytes, for servers whose
        // headers outgrow what a client accepts.
        let headerBytes = try int("header_bytes", max: 4 << 20)
        // `set_cookie`: a Set-Cookie line on the response (a redirect's too); `require_cookie`:
        // 403 unless the request sends a cookie of that name.
        let setCookie = try headerValue("set_cookie")
        if let required = try headerValue("require_cookie") {
            let sent = request.headers["Cookie"].flatMap { $0.split(separator: ";") }.map { $0.trimmingCharacters(in: .whitespaces) }
            if !sent.contains(where: { $0.hasPrefix(required + "=") }) {
                return htmlPage(status: .forbidden, detail: "No cookie \(required)")
            }
        }
        // `reject_header`: 400 when the request carries a header of that name (one a client
        // should never send, such as one a stored value smuggled in).
        if let rejected = try headerValue("reject_header"), !request.headers[rejected].isEmpty {
            return htmlPage(status: .badRequest, detail: "Header \(rejected) sent")
        }
        // `require_accept_encoding`: 406 unless the request's Accept-Encoding is exactly this
        // (what a CDN that picks an encoding by it would see).
        if let required = try headerValue("require_accept_encoding"), request.headers["Accept-Encoding"].first != required {
            return htmlPage(status: .notAcceptable, detail: "Accept-Encoding is not \(required)")
        }
        // `require_user_agent`: 403 unless the request's User-Agent contains this text, as a CDN
        // rule that serves only an app's own clients.
        if let required = try headerValue("require_user_agent"), request.headers["User-Agent"].first?.contains(required) != true {
            return htmlPage(status: .forbidden, detail: "User-Agent without \(required)")
        }
        let expires = params["expires"].map { raw -> Int64? in Int64(raw) }
        if case .some(.none) = expires { throw BadRequest(message: "Invalid value for expires") }

        var plan: ResponsePlan
        if let target = redirectTo {
            plan = htmlPage(status: .found)
            plan.headers.add(name: "Location", value: target)
            // A redirect is cacheable only with explicit freshness: `cache_control` gives it some.
            if let cacheControl { plan.headers.add(name: "Cache-Control", value: cacheControl) }
        } else if let hops = redirects, hops >= 1 {
            plan = htmlPage(status: .found)
            let host = request.headers.first(name: "Host") ?? fallbackHost
            let query = request.query.split(separator: "&").map { item -> String in
                let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
                return QueryString.percentDecode(name) == "redirects" ? "redirects=\(hops - 1)" : String(item)
            }.joined(separator: "&")
            plan.headers.add(name: "Location", value: "\(request.scheme)://\(host)\(request.path)?\(query)")
        } else if let code = statusCode, code >= 300, code != 304 {
            guard code <= 999 else { throw BadRequest(message: "Invalid status \(code)") }
            plan = htmlPage(status: HTTPResponseStatus(statusCode: code))
        } else {
            guard statusCode.map({ $0 >= 200 && $0 <= 304 }) ?? true else {
                throw BadRequest(message: "Invalid status \(statusCode!)")
            }
            plan = ResponsePlan()
            let noValidators = flag("no_validators")
            let etag: String = {
                if let e = etagParam {
                    return e.hasPrefix("\"") || e.hasPrefix("W/\"") ? e : "\"\(e)\""
                }
                return "\"\(FNV1a.hex("\(request.path)?bytes=\(size)"))\""
            }()
            if !noValidators {
                plan.headers.add(name: "ETag", value: etag)
                plan.headers.add(name: "Last-Modified", value: HTTPDate.format(HTTPDate.lastModified))
            }
            if !flag("no_cache_headers") {
                plan.headers.add(name: "Cache-Control", value: cacheControl ?? "max-age=300")
                if let e = expires ?? nil {
                    plan.headers.add(name: "Expires", value: HTTPDate.format(e))
                }
            }
            let notModified =
                statusCode == 304
                || ((statusCode ?? 200) == 200 && !noValidators
                    && isNotModified(headers: request.headers, etag: etag))
            if notModified {
                plan.status = .notModified
                plan.notModified = true
                plan.sendBody = false
                // `not_modified_cache_control`: the 304's own Cache-Control, or none when empty
                // (the stored response's directives then stand); `not_modified_etag`: another
                // ETag on the 304 than the one it matched.
                if let replaced = try headerValue("not_modified_cache_control") {
                    plan.headers.remove(name: "Cache-Control")
                    plan.headers.remove(name: "Expires")
                    if !replaced.isEmpty { plan.headers.add(name: "Cache-Control", value: replaced) }
                }
                if let other = try headerValue("not_modified_etag") {
                    plan.headers.replaceOrAdd(name: "ETag", value: other.hasPrefix("\"") ? other : "\"\(other)\"")
                }
            } else {
                plan.status = HTTPResponseStatus(statusCode: statusCode ?? 200)
                plan.headers.add(name: "Content-Type", value: contentType ?? trueContentType)
                if flag("chunked") {
                    plan.headers.add(name: "Transfer-Encoding", value: "chunked")
                } else if plan.status != .noContent, !flag("no_length") {
                    plan.headers.add(name: "Content-Length", value: String(size))
                }
                plan.body = plan.status == .noContent ? .empty : .media(extension: ext, size: size)
                // `content_range`: a Content-Range header, `whole` for one naming every byte of
                // the body (with `status=206`: an origin that answers every request so).
                if let range = try headerValue("content_range") {
                    plan.headers.add(name: "Content-Range", value: range == "whole" ? "bytes 0-\(size - 1)/\(size)" : range)
                }
            }
        }

        if let setCookie { plan.headers.add(name: "Set-Cookie", value: setCookie) }
        // `trailer_bytes`: trailer lines of 1,000 bytes each, about this many bytes in all, after
        // a chunked body (a server whose trailers never end, cut to a size a test can send).
        if let trailerBytes = try int("trailer_bytes", max: 16 << 20), trailerBytes > 0, plan.sendBody {
            plan.headers.remove(name: "Content-Length")
            plan.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
            var trailers = HTTPHeaders()
            for line in 0..<(trailerBytes + 999) / 1000 { trailers.add(name: "X-Trailer-\(line)", value: String(repeating: "t", count: 980)) }
            plan.trailers = trailers
        }
        // `second_content_length`: another `Content-Length` line with this value after the true one
        // (a framing conflict libcurl settles by taking the last).
        if let second = try int("second_content_length"), plan.headers.contains(name: "Content-Length") {
            plan.headers.add(name: "Content-Length", value: String(second))
        }
        // `early_hints_location`: a `103 Early Hints` carrying this `Location` before the response
        // (an informational response, not a redirect).
        if let hinted = try headerValue("early_hints_location") {
            plan.earlyHints = ["Location": hinted, "Link": "<\(hinted)>; rel=preload"]
        }
        if let headerBytes, headerBytes > 0 {
            plan.headers.add(name: "X-Padding", value: String(repeating: "p", count: headerBytes))
        }
        plan.delayMs = Int64(delayMs)
        if let r = rate, r > 0 { plan.rate = r }
        let faults: [(FaultKind, Int?)] = [(.reset, resetAfter), (.truncate, truncateAfter), (.stall, stallAfter), (.flood, floodAfter)]
        // `fault_once`: a transient fault, on the first request for this exact URL only.
        let faultApplies = !flag("fault_once") || request.earlierRequests == 0
        for case let (kind, after?) in faults where faultApplies && after < plan.body.count {
            if plan.fault == nil || after < plan.fault!.after { plan.fault = (kind, after) }
        }
        if plan.fault?.kind == .stall, let ms = stallMs { plan.stallMs = Int64(ms) }
        // `flood_after`: after that many body bytes, a flood of frames for `flood_ms` (10 s).
        if let floodMs { plan.floodMs = Int64(floodMs) }
        // `flood_bytes`: each flooding `DATA` frame carries that many body bytes (at most 16).
        if let floodBytes { plan.floodFrameBytes = floodBytes }
        if flag("rst_no_error") { plan.streamReset = 0 }
        // `rst`: an HTTP/2 error code, by name (`PROTOCOL_ERROR`) or number, that resets the
        // stream where `truncate_after` cuts it, or before the response without one (a server
        // that refuses or rejects the request); with `fault_once`, the first request only.
        if let code = try streamResetCode(params["rst"]), faultApplies {
            plan.streamReset = code
            plan.resetBeforeHead = plan.fault?.kind != .truncate
        }
        return plan
    }

    /// The query parameters `/media/` reads.
    static let mediaParameters: Set<String> = [
        "media", "bytes", "first_bytes", "delay_ms", "rate", "stall_after", "stall_ms", "reset_after", "truncate_after",
        "flood_after", "flood_ms", "flood_bytes", "fault_once", "status", "content_type", "chunked", "no_length",
        "rst_no_error", "rst", "trailer_bytes", "early_hints_location", "second_content_length",
        "not_modified_cache_control", "not_modified_etag", "redirects", "redirect_to", "then_redirect_to",
        "cache_control", "no_cache_headers", "expires", "no_validators", "etag", "header_bytes", "set_cookie",
        "require_cookie", "require_user_agent", "require_accept_encoding", "reject_header", "content_range",
    ]

    /// Parameters `/media/` accepts and ignores: OneSignal's `filename` type hint, `padding` (a
    /// longer URL), and cache-busters (`i`, `n`, `v`); so is any name starting `x_`.
    static let freeFormMediaParameters: Set<String> = ["filename", "padding", "i", "n", "v"]

    /// Whether `/media/` knows the query parameter `name` (every other is a 400 naming it).
    static func isMediaParameter(_ name: String) -> Bool {
        mediaParameters.contains(name) || freeFormMediaParameters.contains(name) || name.hasPrefix("x_")
    }

    /// A file of `directory` as it is: `/files/NAME`, NAME a plain file name.
    private static func file(_ request: Request, in directory: String) throws -> ResponsePlan {
        let name = String(request.path.dropFirst("/files/".count))
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            return htmlPage(status: .notFound, detail: "No file \(name)")
        }
        let params = QueryString.parameters(request.query)
        func int(_ key: String) throws -> Int? {
            guard let raw = params[key] else { return nil }
            guard let value = Int(raw), value >= 0 else { throw BadRequest(message: "Invalid value for \(key): \(raw)") }
            return value
        }
        let encoding = params["encoding"]
        let encodedSuffix = ["gzip": ".gz", "deflate": ".zz"]
        let path = directory + "/" + name + (encoding.flatMap { encodedSuffix[$0] } ?? "")
        guard var bytes = FileManager.default.contents(atPath: path) else {
            return htmlPage(status: .notFound, detail: "No file \(name)")
        }
        // `cut_at`: the file (as encoded) cut to its first N bytes at the origin, its framing
        // honest about the cut.
        if let cut = try int("cut_at"), cut < bytes.count { bytes = bytes.prefix(cut) }
        var plan = ResponsePlan()
        plan.headers.add(name: "Content-Type", value: params["content_type"] ?? "application/octet-stream")
        // Another coding labels the file as it is (`utf-8`, `binary`: an origin's mistake).
        if let encoding { plan.headers.add(name: "Content-Encoding", value: encoding) }
        if params["chunked"] == "1" {
            plan.headers.add(name: "Transfer-Encoding", value: "chunked")
        } else if params["no_length"] != "1" {
            plan.headers.add(name: "Content-Length", value: String(bytes.count))
        }
        plan.headers.add(name: "Cache-Control", value: "max-age=300")
        plan.body = .fixed(ByteBuffer(bytes: bytes))
        if let after = try int("truncate_after"), after < bytes.count { plan.fault = (.truncate, after) }
        if params["rst_no_error"] == "1" { plan.streamReset = 0 }
        return plan
    }

    /// The HTTP/2 error codes (RFC 9113 §7) by name.
    static let http2ErrorCodes: [String: UInt32] = [
        "NO_ERROR": 0x0, "PROTOCOL_ERROR": 0x1, "INTERNAL_ERROR": 0x2, "FLOW_CONTROL_ERROR": 0x3,
        "SETTINGS_TIMEOUT": 0x4, "STREAM_CLOSED": 0x5, "FRAME_SIZE_ERROR": 0x6, "REFUSED_STREAM": 0x7,
        "CANCEL": 0x8, "COMPRESSION_ERROR": 0x9, "CONNECT_ERROR": 0xA, "ENHANCE_YOUR_CALM": 0xB,
        "INADEQUATE_SECURITY": 0xC, "HTTP_1_1_REQUIRED": 0xD,
    ]

    /// The `rst` parameter's code: a name of `http2ErrorCodes` or a number.
    private static func streamResetCode(_ raw: String?) throws -> UInt32? {
        guard let raw else { return nil }
        guard let code = http2ErrorCodes[raw.uppercased()] ?? UInt32(raw) else {
            throw BadRequest(message: "Invalid value for rst: \(raw)")
        }
        return code
    }

    /// Evaluates If-None-Match (preferred) or If-Modified-Since against the resource's validators.
    static func isNotModified(headers: HTTPHeaders, etag: String) -> Bool {
        let inm = headers[canonicalForm: "If-None-Match"]
        if !inm.isEmpty {
            let mine = weak(etag)
            return inm.contains { candidate in
                let c = candidate.trimmedOWS()
                return c == "*" || weak(c) == mine
            }
        }
        if let ims = headers.first(name: "If-Modified-Since"), let since = HTTPDate.parse(ims) {
            return since >= HTTPDate.lastModified
        }
        return false
    }

    private static func weak(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}

extension Substring {
    fileprivate func trimmedOWS() -> String {
        String(self.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
