// The one Swift file that touches libcurl: typed wrappers of the easy and multi handles, result
// codes, and the C callbacks. Every pointer stays in this file; callers see safe Swift. It is
// longer than the library's other files (about 530 lines) on purpose: splitting it would spread
// the unsafe code over several files, and one file to audit is the point of the C boundary.

import CCurl
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A libcurl easy-interface result (`CURLcode`), with names for the codes this package acts on.
struct CurlCode: Hashable, Sendable, CustomStringConvertible {
    /// The raw `CURLcode` value.
    let rawValue: UInt32

    init(_ code: CURLcode) { rawValue = code.rawValue }

    static let ok = CurlCode(CURLE_OK)
    static let unsupportedProtocol = CurlCode(CURLE_UNSUPPORTED_PROTOCOL)
    static let urlMalformed = CurlCode(CURLE_URL_MALFORMAT)
    static let httpReturnedError = CurlCode(CURLE_HTTP_RETURNED_ERROR)
    static let writeError = CurlCode(CURLE_WRITE_ERROR)
    static let operationTimedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    static let tooManyRedirects = CurlCode(CURLE_TOO_MANY_REDIRECTS)
    static let fileSizeExceeded = CurlCode(CURLE_FILESIZE_EXCEEDED)
    static let http2FramingError = CurlCode(CURLE_HTTP2)
    static let http2StreamError = CurlCode(CURLE_HTTP2_STREAM)
    static let sendError = CurlCode(CURLE_SEND_ERROR)
    static let receiveError = CurlCode(CURLE_RECV_ERROR)
    static let badContentEncoding = CurlCode(CURLE_BAD_CONTENT_ENCODING)
    static let couldNotConnect = CurlCode(CURLE_COULDNT_CONNECT)
    static let couldNotResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    static let gotNothing = CurlCode(CURLE_GOT_NOTHING)
    static let loginDenied = CurlCode(CURLE_LOGIN_DENIED)
    static let outOfMemory = CurlCode(CURLE_OUT_OF_MEMORY)
    static let peerFailedVerification = CurlCode(CURLE_PEER_FAILED_VERIFICATION)

    /// libcurl's own one-line explanation of the code.
    var description: String { String(cString: curl_easy_strerror(CURLcode(rawValue))) }
}

/// Process-wide libcurl set-up, done once before the first handle is made.
enum CurlLibrary {
    /// `curl_global_init` is not thread-safe; a `static let` runs it exactly once. With
    /// `CURLOPT_NOSIGNAL` libcurl no longer ignores SIGPIPE itself, so the process does.
    static let initialized: Bool = {
        _ = signal(SIGPIPE, SIG_IGN)
        return curl_global_init(CCurl_global_all()) == CURLE_OK
    }()
}

/// libcurl's URL parser.
enum CurlURLParser {
    /// Whether libcurl takes `proxy` as a proxy URL (`CURLOPT_PROXY` parses it so).
    static func parsesAsProxy(_ proxy: String) -> Bool {
        CurlLibrary.initialized && CCurl_proxy_parses(proxy) != 0
    }
}

/// Receives a response's header lines and body chunks from libcurl's callbacks.
///
/// The body goes to `file` as it arrives (decoded, when the origin sent it with a
/// `Content-Encoding`); its first bytes are also kept in `window` so the type can be sniffed
/// without reading the file back. After every chunk the `delegate` decides whether the transfer
/// goes on; `false` aborts it (libcurl then reports `CURLE_WRITE_ERROR`).
final class CurlResponseSink {
    /// Where the body is written.
    var file: FileDescriptor?
    /// The bytes the type is decided from.
    private(set) var window: SniffWindow
    /// Body bytes received so far, after decoding.
    private(set) var bytesReceived = 0
    /// The latest response's `Content-Encoding` (other than `identity`), as it named it ("gzip"):
    /// its Content-Length then counts encoded bytes, not the body's, and nothing vouches for the
    /// decoded body's end (libcurl 7.88 does not check that the compressed stream reached its end).
    private(set) var contentCoding: String?
    /// Whether the latest response announced a `Content-Encoding` (other than `identity`).
    var contentEncoded: Bool { contentCoding != nil }
    /// Whether the latest response's body came in HTTP/1.1 chunked framing (`Transfer-Encoding:
    /// chunked`, and no other coding), whose end libcurl checks: a body cut short of the last
    /// chunk fails.
    private(set) var chunked = false
    /// Whether the latest response has a `Transfer-Encoding` line.
    private var transferCoded = false
    /// The header block of the latest response, as received; reset on every new status line,
    /// so after redirects only the final response's remains. Parsed only when asked for.
    private var headerBytes: [UInt8] = []

