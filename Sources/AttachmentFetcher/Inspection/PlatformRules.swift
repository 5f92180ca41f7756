/// One platform's verdict on a downloaded file: its type and size against that platform's rules.
struct PlatformRules: Sendable {
    var platform: Platform
    var limits: PushAttachmentFetcher.Configuration.SizeLimits
    /// The vendor whose SDK draws the Android picture, when known (`.firebase` for a push FCM's
    /// display draws, whoever sent it: `NotificationContent.androidPictureDrawer`).
    var vendor: Vendor? = nil

    /// The largest file of `kind` the platform shows; `nil` when it shows no such file.
    func limit(for kind: MediaKind) -> Int? {
        switch platform {
        case .ios: limits.limit(for: kind)
        case .android: kind == .image ? Self.androidPictureLimit(drawnBy: vendor, limits) : nil
        case .linux: limits.limit(for: kind)
        }
    }

    /// The largest picture the vendor's Android SDK shows. Airship's, OneSignal's, CleverTap's,
    /// Iterable's and Customer.io's read the whole body and set no byte limit
    /// (`ImageUtils.fetchScaledBitmap` downsamples; `getBitmapFromURL`, `getNotificationBitmap`,
    /// `IterableNotificationBuilder` and `CustomerIOPushNotificationHandler.addImage` decode it
    /// as it is): the image limit applies. Braze documents a largest image of 5 MB. FCM's own
    /// display, which draws Firebase's pictures, a Customer.io notification message's, and
    /// MoEngage's (whose SDK's code is not public), stops at `SizeLimits.androidPicture`.
    static func androidPictureLimit(drawnBy vendor: Vendor?, _ limits: PushAttachmentFetcher.Configuration.SizeLimits) -> Int {
        switch vendor {
        case .airship?, .oneSignal?, .cleverTap?, .iterable?, .customerIO?: limits.image
        case .braze?: min(limits.image, 5_000_000)
        default: limits.androidPicture
        }
    }

    /// How long the vendor's Android SDK waits for the picture before it shows the notification
    /// without it, with the SDK's name; `nil` where it sets no time of its own. FCM's display
    /// (`DisplayNotification`, 5 s), which draws Firebase's pictures, a Customer.io notification
    /// message's, and MoEngage's (whose SDK's code is not public); Airship's `StyleNotificationExtender` (`BIG_PICTURE_TIMEOUT_SECONDS
    /// = 7`); CleverTap's time-limited bitmap download (5 s). Braze's downloader is not public;
    /// OneSignal's, Iterable's and Customer.io's handlers wait for the download as long as it takes.
    static func androidPictureTime(drawnBy vendor: Vendor?) -> (sdk: String, time: Duration)? {
        switch vendor {
        case .airship?: ("Airship", .seconds(7))
        case .cleverTap?: ("CleverTap", .seconds(5))
        case .braze?, .oneSignal?, .iterable?, .customerIO?: nil
        default: ("FCM", .seconds(5))
        }
    }

    /// Why Android shows no picture that took longer than its SDK waits, or the warning for one
    /// that took more than half of that time (a phone's network is seldom faster than a
    /// server's); `nil` for neither, or an unknown time (a cache entry keeps only times of at
    /// least `CacheEntryMetadata.slowDownload`).
    static func androidTimeVerdict(_ downloadTime: Duration?, drawnBy vendor: Vendor?, url: String) -> Result<String, TransferFailure>? {
        guard let downloadTime, let (sdk, time) = androidPictureTime(drawnBy: vendor), downloadTime * 2 > time else { return nil }
        let took = String(format: "%.1f", downloadTime.timeInterval)
        let limit = time.components.seconds
        if downloadTime > time {
            return .failure(
                TransferFailure(
                    reason: .deadline,
                    detail: "the picture took \(took) s to download from here; \(sdk) shows the notification without it after \(limit) s"))
        }
        return .success(
            "\(url) took \(took) s to download from here; \(sdk) shows the notification without its picture after \(limit) s, so slower networks may miss it")
    }

    /// AV1 video plays on iPhones that decode it in hardware (the A17 Pro's and later chips).
    static let iOSAV1Warning = "the video is AV1, which plays only on iPhones that decode it in hardware (iPhone 15 Pro, the iPhone 16 family and later)"

