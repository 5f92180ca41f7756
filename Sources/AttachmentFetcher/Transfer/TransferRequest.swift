import Foundation
import SystemPackage

/// Why a transfer produced no file.
struct TransferFailure: Error, Sendable, Hashable {
    /// The outcome reason it leads to.
    var reason: FallbackReason
    /// A human explanation.
    var detail: String
    /// The body's type, when the failure came after it was detected (a body over its type's
    /// limit, a codec no platform plays): each platform then judges it by its own rules
    /// (`judged(by:)`). Not part of equality: it explains, the reason and detail are the failure.
    var media: MediaType? = nil
    /// A size the body was known to exceed (its limit, plus one), for a body too large.
    var atLeast: Int? = nil
    /// The detail in Android's words, for a refusal worded for iOS whose type no platform has
    /// rules for (no `media` to judge again): a sound that is no MP3 is, to Android, no image.
    var androidDetail: String? = nil
    /// For a body whose file system ran out of room (`ENOSPC`, `EDQUOT`): the room it wanted,
    /// its announced length, else what had arrived when the write failed. A cache makes that
    /// much room before the body is fetched again (`CacheStore.makeRoom`).
    var roomWanted: Int? = nil
    /// Whether that room is the user's quota (`EDQUOT`), of which the file system's free space
    /// says nothing.
    var roomIsQuota = false
    /// For an origin's error response (a 4xx or 5xx, which libcurl ends at its headers): its
    /// status, `Content-Type` and announced length. Several vendors' iOS extensions attach
    /// such a body all the same (`VendorFileNaming.errorResponseWarning`).
    var errorResponse: ErrorResponse? = nil
    /// Whether this is a recent failure a cache remembers rather than a download's own: its
    /// detail, in every platform's words, says so (`rememberedNote`).
    private(set) var isRemembered = false

    /// What a remembered failure's detail ends with.
    static let rememberedNote = " (a recent failure, not retried yet)"

    /// This failure as a cache gives it again, to a payload whose URL failed recently: all of
    /// it (media, limit, Android's wording, error response), its detail saying so.
    func remembered() -> TransferFailure {
        var failure = self
        if !isRemembered { failure.detail += Self.rememberedNote }
        failure.isRemembered = true
        return failure
    }

    /// An error response as its headers describe it; its body is not downloaded.
    struct ErrorResponse: Sendable, Hashable {
        var status: Int
        /// The media type of its `Content-Type`, lower-cased, without parameters; `nil` without one.
        var contentType: String?
        /// Its announced `Content-Length`, `nil` without one.
        var announcedLength: Int64?

        /// The media type of a `Content-Type` value the origin chose, kept only in the shape
        /// RFC 9110 gives it (`type/subtype`, token characters, at most 100 of them): it is
        /// quoted in a warning.
        static func mediaType(of contentType: String?) -> String? {
            let type = HTTPHeader.mediaType(of: contentType)
            let parts = type.split(separator: "/", omittingEmptySubsequences: false)
            let token = { (part: Substring) in
                !part.isEmpty && part.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0)) }
            }
            guard type.utf8.count <= 100, parts.count == 2, parts.allSatisfy(token) else { return nil }
            return type
        }
    }

    init(
        reason: FallbackReason, detail: String, media: MediaType? = nil, atLeast: Int? = nil, androidDetail: String? = nil,
        roomWanted: Int? = nil, roomIsQuota: Bool = false
    ) {
        self.reason = reason
        self.detail = detail
        self.media = media
        self.atLeast = atLeast
        self.androidDetail = androidDetail
        self.roomWanted = roomWanted
        self.roomIsQuota = roomIsQuota
    }

    static func == (left: TransferFailure, right: TransferFailure) -> Bool {
        left.reason == right.reason && left.detail == right.detail
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(detail)
    }

    /// This failure as `rules`' platform would see it: a body over the download limit, or of a
    /// type refused on the way, is judged again by that platform's own type rules and limit
    /// (Android shows images only, FCM's picture limit is 1 MiB), so that each platform's
    /// verdict names its own reason and limit. When the type is not known, Android says so in
    /// its own words where it can (`androidDetail`; a body over every limit is over its picture
    /// limit); otherwise unchanged, as when the platform's rules would accept what the download
    /// refused. A remembered failure's verdicts each say that it is remembered.
    func judged(by rules: PlatformRules) -> TransferFailure {
        var judged = judgedAgain(by: rules)
        if isRemembered, !judged.detail.hasSuffix(Self.rememberedNote) { judged.detail += Self.rememberedNote }
        return judged
    }

    private func judgedAgain(by rules: PlatformRules) -> TransferFailure {
        if media == nil, let androidDetail, rules.platform == .android { return TransferFailure(reason: reason, detail: androidDetail) }
        // Larger than every limit before its type was known: on Android, than its picture limit.
        if media == nil, reason == .tooLarge, rules.platform == .android, let atLeast, let limit = rules.limit(for: .image), atLeast > limit {
            return .tooLarge(limit: limit, named: "the Android picture limit")
        }
        guard let media, reason == .tooLarge || reason == .unsupportedType else { return self }
        switch rules.judge(media, bytes: atLeast ?? 0) {
        case .failure(let refusal) where reason == .tooLarge || refusal.reason == .unsupportedType: return refusal
        default: return self
        }
    }

    /// A body over a limit, in one wording whichever check found it (the announced
    /// Content-Length, the bytes counted as they arrived, or the whole body): `kind` is the
    /// body's type class, `nil` while its type is not known yet (then the largest limit applies).
    static func tooLarge(limit: Int, kind: MediaKind?) -> TransferFailure {
        tooLarge(limit: limit, named: kind.map { "the \($0.rawValue) limit" } ?? "the largest limit")
    }

    /// The same, for a body whose type was detected: each platform judges it again.
    static func tooLarge(limit: Int, media: MediaType) -> TransferFailure {
        var failure = tooLarge(limit: limit, kind: media.kind)
        failure.media = media
        return failure
    }

    /// The same wording for a limit of another name ("the Android picture limit"). Every body
    /// over a limit is known to be at least one byte over it (`atLeast`).
    static func tooLarge(limit: Int, named which: String) -> TransferFailure {
        TransferFailure(reason: .tooLarge, detail: "the body is larger than \(which), \(limit) bytes", atLeast: limit + 1)
    }
}