    /// The schemes of the redirects followed so far: each response's `Location` counts once a
    /// further response arrives (libcurl followed it).
    private(set) var redirectSchemes: RedirectSchemes = []
    /// The latest response's `Location` target, until the next response shows it was followed.
    private var pendingRedirect: RedirectSchemes = []
    /// Whether the latest response's `Location` names a scheme other than http and https (which
    /// libcurl may not even parse: the transfer's URL is then still the one before it).
    private(set) var locationLeavesHTTP = false
    /// Whether a redirect's `Location` writes its port as 0: the transfer was stopped.
    private(set) var redirectToPortZero = false
    /// Whether the latest response's header lines, trailers included, passed
    /// `maximumHeaderBytes`: the transfer was stopped.
    private(set) var headersOverflowed = false
    /// The latest response's `Content-Length` value, trimmed, while it has one.
    private var contentLength: [UInt8]?
    /// Whether the latest response had two different `Content-Length` values (RFC 9112 6.3: an
    /// unrecoverable error; libcurl 7.88 takes the last, and a body cut to it looked whole): the
    /// transfer was stopped.
    private(set) var conflictingLengths = false
    /// The most a response's header lines may hold, trailers after a chunked body included:
    /// libcurl's own limit on a response's headers (300 KiB), which its 7.88 does not apply to
    /// trailers, so that a server sending trailers without end cannot grow memory without end.
    static let maximumHeaderBytes = 300 * 1024
    /// The redirects followed so far, each with its caching header lines (they bound how long
    /// the cache may keep the body under the URL asked for).
    private(set) var redirects: [RedirectResponse] = []
    /// The latest response's status code (0 before the first status line).
    private var status = 0
    /// Whether a redirect that libcurl followed set a cookie (its next hop may have sent it).
    private(set) var redirectSetCookie = false
    /// Whether the latest response's header block has a `Set-Cookie` line.
    private var pendingCookie = false

    /// The latest response's header lines, as text.
    var headerBlock: String { String(decoding: headerBytes, as: UTF8.self) }
    /// The error of a failed write to `file`, if one failed.
    private(set) var writeFailure: Errno?
    /// Asked after each chunk whether to go on.
    weak var delegate: (any CurlResponseSinkDelegate)?
    init(sniffBytes: Int) {
        window = SniffWindow(capacity: sniffBytes)
    }

    /// Forgets the last response (keeping the buffers' capacity) for the handle's next transfer.
    fileprivate func reset() {
        file = nil
        delegate = nil
        writeFailure = nil
        bytesReceived = 0
        contentCoding = nil
        chunked = false
        transferCoded = false
        redirectSchemes = []
        pendingRedirect = []
        locationLeavesHTTP = false
        redirectToPortZero = false
        headersOverflowed = false
        contentLength = nil
        conflictingLengths = false
        redirects = []
        status = 0
        redirectSetCookie = false
        pendingCookie = false
        window.reset()
        headerBytes.removeAll(keepingCapacity: true)
    }

    fileprivate func consume(_ chunk: UnsafeRawBufferPointer) -> Bool {
        if !window.isFull { window.consume(chunk) }
        bytesReceived += chunk.count
        guard delegate?.responseSinkShouldContinue(self) ?? false else { return false }
        guard let file else { return false }
        do {
            _ = try file.writeAll(chunk)
        } catch let error as Errno {
            writeFailure = error
            return false
        } catch {
            writeFailure = .ioError
            return false
        }
        return true
    }

