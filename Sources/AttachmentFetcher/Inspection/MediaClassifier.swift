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
    private let idleCookies: Locked<[MagicCookie]>
    private let queue = DispatchQueue(label: "attachment-fetcher.classify", attributes: .concurrent)
    /// How long each asynchronous answer is held back: `nil` (not at all), except in tests that
    /// need a body to wait for its type.
    private let answerDelay: DispatchTimeInterval?

    /// Loads a first cookie, so that a missing or unreadable magic database fails at start-up.
    init(answerDelay: Duration = .zero) throws(AttachmentFetcherError) {
        do {
            idleCookies = Locked([try MagicCookie()])
        } catch {
            throw .magicUnavailable(error.message)
        }
        self.answerDelay = answerDelay > .zero ? .nanoseconds(answerDelay.wholeNanoseconds) : nil
    }

    /// The type class detected in `window`'s bytes, or why every platform would refuse the body
    /// (each payload's platform judges the finished file). Blocks for the time libmagic takes.
    func classify(_ window: SniffWindow) -> Result<MediaType, TransferFailure> {
        let cookie: MagicCookie
        if let pooled = idleCookies.withLock({ $0.popLast() }) {
            cookie = pooled
        } else {
            do throws(MagicCookie.OpenFailure) {
                cookie = try MagicCookie()
            } catch {
                // Out of descriptors is `resources`, like every other place that runs out of them.
                return .failure(
                    TransferFailure(
                        reason: error.outOfDescriptors ? .resources : .unsupportedType,
                        detail: "type not detected: libmagic could not open its database: \(error.message)"))
            }
        }
        defer { idleCookies.withLock { $0.append(cookie) } }
        let bytes = window.bytes
        let isoMedia = ISOBaseMedia(bytes)
        let mime = AttachmentTypes.refined(cookie.mimeType(of: bytes), file: isoMedia, bytes: bytes)
        // Refusals name the format; where libmagic has no MIME type for it (CAF), in libmagic's
        // own words, which only a refusal pays for.
        func detected() -> String {
            let isOpaque = mime.lowercased() == "application/octet-stream"
            return AttachmentTypes.described(mime, name: isOpaque ? cookie.formatName(of: bytes) : nil)
        }
        // A refusal of a type a platform has rules for carries the type: Android, which shows
        // images only, refuses it in its own words.
        let known = AttachmentTypes.mediaType(forMIME: mime)
        if window.hadID3Tag, mime.lowercased() != "audio/mpeg" {
            let what = bytes.isEmpty ? "nothing" : detected()
            return .failure(
                TransferFailure(
                    reason: .unsupportedType,
                    detail: "an ID3 tag followed by \(what), not MPEG audio: iOS does not play it as an MP3", media: known,
                    androidDetail: "an ID3 tag followed by \(what), which Android does not accept as a picture (images only)"))
        }
        if let refusal = AttachmentTypes.codecRefusal(mime, bytes: bytes, file: isoMedia) {
            return .failure(TransferFailure(reason: .unsupportedType, detail: "detected \(refusal)", media: known))
        }
        guard var media = known else {
            return .failure(
                TransferFailure(reason: .unsupportedType, detail: "detected \(detected()), which neither iOS nor Android shows"))
        }
        media.animation = AnimatedImage.animation(mime: mime, bytes: bytes, file: isoMedia)
        if mime.lowercased() == "image/jpeg" { media.exifOrientation = ExifOrientation.orientation(ofJPEG: bytes) }
        if media.kind == .video { media.videoCodec = isoMedia?.videoCodec }
        media.airshipHeaderTypes = VendorFileNaming.airshipHeaderTypes(bytes)
        return .success(media)
    }

    /// Classifies the prefixes of `jobs` on the classifier's queue and calls `completion` there
    /// with their answers, tagged as the jobs were; a batch of more than `jobsPerWorkItem` is
    /// split into work items that run in parallel, each calling `completion` with its own part.
    ///
    /// A work item for several bodies rather than one per body: every work item wakes a worker
    /// thread, and its answer wakes the engine, so in a spike the engine hands over each turn's
    /// bodies together.
    func classify<Tag: Sendable>(
        _ jobs: [ClassificationJob<Tag>],
        completion: @escaping @Sendable ([ClassificationAnswer<Tag>]) -> Void
    ) {
        for start in stride(from: jobs.startIndex, to: jobs.endIndex, by: Self.jobsPerWorkItem) {
            let part = Array(jobs[start..<min(start + Self.jobsPerWorkItem, jobs.endIndex)])
            let work: @Sendable () -> Void = {
                completion(part.map { ClassificationAnswer(tag: $0.tag, detection: self.classify($0.window)) })
            }
            if let answerDelay {
                queue.asyncAfter(deadline: .now() + answerDelay, execute: work)
            } else {
                queue.async(execute: work)
            }
        }
    }

    /// The most bodies one work item classifies: libmagic takes up to 300 µs a body (MP3), so a
    /// work item ends within a few milliseconds and a large batch still uses every core.
    static let jobsPerWorkItem = 8
}

/// A body's first bytes to classify, tagged with whatever tells its answer apart.
struct ClassificationJob<Tag: Sendable>: Sendable {
    /// Identifies the body to whoever asked.
    var tag: Tag
    /// The body's first bytes (after any ID3 tags).
    var window: SniffWindow
}

/// The classifier's answer for one `ClassificationJob`.
struct ClassificationAnswer<Tag: Sendable>: Sendable {
    /// The job's tag.
    var tag: Tag
    /// The detected type, or why iOS would refuse the body.
    var detection: Result<MediaType, TransferFailure>
}