/// A file the engine downloaded and validated: first under its temporary name, then, once
/// placed, under its final one.
struct DownloadedFile: Sendable {
    /// Where the file is.
    var path: String
    /// Its type, detected in the bytes.
    var media: MediaType
    /// Its size.
    var byteCount: Int
    /// The URL it came from after redirects.
    var effectiveURL: String
    /// The final response's header lines, unparsed (only the cache reads them).
    var headerBlock: String
    /// The schemes the redirects on the way led to (platforms differ on a change of scheme).
    var redirectSchemes: RedirectSchemes = []
    /// The redirects followed on the way, in order (only the cache reads them).
    var redirects: [RedirectResponse] = []
    /// Whether a redirect on the way set a cookie, which URLSession sends on the next hop and
    /// Android's `HttpURLConnection` does not keep.
    var redirectSetCookie = false
    /// How long the origin took to deliver it (libcurl's total time: name lookup, connection,
    /// redirects and body), when known: a cache entry keeps it only when it was at least
    /// `CacheEntryMetadata.slowDownload`. Android SDKs give a picture a time of their own.
    var downloadTime: Duration? = nil
    /// Whether the file name URLSession would suggest has no image extension (see
    /// `SuggestedFileName`), when known without the headers (a cache entry keeps it);
    /// `hasUnsuffixedName` works it out from them otherwise.
    var unsuffixedName: Bool? = nil
    /// Why, when `unsuffixedName` is known without the headers and its cache entry kept why
    /// (an entry written before it kept the reason has only the flag).
    var unsuffixedReason: SuggestedFileName.Unsuffixed? = nil
    /// Whether OneSignal's table of MIME types gives the response's `Content-Type` no extension
    /// (see `VendorFileNaming`), when known without the headers (a cache entry keeps it);
    /// `hasOneSignalMIMEExtension` works it out from them otherwise.
    var oneSignalUntypedMIME: Bool? = nil
    /// Whether CleverTap's table of MIME types gives the response's `Content-Type` no extension
    /// (see `VendorFileNaming`), when known without the headers (a cache entry keeps it);
    /// `hasCleverTapMIMEExtension` works it out from them otherwise.
    var cleverTapUntypedMIME: Bool? = nil
    /// Whether Airship's extension takes no type hint from the response's `Content-Type` (see
    /// `VendorFileNaming.airshipMIMEHints`), when known without the headers (a cache entry keeps
    /// it); `hasAirshipMIMEHint` works it out from them otherwise.
    var airshipUntypedMIME: Bool? = nil
    /// Whether the file, though its framing vouched for its end, ends before its format's end
    /// mark (`BodyCompleteness.isCutAtOrigin`): the origin's file itself is cut short, and
    /// phones draw only the part that is there.
    var cutAtOrigin = false
    /// The body, still open for reading and writing, when the request asked for a nameless file
    /// (`anonymousBody`): its receiver names it (`Syscalls.link`) or closes it, which removes it.
    var descriptor: FileDescriptor? = nil
}