    /// Takes one header line; `false` stops the transfer (its headers passed `maximumHeaderBytes`,
    /// two `Content-Length` values differ, or a redirect names port 0).
    fileprivate func consumeHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        if line.starts(with: "HTTP/".utf8) {
            // A new response after a 3xx: libcurl followed that redirect. After an informational
            // response (a 103's `Location` is a hint), nothing was followed.
            if RedirectResponse.isRedirect(status) {
                redirects.append(RedirectResponse(status: status, headerBlock: Self.cachingLines(of: headerBytes)))
                if pendingCookie { redirectSetCookie = true }
                redirectSchemes.formUnion(pendingRedirect)
            }
            pendingCookie = false
            status = Self.statusCode(of: line)
            headerBytes.removeAll(keepingCapacity: true)
            contentCoding = nil
            chunked = false
            transferCoded = false
            pendingRedirect = []
            locationLeavesHTTP = false
            contentLength = nil
        } else {
            guard headerBytes.count + line.count <= Self.maximumHeaderBytes else {
                headersOverflowed = true
                return false
            }
            headerBytes.append(contentsOf: line)
            if let coding = Self.value(of: line, named: "content-encoding:") {
                // A coding other than `identity`.
                if !coding.isEmpty, !coding.elementsEqual("identity".utf8, by: { $0 | 0x20 == $1 }) {
                    // Named in a failure's detail: printable, and short whatever the server sent.
                    let named = String(decoding: coding.prefix(32).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
                    if let earlier = contentCoding {
                        if earlier.utf8.count < 64 { contentCoding = earlier + ", " + named }
                    } else {
                        contentCoding = named
                    }
                }
            } else if let codings = Self.value(of: line, named: "transfer-encoding:") {
                // A second line adds codings to the first: chunked alone, in one line, vouches.
                chunked = !transferCoded && codings.elementsEqual("chunked".utf8, by: { $0 | 0x20 == $1 })
                transferCoded = true
            } else if let location = Self.value(of: line, named: "location:") {
                pendingRedirect = RedirectSchemes.target(ofLocation: location)
                locationLeavesHTTP = RedirectSchemes.namesOtherScheme(location)
                // Stopped before libcurl follows it (a 3xx's `Location` only).
                if RedirectResponse.isRedirect(status), RedirectSchemes.namesPortZero(location) {
                    redirectToPortZero = true
                    return false
                }
            } else if let length = Self.value(of: line, named: "content-length:") {
                if let earlier = contentLength, earlier != length {
                    conflictingLengths = true
                    return false
                }
                contentLength = length
            } else if Self.value(of: line, named: "set-cookie:") != nil {
                pendingCookie = true
            }
        }
        return true
    }

    /// The lines of a header block that say how long a response may be kept (`Cache-Control`,
    /// `Expires`, `Age`), at most 4 KiB of them: all a redirect's block is kept for, so that a
    /// chain of redirects with large headers costs a transfer little memory.
    private static func cachingLines(of block: [UInt8]) -> String {
        let names = ["cache-control:", "expires:", "age:"].map { Array($0.utf8) }
        var kept: [UInt8] = []
        for line in block.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard names.contains(where: { name in line.count > name.count && zip(line, name).allSatisfy { $0 | 0x20 == $1 } }),
                kept.count + line.count < 4096
            else { continue }
            kept.append(contentsOf: line)
            kept.append(UInt8(ascii: "\n"))
        }
        return String(decoding: kept, as: UTF8.self)
    }

    /// The status code of a status line ("HTTP/1.1 302 Found"); 0 when it has none.
    private static func statusCode(of line: UnsafeRawBufferPointer) -> Int {
        let digits = line.drop { $0 != 0x20 }.dropFirst().prefix { (0x30...0x39).contains($0) }
        return digits.count == 3 ? digits.reduce(0) { $0 * 10 + Int($1 - 0x30) } : 0
    }

    /// The value of a header line whose name is `name` (lower-case, with its colon; matched in
    /// any case), without the blanks and line ending around it; `nil` for another header.
    private static func value(of line: UnsafeRawBufferPointer, named name: String) -> [UInt8]? {
        let name = name.utf8
        guard line.count > name.count, zip(line, name).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        return Array(line.dropFirst(name.count).drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

/// Decides, chunk by chunk, whether a response body may keep coming.
protocol CurlResponseSinkDelegate: AnyObject {
    /// Called after `sink.prefix` and `sink.bytesReceived` include the new chunk, before it is
    /// written. Return `false` to abort the transfer.
    func responseSinkShouldContinue(_ sink: CurlResponseSink) -> Bool
}

private let curlWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return CCurl_write_abort() }
    let sink = Unmanaged<CurlResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    return sink.consume(UnsafeRawBufferPointer(start: data, count: length)) ? length : CCurl_write_abort()
}