    /// The Android warning for a JPEG whose Exif orientation (2 to 8) asks to be turned or
    /// mirrored: the SDK that draws it decodes with `BitmapFactory`, which ignores the tag, and
    /// shows the picture as stored. FCM's display (`ImageDownload`: `BitmapFactory.decodeByteArray`),
    /// which draws Firebase's pictures, a Customer.io notification message's and MoEngage's (judged
    /// as FCM's); OneSignal's (`getBitmapFromURL`: `BitmapFactory.decodeStream`), CleverTap's
    /// (`BitmapInputStreamDecoder`), Iterable's and Customer.io's handlers, and Braze's compiled
    /// image loader, all `BitmapFactory`. Airship's `ImageUtils.fetchScaledBitmap` decodes with
    /// `BitmapFactory.decodeFile` before Android 9 (API 28) and with `ImageDecoder.decodeBitmap`
    /// from then on, which applies the orientation: its warning names the older versions alone.
    static func androidOrientationWarning(_ orientation: Int, drawnBy vendor: Vendor?) -> String {
        let tag = "the JPEG's EXIF orientation (\(orientation): \(ExifOrientation.meaning(orientation))) is not applied by BitmapFactory"
        let drawn = ExifOrientation.drawnAsStored(orientation)
        if vendor == .airship {
            return "\(tag), which Airship's SDK decodes with before Android 9 (API 28; from then on it decodes with ImageDecoder, which applies it): Android 8.1 and older show the picture as stored, \(drawn)"
        }
        return "\(tag), which \(androidDecoderSDK(vendor))'s SDK decodes with: Android shows the picture as stored, \(drawn)"
    }

    /// The name of the SDK that decodes the Android picture of a push `vendor` sent: FCM's
    /// display for Firebase's, for MoEngage's (judged as FCM's) and for an unknown vendor's.
    private static func androidDecoderSDK(_ vendor: Vendor?) -> String {
        guard let vendor, vendor != .firebase, vendor != .moengage, let name = vendor.sdkName else { return "FCM" }
        return name
    }

    /// Android's `BitmapFactory` decodes one still image of an animated GIF, WebP, PNG or AVIF
    /// (FCM: "Animated GIF and video only work on iOS").
    static func androidAnimationWarning(_ format: String) -> String {
        "Android draws only the first frame of an animated \(format): the animation does not play"
    }

    /// The same for an image whose bytes in view cannot tell whether it is animated (a GIF whose
    /// first image runs past them): worded to be true either way.
    static func androidPerhapsAnimatedWarning(_ format: String) -> String {
        "if the \(format) is animated, Android draws only its first frame: the animation does not play"
    }

    /// The vendors whose iOS extension names the file after the name URLSession suggests for
    /// the response (see `SuggestedFileName`): Firebase's (`FIRMessagingExtensionHelper.m`, `"." +
    /// suggestedFilename.pathExtension`), Iterable's (`ITBNotificationServiceExtension`, a UUID
    /// and `suggestedFilename`) and Customer.io's (`Sources/Common/Service/HttpRequestRunner.swift`,
    /// `downloadFile`: `suggestedFilename` alone, attached with no options in
    /// `UNNotificationWrapper.addImage`).
    static let namesFileAsSuggested: Set<Vendor> = [.firebase, .iterable, .customerIO]

    /// The SDK's name in a verdict on a suggested name.
    private static func suggestedNameSDK(_ vendor: Vendor) -> String {
        vendor.sdkName ?? "Firebase"
    }

    /// iOS's verdict, for such a vendor, on a body whose suggested file name has no extension of
    /// a type iOS attaches: iOS takes the file's type from its name, not its bytes. It says why
    /// the name has none (`reason`; an entry of an older cache kept only that it has none, and
    /// every case is listed then) and, for a body of a type iOS attaches, what to serve instead.
    static func unsuffixedNameRefusal(_ vendor: Vendor, reason: SuggestedFileName.Unsuffixed?, media: MediaType) -> TransferFailure {
        let why: String
        if let reason {
            let name =
                reason.fromContentDisposition
                ? "the Content-Disposition filename, without an extension,"
                : "the URL's last path component, without an extension (there is no Content-Disposition filename),"
            let type =
                switch reason.contentType {
                case .missing: "and no Content-Type adds one"
                case .notMedia: "and a Content-Type that is not an image's, a video's or a sound's adds none"
                case .refusedOnIOS: "with the extension of its Content-Type, a type iOS refuses (such as image/webp)"
                }
            why = "\(name) \(type)"
        } else {
            why = "it has no extension of a type iOS attaches here (none in the URL's name or a Content-Disposition filename, and a Content-Type that is not an image's, a video's or a sound's, or is one of a type iOS refuses, such as image/webp)"
        }
        let remedy = AttachmentTypes.isRefusedOnIOS(media.mime) ? "" : ": serve it as \(media.mime), or under a name ending in .\(media.fileExtension)"
        return TransferFailure(
            reason: .unsupportedType,
            detail: "\(suggestedNameSDK(vendor))'s iOS extension names the file after the name URLSession suggests for the response: \(why); iOS takes the type from the name, whatever the bytes\(remedy)")
    }