extension DownloadedFile {
    /// Whether the file name URLSession would suggest for this body has no extension of a type
    /// iOS attaches (`SuggestedFileName.lacksAcceptedExtension`).
    var hasUnsuffixedName: Bool {
        unsuffixedName ?? SuggestedFileName.lacksAcceptedExtension(url: effectiveURL, headers: HTTPHeader.parse(headerBlock))
    }

    /// Why the suggested name has no such extension (`SuggestedFileName.unsuffixed`); `nil` when
    /// it has one, or when a cache entry kept only that it has none.
    var unsuffixedNameReason: SuggestedFileName.Unsuffixed? {
        unsuffixedName != nil ? unsuffixedReason : SuggestedFileName.unsuffixed(url: effectiveURL, headers: HTTPHeader.parse(headerBlock))
    }

    /// Whether OneSignal's table of MIME types gives the response's `Content-Type` an extension.
    var hasOneSignalMIMEExtension: Bool {
        if let oneSignalUntypedMIME { return !oneSignalUntypedMIME }
        return VendorFileNaming.oneSignalMIMEExtension(contentType) != nil
    }

    /// Whether CleverTap's table of MIME types gives the response's `Content-Type` an extension
    /// (all three are images').
    var hasCleverTapMIMEExtension: Bool {
        if let cleverTapUntypedMIME { return !cleverTapUntypedMIME }
        return VendorFileNaming.cleverTapMIMEExtension(contentType) != nil
    }

    /// Whether Airship's extension takes a type hint from the response's `Content-Type`.
    var hasAirshipMIMEHint: Bool {
        if let airshipUntypedMIME { return !airshipUntypedMIME }
        return VendorFileNaming.airshipMIMEHints(contentType)
    }

    /// The final response's `Content-Type` value, read from its header lines (`nil` for a cache
    /// entry's file, which keeps none).
    private var contentType: String? {
        HTTPHeader.parse(headerBlock).last { $0.name == "content-type" }?.value
    }
}

/// What a finished transfer produced.
enum TransferResponse: Sendable {
    /// A validated body, placed by the request's `place`.
    case file(DownloadedFile)
    /// `304 Not Modified` to a conditional request: no body, the header block of the 304, and
    /// whether it came after redirects (from a target the validators may not belong to).
    case notModified(String, redirected: Bool)
}

/// How a transfer ended.
typealias TransferResult = Result<TransferResponse, TransferFailure>

/// One download the engine is asked for.
struct TransferRequest: Sendable {
    /// The absolute http(s) URL.
    var url: String
    /// Extra request header lines, such as `If-None-Match: "v1"`.
    var headers: [String] = []
    /// `scheme://host:port`: transfers to one key share the per-host connection limit.
    var hostKey: String
    /// When the payload's time is up; the transfer is cancelled then, wherever it is.
    var deadline: ContinuousClock.Instant
    /// A deadline its requester may move later while the transfer runs (a shared download that a
    /// payload with a later deadline joined); `deadline` is where it stood when submitted.
    var laterDeadline: ExtendableDeadline? = nil
    /// Where the body streams to: on the same filesystem as its final place, so placing it is
    /// a rename.
    var temporaryDirectory: String
    /// Called on the engine's thread with the validated body under its temporary name; moves it
    /// to its final place. On failure the engine removes the temporary file.
    var place: @Sendable (DownloadedFile) -> Result<DownloadedFile, TransferFailure>
    /// With them, the body streams into a nameless file (`O_TMPFILE`, where the file system has
    /// it) made ahead in `temporaryDirectory` (or on the spot when none is ready), handed on open
    /// in `DownloadedFile.descriptor`, rather than into a named temporary file: a crash then
    /// leaves nothing behind.
    var preparedFiles: PreparedFiles? = nil

    /// Whether the body streams into a nameless file (see `preparedFiles`).
    var anonymousBody: Bool { preparedFiles != nil }
}

/// A transfer's deadline that may move later, never earlier: a shared download's, which each
/// payload that joins it with a later deadline of its own extends. The engine's loop reads it
/// when the deadline it knew passes.
final class ExtendableDeadline: Sendable {
    private let instant: Locked<ContinuousClock.Instant>

    init(_ initial: ContinuousClock.Instant) { instant = Locked(initial) }

    /// Where it stands now.
    var current: ContinuousClock.Instant { instant.withLock { $0 } }

    /// Moves it to `later`, if that is later.
    func extend(to later: ContinuousClock.Instant) {
        instant.withLock { $0 = max($0, later) }
    }
}