private let curlHeaderCallback: curl_write_callback = { data, size, count, userdata in
    let length = size * count
    guard let userdata else { return length }
    let sink = Unmanaged<CurlResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    return sink.consumeHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : CCurl_write_abort()
}

private let curlSocketOpenedCallback: curl_sockopt_callback = { clientp, socket, _ in
    if let clientp { Unmanaged<CurlSockets>.fromOpaque(clientp).takeUnretainedValue().opened(socket) }
    return CURL_SOCKOPT_OK
}

private let curlCloseSocketCallback: curl_closesocket_callback = { clientp, socket in
    if let clientp { Unmanaged<CurlSockets>.fromOpaque(clientp).takeUnretainedValue().closing(socket) }
    return Syscalls.closeSocket(socket) ? 0 : 1
}

/// The sockets libcurl has open for one multi handle's connections, from the moment it opened
/// one (`CURLOPT_SOCKOPTFUNCTION`) until it closes it (`CURLOPT_CLOSESOCKETFUNCTION`, which
/// takes it out of the table first, under the table's lock), so that another thread may act on
/// them (`EngineHoldBreaker`): while `withOpenSockets` runs, none of them can be closed, so a
/// number in the table is libcurl's socket, never a descriptor the system handed out again
/// after a close.
///
/// Owned by the `CurlMulti`, whose connections keep a pointer to it until
/// `curl_multi_cleanup` has closed them.
final class CurlSockets: Sendable {
    /// One of libcurl's sockets; `serial` tells apart two sockets that had the same number.
    struct Socket: Sendable, Hashable {
        var descriptor: Int32
        var serial: UInt64
    }

    private struct State {
        var open: [Int32: UInt64] = [:]
        var opened: UInt64 = 0
    }

    private let state = Locked(State())

    fileprivate func opened(_ descriptor: Int32) {
        state.withLock { state in
            state.opened += 1
            state.open[descriptor] = state.opened
        }
    }

    fileprivate func closing(_ descriptor: Int32) {
        state.withLock { state in _ = state.open.removeValue(forKey: descriptor) }
    }

    /// Runs `body` with the sockets open now, none of which is closed before it returns.
    func withOpenSockets<Result>(_ body: ([Socket]) -> Result) -> Result {
        state.withLock { state in
            body(state.open.map { Socket(descriptor: $0.key, serial: $0.value) }.sorted { $0.serial < $1.serial })
        }
    }
}

/// One libcurl easy handle (`CURL *`) and the sink its callbacks feed. Not thread-safe: it is
/// made, driven, reused and freed on the transfer engine's thread.
///
/// A handle can serve many transfers one after another (`reset()` between them), as libcurl
/// recommends: its allocations are then made once, not per transfer.
final class CurlEasy {
    fileprivate let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var requestHeaders: UnsafeMutablePointer<curl_slist>?
    /// The data of the socket-opening callback: the address policy and what it refused.
    private let socketGuard: UnsafeMutablePointer<CCurl_socket_guard>
    /// The policy `socketGuard` points into, kept alive while the handle may use it.
    private var policy: CurlAddressPolicy?
    /// A list option's strings (`CURLOPT_RESOLVE`), kept alive while the handle may read them.
    private var lists: [CurlStringList] = []
    /// The sink that receives this handle's response.
    let sink: CurlResponseSink

