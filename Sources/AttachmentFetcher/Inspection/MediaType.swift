/// The classes of attachment a platform accepts, each with its own size limit.
public enum MediaKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// JPEG, GIF, PNG (and on Android BMP, WebP, HEIF, AVIF).
    case image
    /// AIFF, WAV, MP3, MPEG-4 audio (iOS only).
    case audio
    /// MPEG, MPEG-2, MPEG-4, AVI (iOS only).
    case video
}

/// The platform a notification is shown on: it decides which files may be its picture. A type of
/// yours with the same name does not hide it: write `AttachmentFetcher.Platform`.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// iOS: `UNNotificationAttachment`'s image, audio and video types.
    case ios
    /// Android: the big picture of an FCM notification, an image only.
    case android
    /// A Linux client that shows the notification itself (a kiosk, a car, a desktop): every
    /// image, sound or video iOS or Android shows, within `SizeLimits`' image, audio and video
    /// limits, whatever the payload's shape, with none of iOS's service-extension rules
    /// (`mutable-content`, the name a vendor's extension gives the file) or Android's picture
    /// rules (images only, the SDKs' limits and times). It reads the notification of the
    /// payload's own shape. Only a platform to judge by: no payload has this shape.
    case linux

    public var description: String { rawValue }

    /// The name people write: "iOS", "Android", "Linux".
    public var displayName: String {
        switch self {
        case .ios: "iOS"
        case .android: "Android"
        case .linux: "Linux"
        }
    }
}

/// A type some platform accepts as a notification's attachment or picture, as detected in the
/// bytes.
struct MediaType: Hashable, Sendable {
    /// The MIME type as libmagic reported it.
    var mime: String
    /// The type class, which sets the size limit.
    var kind: MediaKind
    /// The suffix the file gets, without the dot: iOS picks the type from it.
    var fileExtension: String
    /// Whether the image's first bytes show an animation (`AnimatedImage`): Android draws its
    /// first frame only.
    var animation: AnimatedImage.Animation = .still
    /// For a JPEG, the orientation (2 to 8) its Exif metadata asks of a viewer, when its first
    /// bytes hold it (`ExifOrientation`); `nil` for none and for 1 (as stored). iOS applies it;
    /// Android's `BitmapFactory` draws the picture as stored.
    var exifOrientation: Int? = nil
    /// For MPEG-4 video, its video track's codec (the first sample entry's type: `avc1`,
    /// `hvc1`, `av01`…), when the first bytes show it; with the `moov` out of view, `av01` for a
    /// file listing that brand (`ISOBaseMedia.videoCodec`).
    var videoCodec: String? = nil
    /// Whether Airship's iOS extension's table of first bytes types the file
    /// (`VendorFileNaming.airshipHeaderTypes`); `true` until the classifier looks.
    var airshipHeaderTypes = true
}

/// Which detected MIME types each platform shows, in which class, under which file suffix.
///
/// iOS (`UNNotificationAttachment`): JPEG, GIF, PNG; AIFF, WAV, MP3, MPEG-4 audio; MPEG, MPEG-2,
/// MPEG-4 (and Apple's M4V, which conforms to it), AVI. Android (FCM's big picture): images
/// only, JPEG, PNG, GIF (its first frame), BMP and WebP on every supported version, HEIF/HEIC from
/// Android 9 and AVIF from Android 12. Anything else (SVG, HTML, TIFF, QuickTime, 3GP, 3G2, FLAC,
/// CAF, MPEG-TS…) is refused everywhere.
enum AttachmentTypes {
    /// Whether and since when Android shows a type as a notification's picture.
    enum AndroidSupport: Hashable, Sendable {
        /// Every Android version FCM supports.
        case all
        /// From this version on: it is named in a warning.
        case since(String)
    }

    private struct Entry {
        var kind: MediaKind
        var fileExtension: String
        var ios: Bool
        var android: AndroidSupport?
    }

    /// libmagic's MIME answers (5.44 and nearby releases name some types in two ways).
    private static let known: [String: Entry] = {
        let heif = AndroidSupport.since("Android 9 (API 28)")
        let avif = AndroidSupport.since("Android 12 (API 31)")
        let table: [(String, MediaKind, String, Bool, AndroidSupport?)] = [
            ("image/jpeg", .image, "jpg", true, .all),
            ("image/png", .image, "png", true, .all),
            ("image/gif", .image, "gif", true, .all),
            ("image/bmp", .image, "bmp", false, .all),
            ("image/x-ms-bmp", .image, "bmp", false, .all),
            ("image/webp", .image, "webp", false, .all),
            ("image/heic", .image, "heic", false, heif),
            ("image/heif", .image, "heic", false, heif),
            ("image/avif", .image, "avif", false, avif),
            // Android's decoders (Skia's, behind BitmapFactory and ImageDecoder) read ICO.
            ("image/vnd.microsoft.icon", .image, "ico", false, .all),
            ("image/x-icon", .image, "ico", false, .all),
            ("audio/x-aiff", .audio, "aiff", true, nil),
            ("audio/aiff", .audio, "aiff", true, nil),
            ("audio/x-wav", .audio, "wav", true, nil),
            ("audio/wav", .audio, "wav", true, nil),
            ("audio/vnd.wave", .audio, "wav", true, nil),
            ("audio/mpeg", .audio, "mp3", true, nil),
            ("audio/x-m4a", .audio, "m4a", true, nil),
            ("audio/mp4", .audio, "m4a", true, nil),
            ("video/mpeg", .video, "mpg", true, nil),
            ("video/mp4", .video, "mp4", true, nil),
            // Apple's own MPEG-4 brand ("ftyp M4V "): UTType com.apple.m4v-video conforms to
            // public.mpeg-4, which iOS lists. Saved as .mp4, the listed type itself.
            ("video/x-m4v", .video, "mp4", true, nil),
            ("video/x-msvideo", .video, "avi", true, nil),
            ("video/avi", .video, "avi", true, nil),
            ("video/msvideo", .video, "avi", true, nil),
        ]
        return Dictionary(uniqueKeysWithValues: table.map { ($0.0, Entry(kind: $0.1, fileExtension: $0.2, ios: $0.3, android: $0.4)) })
    }()