    /// Why iPhones show nothing of `file` because of the name `vendor`'s extension gives it
    /// (iOS takes the type from the name, whatever the bytes), or `nil`: Firebase's, Iterable's
    /// and Customer.io's suggested name without an extension of a type iOS attaches, OneSignal's
    /// search for a supported extension finding none, Braze's `ab.att.type` naming no such
    /// extension, CleverTap's `ct_mediaType` and MIME type naming none (a name ending in a dot).
    static func iOSNamingRefusal(by vendor: Vendor?, of file: DownloadedFile, for attachment: AttachmentResult) -> TransferFailure? {
        switch vendor {
        case let vendor? where namesFileAsSuggested.contains(vendor):
            return file.hasUnsuffixedName ? unsuffixedNameRefusal(vendor, reason: file.unsuffixedNameReason, media: file.media) : nil
        case .oneSignal?:
            let url = attachment.url?.string ?? attachment.request.url
            return VendorFileNaming.oneSignalNamesFile(url: url, mimeNamesType: file.hasOneSignalMIMEExtension)
                ? nil : VendorFileNaming.oneSignalRefusal
        case .braze?:
            guard case .fileExtension(let type)? = attachment.request.claimedType else { return nil }
            return VendorFileNaming.brazeRefusal(type: type)
        case .airship?:
            let url = attachment.url?.string ?? attachment.request.url
            return VendorFileNaming.airshipTypesFile(url: url, mimeHints: file.hasAirshipMIMEHint, headerTypes: file.media.airshipHeaderTypes)
                ? nil : VendorFileNaming.airshipRefusal
        case .cleverTap?:
            var mediaType: String?
            if case .kind(let kind)? = attachment.request.claimedType { mediaType = kind }
            return VendorFileNaming.cleverTapNamesFile(mediaType: mediaType, mimeNamesType: file.hasCleverTapMIMEExtension)
                ? nil : VendorFileNaming.cleverTapRefusal
        default:
            return nil
        }
    }

    /// Why `platform` shows nothing from a download whose redirects changed its scheme, or `nil`
    /// where the change is followed. Android's `HttpURLConnection`, which every vendor SDK's
    /// picture download uses, "doesn't follow redirects from HTTPS to HTTP or vice versa"
    /// (Android's reference): the SDK receives the 3xx response itself, whose body is no image.
    /// URLSession follows it (ATS may still refuse a hop to http: a warning, as for http URLs).
    static func schemeChangeRefusal(on platform: Platform, from scheme: RedirectSchemes) -> TransferFailure? {
        guard platform == .android else { return nil }
        return TransferFailure(
            reason: .httpStatus,
            detail: "the URL redirects from \(scheme.name) to \(scheme.other.name): Android's HttpURLConnection does not follow a redirect that changes the scheme, so the app gets the 3xx response and shows no picture")
    }

    /// Accepted (with warnings, such as the first Android version that decodes the type), or why
    /// not: by type and size, then, on Android, by the time the download took (`url` names the
    /// picture in a warning).
    func judge(_ media: MediaType, bytes: Int, downloadTime: Duration? = nil, url: String = "") -> Result<[String], TransferFailure> {
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
        var warnings: [String] = []
        if case .since(let version) = support {
            warnings.append("\(platform.displayName) shows \(media.mime) only from \(version) on")
        }
        if platform == .android {
            switch media.animation {
            case .animated(let format): warnings.append(Self.androidAnimationWarning(format))
            case .perhaps(let format): warnings.append(Self.androidPerhapsAnimatedWarning(format))
            case .still: break
            }
        }
        if platform == .android, let orientation = media.exifOrientation {
            warnings.append(Self.androidOrientationWarning(orientation, drawnBy: vendor))
        }
        if platform == .ios, media.videoCodec == "av01" { warnings.append(Self.iOSAV1Warning) }
        if platform == .android {
            switch Self.androidTimeVerdict(downloadTime, drawnBy: vendor, url: url) {
            case .failure(let refusal)?: return .failure(refusal)
            case .success(let warning)?: warnings.append(warning)
            case nil: break
            }
        }
        return .success(warnings)
    }
}