    /// A handle whose body and headers go to a sink keeping `sniffBytes` bytes to decide the
    /// type from; `nil` if libcurl could not allocate one.
    init?(sniffBytes: Int) {
        guard CurlLibrary.initialized, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        sink = CurlResponseSink(sniffBytes: sniffBytes)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        socketGuard = .allocate(capacity: 1)
        socketGuard.initialize(to: Self.socketGuard(policy: nil, handle: handle))
        installCallbacks()
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(requestHeaders)
        errorBuffer.deallocate()
        socketGuard.deallocate()
    }

    /// Makes the handle as good as new for another transfer (`curl_easy_reset`: every option
    /// back to its default, the sink emptied), keeping its allocations. Call it only when the
    /// handle is not in a multi handle.
    func reset() {
        curl_easy_reset(handle)
        curl_slist_free_all(requestHeaders)
        requestHeaders = nil
        errorBuffer[0] = 0
        sink.reset()
        socketGuard.pointee = Self.socketGuard(policy: nil, handle: handle)
        policy = nil
        lists = []
        installCallbacks()
    }

    private func installCallbacks() {
        // Every socket goes through the address policy; with no policy set, none opens.
        _ = CCurl_easy_install_socket_guard(handle, socketGuard)
        let context = Unmanaged.passUnretained(sink).toOpaque()
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = CCurl_easy_setopt_write_function(handle, curlWriteCallback)
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = CCurl_easy_setopt_header_function(handle, curlHeaderCallback)
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
    }

