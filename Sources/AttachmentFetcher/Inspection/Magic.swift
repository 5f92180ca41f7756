// The one Swift file that touches libmagic.

import CMagic

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A libmagic cookie (`magic_t`) loaded with the system's magic database, answering MIME types.
///
/// `@unchecked Sendable` because a cookie may move between threads but must never be used by two
/// at once: `MediaClassifier` lends each of its cookies to one job at a time.
final class MagicCookie: @unchecked Sendable {
    private let cookie: magic_t

    /// Why a cookie could not be opened.
    struct OpenFailure: Error {
        /// libmagic's message.
        var message: String
        /// The process or the system was out of file descriptors (`EMFILE`, `ENFILE`): the
        /// database file could not be opened.
        var outOfDescriptors: Bool
    }

    /// Opens a cookie and loads the default database; fails with libmagic's message.
    init() throws(OpenFailure) {
        guard let cookie = magic_open(CMagic_flag_mime_type() | CMagic_flags_skip_slow_checks()) else {
            throw OpenFailure(message: "magic_open failed", outOfDescriptors: false)
        }
        guard magic_load(cookie, nil) == 0 else {
            let outOfDescriptors = errno == EMFILE || errno == ENFILE
            let message = magic_error(cookie).map { String(cString: $0) } ?? "magic_load failed"
            magic_close(cookie)
            throw OpenFailure(message: message, outOfDescriptors: outOfDescriptors)
        }
        self.cookie = cookie
    }

    deinit { magic_close(cookie) }

    /// The MIME type libmagic detects in `bytes` ("image/jpeg"), or `application/octet-stream`
    /// when it cannot tell.
    func mimeType(of bytes: [UInt8]) -> String {
        answer(for: bytes) ?? "application/octet-stream"
    }

    /// libmagic's description of `bytes` ("CoreAudio Format audio file version 1"): it names
    /// formats that it has no MIME type for. `nil` when it has nothing to say but "data".
    func formatName(of bytes: [UInt8]) -> String? {
        let mimeFlags = CMagic_flag_mime_type() | CMagic_flags_skip_slow_checks()
        _ = magic_setflags(cookie, CMagic_flags_skip_slow_checks())
        defer { _ = magic_setflags(cookie, mimeFlags) }
        guard let description = answer(for: bytes), description != "data", !description.isEmpty else { return nil }
        // Descriptions of containers list their contents on further lines ("\012- MPEG ADTS").
        return String(description.prefix { $0 != "\n" && $0 != "\\" })
            .trimmingSeparators()
    }

    private func answer(for bytes: [UInt8]) -> String? {
        let answer = bytes.withUnsafeBytes { buffer in
            magic_buffer(cookie, buffer.baseAddress, buffer.count)
        }
        return answer.map { String(cString: $0) }
    }
}

extension String {
    /// Without the ", " or " " that a cut description may end with, or that one whose first
    /// test printed nothing starts with (", 44.1 kHz, JntStereo" for a free-format MP3).
    fileprivate func trimmingSeparators() -> String {
        let separators: Set<Character> = [",", " ", "-"]
        var text = Substring(self)
        while let last = text.last, separators.contains(last) { text = text.dropLast() }
        while let first = text.first, separators.contains(first) { text = text.dropFirst() }
        return String(text)
    }
}
