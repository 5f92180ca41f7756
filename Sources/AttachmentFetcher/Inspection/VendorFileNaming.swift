import Foundation

/// How OneSignal's, Braze's, CleverTap's and Airship's iOS extensions name a downloaded
/// attachment, whose type iOS then takes from that name (see `SuggestedFileName` for
/// Firebase's, Iterable's and Customer.io's).
///
/// - OneSignal (`OneSignalAttachmentHandler.getSupportedFileExtensionFromURL`): the extension of
///   the URL's `filename` query value, else the one its table gives the response's MIME type,
///   else the URL path's extension, else that of any query value; each only if it is one of
///   OneSignal's supported types. None of them, and it attaches nothing.
/// - Braze (`ab.att.type`, "a suffix for the file you save"): `.` and the type.
/// - CleverTap (`CTNotificationService/CTNotificationServiceExtension.m`,
///   `fileExtensionForMediaType:mimeType:`): the download's temporary name with `.jpg`, `.mp4` or
///   `.mp3` appended for a `ct_mediaType` of exactly `image`, `video` or `audio`, whatever the
///   bytes; for any other value (`gif`, which its README lists, or `Image`), `.jpeg`, `.png` or
///   `.gif` for a response of exactly that image type, else a bare `.`: a name of no type, and
///   `UNNotificationAttachment` fails, so nothing is attached. (A name whose class contradicts
///   the bytes, `video` on a JPEG, is left to the type-hint warning.)
/// - Airship (`AirshipExtensions/AirshipNotificationServiceExtension/Source/AirshipNotificationMutationProvider.swift`)
///   renames the download to its temporary name, `-` and the URL's last path component. When
///   that component, lower-cased, ends in one of its extensions (jpg, jpeg, png, gif, aif, aiff,
///   mp3, mpg, mpeg, mp4, m4a, wav, avi; a suffix, not an extension: `photojpg` counts) it
///   passes no type, and iOS types the file by its name's extension (none for `photojpg`,
///   whose name's only dot is the temporary name's). Otherwise it passes
///   `UNNotificationAttachmentOptionsTypeHintKey`: the type of the response's MIME type where
///   that has one of those extensions, else the type its table of first bytes finds
///   (`airshipHeaderTypes`). Neither, and iOS has no type: nothing is attached, and, as its
///   extension attaches all of a push's media or none, none of the push's is.
///
/// Not modelled, on purpose:
/// - Customer.io names the file after URLSession's suggested name (`SuggestedFileName`).
/// - MoEngage's rich-notification extension ships as a binary framework (`MORichNotification`
///   in `moengage/MoEngage-iOS-SDK`, headers only): how it names the file is not public.
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
        oneSignalMIMEMap[HTTPHeader.mediaType(of: contentType)]
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

    /// The extensions CleverTap's extension gives the three `ct_mediaType` values it knows
    /// (`fileExtensionForMediaType:mimeType:`), compared as written (`isEqualToString:`).
    static let cleverTapMediaTypes: [String: String] = ["image": "jpg", "video": "mp4", "audio": "mp3"]

    /// The response MIME types CleverTap's extension names a file by when `ct_mediaType` is none
    /// of those three.
    private static let cleverTapMIMEMap: [String: String] = ["image/jpeg": "jpeg", "image/png": "png", "image/gif": "gif"]

    /// The extension CleverTap's table gives a `Content-Type` value (its MIME type, parameters
    /// dropped, lower-cased as `URLResponse.mimeType` gives it), if it gives one.
    static func cleverTapMIMEExtension(_ contentType: String?) -> String? {
        cleverTapMIMEMap[HTTPHeader.mediaType(of: contentType)]
    }

    /// The extension CleverTap's extension appends to the downloaded file's name, for the
    /// payload's `ct_mediaType` and the extension its table gives the response's type; `nil`:
    /// it appends a bare `.`, a name of no type, and iOS attaches nothing.
    static func cleverTapExtension(mediaType: String?, mimeExtension: String?) -> String? {
        if let mediaType, let named = cleverTapMediaTypes[mediaType] { return named }
        return mimeExtension
    }

    /// Whether CleverTap's extension gives the file an extension, for the payload's
    /// `ct_mediaType` and whether its table gives the response's type one (`mimeNamesType`).
    static func cleverTapNamesFile(mediaType: String?, mimeNamesType: Bool) -> Bool {
        mimeNamesType || cleverTapExtension(mediaType: mediaType, mimeExtension: nil) != nil
    }

    /// CleverTap's iOS verdict when its extension names the file with no extension.
    static let cleverTapRefusal = TransferFailure(
        reason: .unsupportedType,
        detail: "CleverTap's iOS extension names the file from ct_mediaType (image .jpg, video .mp4, audio .mp3 exactly) and otherwise from the response's MIME type (image/jpeg, image/png or image/gif alone); here neither gives one, so the name ends in a bare dot and iOS attaches nothing, whatever the bytes: set ct_mediaType to image, video or audio, or serve the file with its image type")

    /// The vendors whose iOS extension attaches an error response's body as if it were the
    /// file: each checks only that the download did not fail, and URLSession's download task
    /// does not fail on a 4xx or 5xx. Firebase (`FIRMessagingExtensionHelper.m`: `if (error !=
    /// nil)`), OneSignal (`OneSignalAttachmentHandler.m`: only an announced length over 50 MB is
    /// refused), Airship (`AirshipNotificationMutationProvider.swift`: the response is read for
    /// its MIME type alone), CleverTap (`CTNotificationServiceExtension.m`), Iterable
    /// (`ITBNotificationServiceExtension.swift`) and Customer.io (`HttpRequestRunner.swift`,
    /// the rich-push download). Braze's and MoEngage's extensions ship as binary frameworks:
    /// whether they check is not public, so they get no warning.
    static let attachErrorResponses: Set<Vendor> = [.firebase, .oneSignal, .airship, .cleverTap, .iterable, .customerIO]

    /// The warning for an error response of `url` (a 4xx or 5xx with a body) when `vendor`'s iOS
    /// extension attaches whatever body comes back, such as a CDN's placeholder image; `nil`
    /// for other vendors and for an announced empty body. The body is not downloaded, so its
    /// type is the one the origin names, and whether iOS takes it is not judged.
    static func errorResponseWarning(vendor: Vendor?, response: TransferFailure.ErrorResponse, url: String) -> String? {
        guard let vendor, attachErrorResponses.contains(vendor), let name = vendor.sdkName, response.announcedLength != 0 else { return nil }
        let served = response.contentType.map { "a body served as \($0)" } ?? "a body of no stated type"
        return "\(url) answered HTTP \(response.status) with \(served): \(name)'s iOS extension does not check the status, so iPhones attach that body if iOS takes it for an image, a sound or a video (a CDN's placeholder image, say); its body was not downloaded, so whether it is one is not judged"
    }

    /// Airship's `supportedExtensions`: what a URL's last path component must end in for its
    /// extension to pass no type hint.
    static let airshipExtensions = ["jpg", "jpeg", "png", "gif", "aif", "aiff", "mp3", "mpg", "mpeg", "mp4", "m4a", "wav", "avi"]

    /// The MIME types `UTType(mimeType:)` gives one of `airshipExtensions` as preferred
    /// extension, in Apple's type database: Airship's type hint from the response's MIME type.
    private static let airshipHintingMIMETypes: Set<String> = [
        "image/jpeg", "image/png", "image/gif", "audio/aiff", "audio/x-aiff", "audio/mpeg", "audio/mp3", "audio/mpeg3",
        "video/mpeg", "video/mp4", "audio/mp4", "audio/x-m4a", "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave",
        "video/avi", "video/msvideo", "video/x-msvideo",
    ]

    /// Whether Airship's extension takes a type hint from a response's `Content-Type`.
    static func airshipMIMEHints(_ contentType: String?) -> Bool {
        airshipHintingMIMETypes.contains(HTTPHeader.mediaType(of: contentType))
    }

    /// Whether Airship's table of first bytes (`FileHeader.supportedHeaders`) types `bytes`: a
    /// JPEG only after `FF D8 FF E0`, `E2` or `E3` (not an Exif segment first, `E1`, as
    /// phones' cameras write), PNG, GIF, AIFF (`FORM` and a zero), WAV and AVI by their RIFF
    /// form, MP3 only with an ID3 tag, MPEG-4 with `ftyp` and `mp41`, `mp42`, `mmp4`, `isom` or
    /// `M4A `, MPEG program and video streams.
    static func airshipHeaderTypes(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        func has(_ expected: [UInt8], at offset: Int) -> Bool {
            guard bytes.count >= offset + expected.count else { return false }
            let start = bytes.index(bytes.startIndex, offsetBy: offset)
            return bytes[start...].prefix(expected.count).elementsEqual(expected)
        }
        let ftyp: [UInt8] = Array("ftyp".utf8)
        let headers: [(offset: Int, bytes: [UInt8])] =
            [[0xFF, 0xD8, 0xFF, 0xE0], [0xFF, 0xD8, 0xFF, 0xE2], [0xFF, 0xD8, 0xFF, 0xE3], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
             Array("GIF8".utf8), Array("FORM".utf8) + [0], Array("ID3".utf8), [0x00, 0x00, 0x01, 0xBA], [0x00, 0x00, 0x01, 0xB3]].map { (0, $0) }
            + [Array("WAVE".utf8), Array("AVI ".utf8)].map { (8, $0) }
            + ["mp41", "mp42", "mmp4", "isom", "M4A "].map { (4, ftyp + Array($0.utf8)) }
        return headers.contains { has($0.bytes, at: $0.offset) }
    }

    /// Whether Airship's extension leaves iOS a type for the file of `url`: by the name's
    /// extension when the URL's last path component ends in one of `airshipExtensions`, else by
    /// its type hint from the response's MIME type (`mimeHints`) or the first bytes
    /// (`headerTypes`).
    static func airshipTypesFile(url: String, mimeHints: Bool, headerTypes: Bool) -> Bool {
        let name = (URL(string: url)?.lastPathComponent ?? "").lowercased()
        guard airshipExtensions.contains(where: { name.hasSuffix($0) }) else { return mimeHints || headerTypes }
        // No hint: the extension of "<temporary name>.tmp-<name>", after its last dot.
        guard let dot = name.lastIndex(of: ".") else { return false }
        return airshipExtensions.contains(String(name[name.index(after: dot)...]))
    }

    /// Airship's iOS verdict when its extension leaves iOS no type for the file.
    static let airshipRefusal = TransferFailure(
        reason: .unsupportedType,
        detail: "Airship's iOS extension names the file after the URL's last path component and gives iOS its type only by that name's extension (jpg, png, gif, mp3, mp4…) or, without one, by a hint from the response's MIME type or from its own table of first bytes (a JPEG there starts FF D8 FF E0, E2 or E3, not with the Exif segment first as phones write it, an MP3 with an ID3 tag); here none gives one, so iOS attaches nothing, whatever the bytes: end the URL's path in the file's extension, or serve it with its type")
}