    /// Adds request header lines ("If-None-Match: \"abc\""); libcurl reads the list until the
    /// handle is freed, so the handle owns it.
    func setRequestHeaders(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        for line in lines { requestHeaders = curl_slist_append(requestHeaders, line) }
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, requestHeaders)
    }

    /// Enters the sockets this handle's next transfer opens in `sockets`, and has their closing
    /// take them out again (a connection keeps the closing callback for its whole life, past the
    /// transfer).
    func trackSockets(in sockets: CurlSockets) {
        let table = Unmanaged.passUnretained(sockets).toOpaque()
        _ = CCurl_easy_setopt_sockopt_function(handle, curlSocketOpenedCallback)
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_SOCKOPTDATA, table)
        _ = CCurl_easy_setopt_closesocket_function(handle, curlCloseSocketCallback)
        _ = CCurl_easy_setopt_pointer(handle, CURLOPT_CLOSESOCKETDATA, table)
    }

    /// Checks every address this handle's next transfer connects to against `policy`.
    func guardConnections(with policy: CurlAddressPolicy) {
        self.policy = policy
        socketGuard.pointee = Self.socketGuard(policy: policy.pointer, handle: handle)
    }

    /// A socket guard with its counts cleared, checking `policy` and keeping sockets below
    /// `FileDescriptorBudget.ceiling()` as it is now.
    private static func socketGuard(policy: UnsafePointer<CCurl_address_policy>?, handle: UnsafeMutableRawPointer) -> CCurl_socket_guard {
        CCurl_socket_guard(
            policy: policy, handle: handle, hop: 0, refused: 0, opened: 0, open_error: 0,
            descriptor_ceiling: FileDescriptorBudget.ceiling())
    }

    /// The redirect hop (0 for the first request) that `refusedAddresses`, `openedSockets` and
    /// `socketOpenError` are about: the latest that opened connections.
    var guardedHop: Int { Int(socketGuard.pointee.hop) }

    /// How many candidate addresses the policy refused during this transfer.
    var refusedAddresses: Int { Int(socketGuard.pointee.refused) }

    /// How many sockets this transfer opened (to permitted addresses).
    var openedSockets: Int { Int(socketGuard.pointee.opened) }

    /// The `errno` of the last socket that could not be opened during this transfer, if any.
    var socketOpenError: Int32? {
        let error = socketGuard.pointee.open_error
        return error == 0 ? nil : error
    }

    /// Sets a string-list option (`CURLOPT_RESOLVE`); the handle keeps `list` alive.
    func set(_ option: CURLoption, _ list: CurlStringList) {
        lists.append(list)
        _ = CCurl_easy_setopt_pointer(handle, option, list.head)
    }

    /// A number to find this handle by when the multi handle reports it done.
    var key: UInt { UInt(bitPattern: handle) }

    /// Sets a `long` option.
    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> CurlCode {
        CurlCode(CCurl_easy_setopt_long(handle, option, value))
    }

    /// Sets a `curl_off_t` option (the `*_LARGE` ones).
    @discardableResult
    func set(_ option: CURLoption, large value: Int64) -> CurlCode {
        CurlCode(CCurl_easy_setopt_off_t(handle, option, curl_off_t(value)))
    }

    /// Sets a string option; libcurl keeps its own copy.
    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> CurlCode {
        CurlCode(CCurl_easy_setopt_string(handle, option, value))
    }

    /// Sets an on/off option.
    @discardableResult
    func set(_ option: CURLoption, _ value: Bool) -> CurlCode {
        set(option, value ? 1 : 0)
    }

    /// The last response's HTTP status, 0 before one arrived.
    var responseCode: Int { longInfo(CURLINFO_RESPONSE_CODE) }

    /// The bytes of the requests this handle sent (`CURLINFO_REQUEST_SIZE`): 0 when none went
    /// out (no address permitted, no connection, a TLS handshake that failed).
    var requestBytes: Int { longInfo(CURLINFO_REQUEST_SIZE) }

    /// The proxy's answer to the tunnel request (`CONNECT`), 0 without one.
    var proxyConnectCode: Int { longInfo(CURLINFO_HTTP_CONNECTCODE) }

    /// Whether the last request went over HTTP/2.
    var usedHTTP2: Bool { httpVersion == Int(CURL_HTTP_VERSION_2_0) }

    /// The last response's HTTP version as a status line names it ("HTTP/1.1").
    var httpVersionName: String {
        switch httpVersion {
        case Int(CURL_HTTP_VERSION_1_0): "HTTP/1.0"
        case Int(CURL_HTTP_VERSION_2_0): "HTTP/2"
        case Int(CURL_HTTP_VERSION_3): "HTTP/3"
        default: "HTTP/1.1"
        }
    }

    /// The last response's `CURLINFO_HTTP_VERSION` (0 before one arrived).
    private var httpVersion: Int { longInfo(CURLINFO_HTTP_VERSION) }

    /// The local port of the last transfer's connection (`CURLINFO_LOCAL_PORT`), 0 without one.
    var localPort: Int { longInfo(CURLINFO_LOCAL_PORT) }

    /// The remote port of the last transfer's connection (`CURLINFO_PRIMARY_PORT`), 0 without one.
    var primaryPort: Int { longInfo(CURLINFO_PRIMARY_PORT) }

    /// How many redirects were followed.
    var redirectCount: Int { longInfo(CURLINFO_REDIRECT_COUNT) }

    /// A `long` the handle reports (`curl_easy_getinfo`); 0 when libcurl has none.
    private func longInfo(_ info: CURLINFO) -> Int {
        var value = 0
        _ = CCurl_easy_getinfo_long(handle, info, &value)
        return value
    }

    /// The announced Content-Length of the current response, `nil` when none was announced.
    var contentLength: Int64? {
        var length: curl_off_t = -1
        _ = CCurl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        return length >= 0 ? Int64(length) : nil
    }

    /// How long the last transfer took in libcurl, from its start (name lookup, connection,
    /// TLS, redirects) to its last byte; `nil` before it has a time.
    var totalTime: Duration? {
        var microseconds: curl_off_t = 0
        guard CCurl_easy_getinfo_off_t(handle, CURLINFO_TOTAL_TIME_T, &microseconds) == CURLE_OK, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }

    /// The last response's `Content-Type` value as libcurl read it, `nil` without one.
    var contentType: String? {
        var type: UnsafeMutablePointer<CChar>?
        guard CCurl_easy_getinfo_string(handle, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK, let type else { return nil }
        return String(cString: type)
    }

    /// The URL last fetched, after redirects.
    var effectiveURL: String? {
        var url: UnsafeMutablePointer<CChar>?
        guard CCurl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK, let url else {
            return nil
        }
        return String(cString: url)
    }

    /// libcurl's detailed message for the last failure (the `CURLOPT_ERRORBUFFER` text), or the
    /// generic text of `code` when it left none.
    func errorMessage(for code: CurlCode) -> String {
        let detailed = String(cString: errorBuffer)
        return detailed.isEmpty ? code.description : detailed
    }
}

