import Foundation

/// How OneSignal's and Braze's iOS extensions name a downloaded attachment, whose type iOS then
/// takes from that name (see `SuggestedFileName` for Firebase's and Iterable's).
///
/// - OneSignal (`OneSignalAttachmentHandler.getSupportedFileExtensionFromURL`): the extension of
///   the URL's `filename` query value, else the one its table gives the response's MIME type,
///   else the URL path's extension, else that of any query value; each only if it is one of
///   OneSignal's supported types. None of them, and it attaches nothing.
/// - Braze (`ab.att.type`, "a suffix for the file you save"): `.` and the type.
enum VendorFileNaming {
    /// `ONESIGNAL_SUPPORTED_ATTACHMENT_TYPES`, compared as written (the SDK's `containsObject:`).
    static let oneSignalTypes: Set<String> = ["aiff", "wav", "mp3", "mp4", "jpg", "jpeg", "png", "gif", "mpeg", "mpg", "avi", "m4a", "m4v"]

    /// OneSignal's `MIME_MAP` (`NSString+OneSignal.m`).
    private static let oneSignalMIMEMap: [String: String] = [
        "audio/aiff": "aiff", "audio/x-wav": "wav", "audio/mpeg": "mp3", "video/mp4": "mp4", "image/jpeg": "jpeg",
        "image/jpg": "jpg", "image/png": "png", "image/gif": "gif", "video/mpeg": "mpeg", "video/mpg": "mpg",
        "video/avi": "avi", "sound/m4a": "m4a", "video/m4v": "m4v",
    ]

    /// The extension OneSignal's table gives a `Content-Type` value (its MIME type, parameters
    /// dropped, lower-cased as `URLResponse.mimeType` gives it), if it gives one.
    static func oneSignalMIMEExtension(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let mime = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return oneSignalMIMEMap[mime]
    }

    /// The extension OneSignal's extension names the file with, for the payload's `url` and the
    /// extension its table gives the response's type; `nil`: it attaches nothing.
    static func oneSignalExtension(url: String, mimeExtension: String?) -> String? {
        let components = URLComponents(string: url)
        let queryItems = components?.queryItems ?? []
        /// `-[NSString supportedFileExtension]`: the last of at least two dot-separated parts, if listed.
        func supported(_ name: String?) -> String? {
            guard let parts = name?.split(separator: ".", omittingEmptySubsequences: false), parts.count >= 2,
                let last = parts.last.map(String.init), oneSignalTypes.contains(last)
            else { return nil }
            return last
        }
        if let found = supported(queryItems.first { $0.name == "filename" }?.value) { return found }
        if let mimeExtension, oneSignalTypes.contains(mimeExtension) { return mimeExtension }
        let path = components?.path ?? ""
        if let last = path.split(separator: "/").last, let dot = last.lastIndex(of: "."), dot != last.startIndex {
            let pathExtension = String(last[last.index(after: dot)...])
            if oneSignalTypes.contains(pathExtension) { return pathExtension }
        }
        return queryItems.lazy.compactMap { supported($0.value) }.first
    }

    /// Whether OneSignal's extension finds a name for the file at `url`, its response's type
    /// giving an extension (`mimeNamesType`) or not.
    static func oneSignalNamesFile(url: String, mimeNamesType: Bool) -> Bool {
        mimeNamesType || oneSignalExtension(url: url, mimeExtension: nil) != nil
    }

    /// OneSignal's iOS verdict when its extension finds no name for the file.
    static let oneSignalRefusal = TransferFailure(
        reason: .unsupportedType,
        detail: "OneSignal's iOS extension names the file from the URL's filename parameter, the response's MIME type, the URL's extension or another query value, and finds none of its types there (\(oneSignalTypes.sorted().joined(separator: ", "))): it attaches nothing, whatever the bytes; add ?filename=name.jpg to the URL, or serve it with its image's, sound's or video's type")

    /// Extensions iOS attaches a file under (`UNNotificationAttachment`'s types: JPEG, GIF,
    /// PNG; AIFF, WAV, MP3, MPEG-4 audio; MPEG, MPEG-2, MPEG-4, AVI), compared in lower case.
    static let iOSAttachableExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "png", "gif", "aif", "aiff", "aifc", "wav", "wave", "mp3", "m4a", "mp4", "m4v",
        "mpg", "mpeg", "mpe", "m1v", "m2v", "avi",
    ]

    /// Braze's iOS verdict on an `ab.att.type` that names no extension iOS attaches; `nil` for
    /// one that does (whether or not it matches the bytes: a warning says when it does not).
    static func brazeRefusal(type: String) -> TransferFailure? {
        guard !iOSAttachableExtensions.contains(type.lowercased()) else { return nil }
        let shown = type.count > 40 ? String(type.prefix(40)) + "…" : type
        return TransferFailure(
            reason: .unsupportedType,
            detail: "Braze's iOS extension saves the file with ab.att.type as its suffix (.\(shown)), which is no type iOS attaches: it attaches nothing, whatever the bytes")
    }
}
