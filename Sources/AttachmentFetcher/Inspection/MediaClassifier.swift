import Dispatch
import Synchronization

/// Detects a body's type class from its first bytes, off the transfer engine's thread.
///
/// libmagic takes 15 µs (JPEG) to 300 µs (MP3) per body; on the engine's thread that time is
/// taken from every other transfer's sockets. Jobs run on a queue of their own, in parallel,
/// each with a cookie borrowed from a pool (a cookie must never serve two threads at once),
/// and hand their answer back through a completion.
final class MediaClassifier: Sendable {
    /// Cookies not lent out; the pool grows to the number of jobs that ever ran at once.
    private let idleCookies: Mutex<[MagicCookie]>
    private let queue = DispatchQueue(label: "attachment-fetcher.classify", attributes: .concurrent)
    /// How long each asynchronous answer is held back: zero, except in tests that need a body to
    /// wait for its type.
    private let answerDelay: Duration

    /// Loads a first cookie, so that a missing or unreadable magic database fails at start-up.
    init(answerDelay: Duration = .zero) throws(AttachmentFetcherError) {
        idleCookies = Mutex([try MagicCookie()])
        self.answerDelay = answerDelay
    }

    /// The type class detected in `prefix`, or why iOS would refuse the body. Blocks for the
    /// time libmagic takes.
    func classify(_ prefix: [UInt8]) -> Result<MediaType, TransferFailure> {
        let cookie: MagicCookie
        do {
            cookie = try idleCookies.withLock { $0.popLast() } ?? MagicCookie()
        } catch {
            return .failure(TransferFailure(reason: .unsupportedType, detail: "type not detected: \(error)"))
        }
        defer { idleCookies.withLock { $0.append(cookie) } }
        let mime = cookie.mimeType(of: prefix)
        guard let media = AttachmentTypes.mediaType(forMIME: mime) else {
            return .failure(TransferFailure(reason: .unsupportedType, detail: "detected \(mime), which iOS does not accept"))
        }
        return .success(media)
    }

    /// Classifies `prefix` on the classifier's queue and calls `completion` there with the answer.
    func classify(_ prefix: [UInt8], completion: @escaping @Sendable (Result<MediaType, TransferFailure>) -> Void) {
        guard answerDelay > .zero else {
            queue.async { completion(self.classify(prefix)) }
            return
        }
        let (seconds, attoseconds) = answerDelay.components
        let delay = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        queue.asyncAfter(deadline: .now() + delay) { completion(self.classify(prefix)) }
    }
}