/// A libcurl multi result (`CURLMcode`).
struct CurlMultiCode: Hashable, Sendable, CustomStringConvertible {
    /// The raw `CURLMcode` value.
    let rawValue: Int32

    init(_ code: CURLMcode) { rawValue = code.rawValue }

    static let ok = CurlMultiCode(CURLM_OK)

    /// libcurl's own one-line explanation of the code.
    var description: String { String(cString: curl_multi_strerror(CURLMcode(rawValue))) }
}

/// The libcurl multi handle (`CURLM *`) that drives every transfer of one engine.
///
/// `@unchecked Sendable` because exactly one method, `wakeup()`, is called from other threads,
/// and libcurl documents `curl_multi_wakeup` as safe to call from any thread (`sockets` is
/// thread-safe itself). Everything else is called on the engine's own thread only.
final class CurlMulti: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer
    /// The sockets of this handle's connections; outlives them (released after
    /// `curl_multi_cleanup`, which closes the last).
    let sockets = CurlSockets()

    /// A new multi handle; `nil` if libcurl could not make one.
    init?() {
        guard CurlLibrary.initialized, let handle = curl_multi_init() else { return nil }
        self.handle = handle
    }

    deinit { curl_multi_cleanup(handle) }

    /// Sets a `long` option.
    @discardableResult
    func set(_ option: CURLMoption, _ value: Int) -> CurlMultiCode {
        CurlMultiCode(CCurl_multi_setopt_long(handle, option, value))
    }

    /// Starts driving `easy`.
    func add(_ easy: CurlEasy) -> CurlMultiCode {
        CurlMultiCode(curl_multi_add_handle(handle, easy.handle))
    }

    /// Stops driving `easy` (closing its connection if the transfer was mid-way).
    func remove(_ easy: CurlEasy) {
        _ = curl_multi_remove_handle(handle, easy.handle)
    }

    /// Moves every transfer as far as it can go without blocking.
    func perform() -> CurlMultiCode {
        var running: Int32 = 0
        return CurlMultiCode(curl_multi_perform(handle, &running))
    }

    /// The transfers that finished since the last call: each handle's `key` and its result.
    func completedTransfers() -> [(key: UInt, result: CurlCode)] {
        var done: [(key: UInt, result: CurlCode)] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(handle, &remaining) {
            guard CCurl_msg_is_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
            done.append((UInt(bitPattern: easy), CurlCode(CCurl_msg_result(message))))
        }
        return done
    }

    /// The longest libcurl wants the caller to wait before calling `perform()` again, if it says.
    func suggestedTimeoutMilliseconds() -> Int? {
        var milliseconds = -1
        _ = curl_multi_timeout(handle, &milliseconds)
        return milliseconds >= 0 ? milliseconds : nil
    }

    /// Waits for socket activity, a `wakeup()`, or `milliseconds`, whichever comes first.
    func poll(timeoutMilliseconds milliseconds: Int) {
        var events: Int32 = 0
        _ = curl_multi_poll(handle, nil, 0, Int32(clamping: milliseconds), &events)
    }

    /// Ends a `poll` early. Safe from any thread.
    func wakeup() {
        _ = curl_multi_wakeup(handle)
    }
}

