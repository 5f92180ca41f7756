/// The classes of attachment iOS accepts, each with its own size limit.
public enum MediaKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// JPEG, GIF, PNG.
    case image
    /// AIFF, WAV, MP3, MPEG-4 audio.
    case audio
    /// MPEG, MPEG-2, MPEG-4, AVI.
    case video
}

/// A type iOS accepts as a notification attachment, as detected in the bytes.
struct MediaType: Hashable, Sendable {
    /// The MIME type as libmagic reported it.
    var mime: String
    /// The type class, which sets the size limit.
    var kind: MediaKind
    /// The suffix the file gets, without the dot: iOS picks the type from it.
    var fileExtension: String
}

/// iOS's attachment rules (UNNotificationAttachment): which detected MIME types are accepted,
/// in which class, under which file suffix.
enum AttachmentTypes {
    /// libmagic's MIME answers (5.44 and nearby releases name some types in two ways) mapped to
    /// class and suffix. Anything else, WebP, HEIC, SVG, HTML, QuickTime, 3GP and 3G2 among it, is
    /// refused: iOS lists MPEG-4 and Apple's M4V (which conforms to it), not the other ISO media
    /// brands, even where a phone could play them.
    private static let accepted: [String: (MediaKind, String)] = [
        "image/jpeg": (.image, "jpg"),
        "image/png": (.image, "png"),
        "image/gif": (.image, "gif"),
        "audio/x-aiff": (.audio, "aiff"),
        "audio/aiff": (.audio, "aiff"),
        "audio/x-wav": (.audio, "wav"),
        "audio/wav": (.audio, "wav"),
        "audio/vnd.wave": (.audio, "wav"),
        "audio/mpeg": (.audio, "mp3"),
        "audio/x-m4a": (.audio, "m4a"),
        "audio/mp4": (.audio, "m4a"),
        "video/mpeg": (.video, "mpg"),
        "video/mp4": (.video, "mp4"),
        // Apple's own MPEG-4 brand ("ftyp M4V "): UTType com.apple.m4v-video conforms to
        // public.mpeg-4, which iOS lists. Saved as .mp4, the listed type itself.
        "video/x-m4v": (.video, "mp4"),
        "video/x-msvideo": (.video, "avi"),
        "video/avi": (.video, "avi"),
        "video/msvideo": (.video, "avi"),
    ]

    /// The accepted type for a detected MIME type, or `nil` when iOS would refuse it.
    static func mediaType(forMIME mime: String) -> MediaType? {
        guard let (kind, fileExtension) = accepted[mime.lowercased()] else { return nil }
        return MediaType(mime: mime, kind: kind, fileExtension: fileExtension)
    }

    /// Spellings of a suffix that name the same type as our canonical suffix ("jpeg" → "jpg").
    static func canonicalExtension(_ claimed: String) -> String {
        let lowered = claimed.lowercased().trimmingPrefixDot()
        switch lowered {
        case "jpeg", "jpe", "jfif": return "jpg"
        case "aif", "aifc": return "aiff"
        case "mpeg", "mpe", "m2v": return "mpg"
        case "wave": return "wav"
        default: return lowered
        }
    }
}

extension String {
    fileprivate func trimmingPrefixDot() -> String {
        hasPrefix(".") ? String(dropFirst()) : self
    }
}