    /// Every file name extension an attachment is given.
    static let fileExtensions = Set(known.values.map(\.fileExtension))

    /// The type for a detected MIME type when some platform shows it, or `nil` when none does.
    static func mediaType(forMIME mime: String) -> MediaType? {
        guard let entry = known[mime.lowercased()] else { return nil }
        return MediaType(mime: mime, kind: entry.kind, fileExtension: entry.fileExtension)
    }

    /// Whether iOS surely refuses an attachment of the MIME type `mime` (lowercased): a type the
    /// table above knows iOS does not show (WebP, HEIC, AVIF, BMP, ICO), or one of the formats
    /// no platform here shows. Another spelling of an accepted type ("image/jpg") is not refused.
    static func isRefusedOnIOS(_ mime: String) -> Bool {
        if let entry = known[mime] { return !entry.ios }
        return refusedEverywhere.contains(mime)
    }

    /// Media types no platform here shows, beyond the table's (UNNotificationAttachment takes
    /// JPEG, GIF and PNG images; AIFF, WAV, MP3 and MPEG-4 sounds; MPEG, MPEG-2, MPEG-4 and AVI
    /// videos; Android's picture is an image of the table's).
    private static let refusedEverywhere: Set<String> = [
        "image/heic-sequence", "image/heif-sequence", "image/svg+xml", "image/tiff",
        "video/quicktime", "video/3gpp", "video/3gpp2", "video/webm", "video/x-matroska", "video/x-flv",
        "audio/ogg", "audio/webm", "audio/flac", "audio/x-flac", "audio/x-caf", "audio/opus",
    ]

    /// Whether `platform` shows `media`; for Android, since when.
    static func support(of media: MediaType, on platform: Platform) -> AndroidSupport? {
        guard let entry = known[media.mime.lowercased()] else { return nil }
        switch platform {
        case .ios: return entry.ios ? .all : nil
        case .android: return entry.android
        case .linux: return entry.ios || entry.android != nil ? .all : nil
        }
    }