/// A `curl_slist` of strings, freed with the last reference.
final class CurlStringList: @unchecked Sendable {
    fileprivate let head: UnsafeMutablePointer<curl_slist>?

    init(_ strings: [String]) {
        var head: UnsafeMutablePointer<curl_slist>?
        for string in strings { head = curl_slist_append(head, string) }
        self.head = head
    }

    deinit { curl_slist_free_all(head) }
}

/// `Configuration.AddressPolicy` in the form the C socket callback reads
/// (`CCurl_address_policy`), immutable once made; easy handles point at it while they use it.
final class CurlAddressPolicy: @unchecked Sendable {
    fileprivate let pointer: UnsafeMutablePointer<CCurl_address_policy>
    private let networks: UnsafeMutableBufferPointer<CCurl_network>

    init(_ policy: PushAttachmentFetcher.Configuration.AddressPolicy) {
        networks = .allocate(capacity: max(1, policy.allowedNetworks.count))
        for (index, network) in policy.allowedNetworks.enumerated() {
            var entry = CCurl_network()
            withUnsafeMutableBytes(of: &entry.address) { $0.copyBytes(from: network.bytes) }
            entry.prefix_length = UInt32(network.mappedPrefixLength)
            networks[index] = entry
        }
        pointer = .allocate(capacity: 1)
        pointer.initialize(
            to: CCurl_address_policy(
                allow_private_networks: policy.allowsPrivateNetworks ? 1 : 0,
                allowed: UnsafePointer(networks.baseAddress), allowed_count: policy.allowedNetworks.count))
    }

    deinit {
        pointer.deallocate()
        networks.deallocate()
    }

    /// Whether a connection to `address` (16 bytes, IPv4 written IPv4-mapped) would be made.
    func permits(_ address: [UInt8]) -> Bool {
        precondition(address.count == 16)
        return address.withUnsafeBufferPointer { CCurl_address_policy_permits(pointer, $0.baseAddress) } != 0
    }

    /// Whether `address` (16 bytes, IPv4 written IPv4-mapped) is globally reachable.
    static func isGlobal(_ address: [UInt8]) -> Bool {
        precondition(address.count == 16)
        return address.withUnsafeBufferPointer { CCurl_address_is_global($0.baseAddress) } != 0
    }

    /// The addresses `getaddrinfo` makes of a numeric host, as libcurl would resolve it (legacy
    /// IPv4 forms such as `127.1` and `0x7f.1` included), each in the 16-byte form; none when
    /// `host` is not numeric. Brackets around an IPv6 address are removed first.
    static func numericAddresses(of host: String) -> [[UInt8]] {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var next = list
        while let info = next {
            next = info.pointee.ai_next
            guard let raw = info.pointee.ai_addr else { continue }
            switch Int32(info.pointee.ai_family) {
            case AF_INET:
                let v4 = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in.self)
                addresses.append(mapped(withUnsafeBytes(of: v4.sin_addr) { Array($0) }))
            case AF_INET6:
                let v6 = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in6.self)
                addresses.append(withUnsafeBytes(of: v6.sin6_addr) { Array($0) })
            default: continue
            }
        }
        return addresses
    }

    /// An address in standard notation only (`inet_pton`: a dotted quad, or RFC 4291 IPv6), in
    /// the 16-byte form; `nil` otherwise.
    static func standardAddress(_ text: String) -> (bytes: [UInt8], isIPv4: Bool)? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return (mapped(withUnsafeBytes(of: v4) { Array($0) }), true)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return (withUnsafeBytes(of: v6) { Array($0) }, false)
        }
        return nil
    }

    /// The text of a 16-byte address (`inet_ntop`), as IPv4 when `asIPv4`.
    static func text(of bytes: [UInt8], asIPv4: Bool) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = bytes.withUnsafeBytes { source in
            asIPv4
                ? inet_ntop(AF_INET, source.baseAddress! + 12, &buffer, socklen_t(buffer.count))
                : inet_ntop(AF_INET6, source.baseAddress!, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func mapped(_ v4: [UInt8]) -> [UInt8] {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + v4
    }
}
