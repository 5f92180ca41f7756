// The one Swift file that touches libmagic.

import CMagic

/// A libmagic cookie (`magic_t`) loaded with the system's magic database, answering MIME types.
///
/// `@unchecked Sendable` because a cookie may move between threads but must never be used by two
/// at once: `MediaClassifier` lends each of its cookies to one job at a time.
final class MagicCookie: @unchecked Sendable {
    private let cookie: magic_t

    /// Opens a cookie and loads the default database; fails with libmagic's message.
    init() throws(AttachmentFetcherError) {
        guard let cookie = magic_open(CMagic_flag_mime_type() | CMagic_flags_skip_slow_checks()) else {
            throw .magicUnavailable("magic_open failed")
        }
        guard magic_load(cookie, nil) == 0 else {
            let message = magic_error(cookie).map { String(cString: $0) } ?? "magic_load failed"
            magic_close(cookie)
            throw .magicUnavailable(message)
        }
        self.cookie = cookie
    }

    deinit { magic_close(cookie) }

    /// The MIME type libmagic detects in `bytes` ("image/jpeg"), or `application/octet-stream`
    /// when it cannot tell.
    func mimeType(of bytes: [UInt8]) -> String {
        let answer = bytes.withUnsafeBytes { buffer in
            magic_buffer(cookie, buffer.baseAddress, buffer.count)
        }
        return answer.map { String(cString: $0) } ?? "application/octet-stream"
    }
}
