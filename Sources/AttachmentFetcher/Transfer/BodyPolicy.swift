/// The size rules a body is held to while it downloads, in one place: before its type is known
/// the largest limit applies, afterwards its type class's; an announced `Content-Length` is
/// checked as soon as the type is known, the bytes as they arrive, and the whole body once more
/// at the end. A body still of unknown type past the smallest limit (`untypedAllowance`) is
/// typed at once, on the engine's thread, rather than wait for the classifier's queue. Every
/// refusal has the one wording of `TransferFailure.tooLarge`.
///
/// The platforms' own rules (`PlatformRules`) judge the placed file afterwards, each against
/// its platform's limit; this policy bounds what may be downloaded at all, whichever platform
/// judges it: the larger of those limits for each class.
struct BodyPolicy: Sendable, Hashable {
    var limits: PushAttachmentFetcher.Configuration.SizeLimits

    /// The most a body may bring: its class's download limit, or the largest while its type is
    /// not known.
    func limit(for kind: MediaKind?) -> Int {
        kind.map { limits.downloadLimit(for: $0) } ?? limits.largest
    }

    /// The most a body may bring before its type is known without it being typed at once: the
    /// smallest class's limit (audio's, by default), so that no body is let past its own limit
    /// by more than one write while its type's answer is on its way. Read in libcurl's write
    /// callback, so worked out without an array.
    var untypedAllowance: Int { limits.smallestDownload }

    /// The ceiling libcurl enforces itself (`CURLOPT_MAXFILESIZE_LARGE`): no body may be larger.
    var ceiling: Int { limits.largest }

    /// libcurl's refusal of a body over `ceiling` (`CURLE_FILESIZE_EXCEEDED`).
    var ceilingExceeded: TransferFailure { .tooLarge(limit: ceiling, kind: nil) }

    /// `nil` while `bytesReceived` is within the limit of `media`'s class (`nil`: not known yet).
    func check(received bytesReceived: Int, media: MediaType?) -> TransferFailure? {
        let limit = limit(for: media?.kind)
        guard bytesReceived > limit else { return nil }
        return media.map { .tooLarge(limit: limit, media: $0) } ?? .tooLarge(limit: limit, kind: nil)
    }

    /// `nil` unless an announced `Content-Length` is over the limit of `media`'s class. An
    /// encoded response's length counts encoded bytes: the decoded body is counted as it
    /// arrives instead.
    func check(announced length: Int?, contentEncoded: Bool, media: MediaType) -> TransferFailure? {
        guard !contentEncoded, let length else { return nil }
        let limit = limit(for: media.kind)
        return length > limit ? .tooLarge(limit: limit, media: media) : nil
    }
}