    /// Brands (ISO/IEC 14496-12 `ftyp`) that declare an MPEG-4 file, or its base format, as
    /// AVFoundation plays it: the standard ones, Apple's, Adobe's, and the cameras' own
    /// (Sony `XAVC` and `MSNV`, Canon `CAEP`, Nero `NDAS`) that list the standard ones after them.
    static let mpeg4Brands: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "mp41", "mp42", "mp71", "avc1",
        "M4V ", "M4VH", "M4VP", "M4A ", "M4B ", "M4P ", "F4V ", "F4P ", "F4A ", "F4B ", "MSNV", "XAVC", "CAEP",
        "NDAS", "dash",
    ]
    /// Major brands of MPEG-4 files that hold sound alone: iTunes audio and books, Adobe's and
    /// Nero's audio.
    static let mpeg4AudioBrands: Set<String> = ["M4A ", "M4B ", "M4P ", "F4A ", "F4B ", "NDAS"]
    /// Major brands of HEIF images and sequences: libmagic names these itself.
    private static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "mif2"]
    /// The MIME types libmagic gives MPEG-4 files.
    private static let mpeg4MIMETypes: Set<String> = ["video/mp4", "video/x-m4v", "audio/mp4", "audio/x-m4a"]

    /// Why no platform plays a file that libmagic names as a type iOS lists, from what its first
    /// bytes say of the codec inside; `nil` when nothing says so (or the bytes that would are
    /// not in view):
    /// - MPEG audio of layer I or II: libmagic says `audio/mpeg` for every layer, but iOS plays
    ///   layer III (MP3) only;
    /// - MPEG-4 video whose video track is HEVC in an `hev1` sample entry (ffmpeg's default),
    ///   which Apple's players do not play (they want `hvc1`), or VP8/VP9, which iOS does not
    ///   play from an MPEG-4 file.
    static func codecRefusal(_ mime: String, bytes: [UInt8], file: ISOBaseMedia?) -> String? {
        switch mime.lowercased() {
        case "audio/mpeg":
            // A frame header first (11 sync bits); its layer bits: 01 is layer III.
            guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
            switch (bytes[1] >> 1) & 0x3 {
            case 0b10: return "MPEG audio layer II (MP2), which iOS does not play: only layer III is MP3"
            case 0b11: return "MPEG audio layer I, which iOS does not play: only layer III is MP3"
            default: return nil
            }
        case "video/mp4", "video/x-m4v":
            let entries = file?.videoSampleEntries ?? []
            if entries.contains("hev1") {
                return "MPEG-4 with HEVC video in hev1 sample entries, which Apple's players do not play (they need hvc1: remux with ffmpeg -tag:v hvc1)"
            }
            if let vp = entries.first(where: { $0 == "vp09" || $0 == "vp08" }) {
                return "MPEG-4 with \(vp == "vp09" ? "VP9" : "VP8") video, which iOS does not play"
            }
            return nil
        default:
            return nil
        }
    }

    /// libmagic's answer, corrected for an ISO base media file from its brands and tracks.
    ///
    /// libmagic reads the major brand alone, so it calls a Sony or Canon camera's MPEG-4 video
    /// "data", a Sony `MSNV` video "audio/mp4", and an AVIF whose major brand is `mif1` HEIF. Here:
    /// - a file with the `avif` or `avis` brand is AVIF;
    /// - HEIF, QuickTime (`qt  `) and 3GPP files keep libmagic's answer (3GPP and QuickTime stay
    ///   refused: neither is among iOS's types, whatever else they list);
    /// - a file with an MPEG-4 brand is MPEG-4 video when a track in view is video, MPEG-4 audio
    ///   when every track is in view and one is sound, or else by its major brand (audio for
    ///   `M4A `, `M4B `…, video otherwise). libmagic's own MPEG-4 answer stands when it names the
    ///   same class ("video/x-m4v", "audio/x-m4a").
    /// `file` is what the body's first bytes say, `nil` when they are not ISO base media.
    static func refined(_ mime: String, file: ISOBaseMedia?, bytes: [UInt8] = []) -> String {
        // An MPEG transport stream that starts with another table than the PAT (ffmpeg writes
        // its SDT first) is "data" to libmagic: packets of 188 bytes, each starting 0x47.
        if mime.lowercased() == "application/octet-stream", bytes.count >= 4 * 188, (0..<4).allSatisfy({ bytes[$0 * 188] == 0x47 }) {
            return "video/mp2t"
        }
        guard let file else { return mime }
        if file.hasBrand(["avif", "avis"]) { return "image/avif" }
        let major = file.majorBrand
        guard !heifBrands.contains(major), major != "qt  ", !major.hasPrefix("3g"), file.hasBrand(mpeg4Brands) else {
            return mime
        }
        let kind: MediaKind
        if file.handlers.contains("vide") {
            kind = .video
        } else if file.allTracksSeen, file.handlers.contains("soun") {
            kind = .audio
        } else {
            kind = mpeg4AudioBrands.contains(major) ? .audio : .video
        }
        if mpeg4MIMETypes.contains(mime.lowercased()), known[mime.lowercased()]?.kind == kind { return mime }
        return kind == .video ? "video/mp4" : "audio/mp4"
    }

    /// What people call formats whose MIME type says little, for refusals' details.
    static func formatName(forMIME mime: String) -> String? {
        switch mime.lowercased() {
        case "video/quicktime": "QuickTime movie"
        case "video/3gpp": "3GPP"
        case "video/3gpp2": "3GPP2"
        case "video/mp2t": "MPEG transport stream"
        case "image/webp": "WebP"
        case "image/heic", "image/heif": "HEIF"
        case "image/avif": "AVIF"
        case "image/svg+xml": "SVG"
        case "image/tiff": "TIFF"
        case "image/bmp", "image/x-ms-bmp": "BMP"
        case "audio/flac": "FLAC"
        case "audio/x-hx-aac-adts": "ADTS AAC"
        case "audio/ogg": "Ogg"
        case "text/html": "HTML"
        default: nil
        }
    }

    /// A MIME type for a refusal's detail, with the format's name where there is one:
    /// "video/quicktime (QuickTime movie)". `name` (libmagic's own words) wins over the table.
    static func described(_ mime: String, name: String? = nil) -> String {
        guard let name = name ?? formatName(forMIME: mime) else { return mime }
        return "\(mime) (\(name))"
    }

    /// Spellings of a suffix that name the same type as our canonical suffix ("jpeg" → "jpg").
    static func canonicalExtension(_ claimed: String) -> String {
        let lowered = claimed.lowercased().trimmingPrefixDot()
        switch lowered {
        case "jpeg", "jpe", "jfif": return "jpg"
        case "aif", "aifc": return "aiff"
        case "mpeg", "mpe", "m2v": return "mpg"
        case "wave": return "wav"
        case "heif": return "heic"
        default: return lowered
        }
    }
}

extension String {
    fileprivate func trimmingPrefixDot() -> String {
        hasPrefix(".") ? String(dropFirst()) : self
    }
}
