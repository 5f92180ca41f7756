/// One platform's verdict on a downloaded file: its type and size against that platform's rules.
struct PlatformRules: Sendable {
    var platform: Platform
    var limits: PushAttachmentFetcher.Configuration.SizeLimits

    /// The largest file of `kind` the platform shows; `nil` when it shows no such file.
    func limit(for kind: MediaKind) -> Int? {
        switch platform {
        case .ios: limits.limit(for: kind)
        case .android: kind == .image ? limits.androidPicture : nil
        }
    }

    /// Android decodes a GIF as a still picture (FCM: "Animated GIF and video only work on iOS").
    static let androidGIFWarning = "Android draws only the first frame of a GIF: an animation does not play"

    /// Accepted (with warnings, such as the first Android version that decodes the type), or why
    /// not.
    func judge(_ media: MediaType, bytes: Int) -> Result<[String], TransferFailure> {
        guard let support = AttachmentTypes.support(of: media, on: platform), let limit = limit(for: media.kind) else {
            let named = AttachmentTypes.described(media.mime)
            let what = platform == .android && media.kind != .image ? "a picture (images only)" : "an attachment"
            return .failure(
                TransferFailure(
                    reason: .unsupportedType,
                    detail: "detected \(named), which \(platform.displayName) does not accept as \(what)"))
        }
        guard bytes <= limit else {
            return .failure(
                platform == .android
                    ? .tooLarge(limit: limit, named: "the Android picture limit") : .tooLarge(limit: limit, kind: media.kind))
        }
        if case .since(let version) = support {
            return .success(["\(platform.displayName) shows \(media.mime) only from \(version) on"])
        }
        if platform == .android, media.fileExtension == "gif" { return .success([Self.androidGIFWarning]) }
        return .success([])
    }
}
