import Foundation

/// What a payload's bytes say before anything is downloaded: its vendor, the notification it
/// shows (on each judged platform it addresses), the warnings about it, and either the
/// attachments to fetch or why none will be. A pure function of the bytes and the fetcher's
/// configuration.
struct PreparedPayload: Sendable {
    enum Next: Sendable {
        /// The original content stands, for this reason, without a request.
        case original(FallbackReason, String)
        /// These attachments are fetched; the payload is for `platform`.
        case download([RequestedAttachment], platform: Platform)
    }

    var vendor: Vendor?
    var notification: NotificationContent?
    /// What the push shows on the judged platforms other than its own shape's: an FCM HTTP v1
    /// message's iPhone notification when iOS is judged.
    var otherPlatformNotifications: [NotificationContent] = []
    var warnings: [String] = []
    var next: Next
    /// How many distinct attachment URLs the limit left unfetched.
    var attachmentsPastLimit = 0

    static let noExtensionWarning =
        "aps.mutable-content is not 1: iOS would not run a service extension for this payload"

    /// Reads `payload` (at most `maximumAttachments` attachments are asked for, URLs compared in
    /// the form `normalise` gives them: see `AttachmentSelection`), for the `judging` platforms
    /// (`Configuration.platforms`; empty for the payload's own).
    init(
        _ payload: Data, maximumAttachments: Int, judging platforms: [Platform] = [],
        normalise: (String) -> String = { $0 }
    ) {
        var json: JSONObject
        // JSON's whitespace (RFC 8259): an empty input is named as such, not as a syntax error.
        guard payload.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            next = .original(.invalidPayload, "the payload is empty")
            return
        }
        do {
            // Read as any JSON value, so that a string or a number at the top level is named as
            // such ("x" is JSON, but no object).
            let value = try JSONReader.read(payload, fragments: true)
            guard let object = value.object else {
                let what =
                    switch value {
                    case .array: "an array"
                    case .string: "a string"
                    case .number: "a number"
                    case .bool(let flag): flag ? "true" : "false"
                    case .null: "null"
                    case .object: "an object"  // not reached: an object is read above
                    }
                next = .original(.invalidPayload, "the payload is not a JSON object: its top level is \(what)")
                return
            }
            json = object
        } catch {
            // What and where: the byte offset finds a broken template's mistake.
            next = .original(.invalidPayload, "the payload is not JSON: \(error.message) at offset \(error.offset)")
            return
        }
        if let (device, note) = VendorSchemas.devicePayload(of: json) {
            json = device
            warnings.append(note)
        }
        let recognized = VendorSchemas.recognize(json)
        warnings += VendorSchemas.shapeWarnings(json, recognized: recognized)
        // Android shows a push without an extension; silent and internal pushes and pushes that show
        // nothing need none: the warning is for visible iOS pushes only (added below; an iOS
        // notification says whether the extension runs).
        guard let recognized else {
            if ContentReader.isAirshipPushRequest(json) {
                next = .original(
                    .invalidPayload,
                    "this is an Airship push API request (audience, device_types, notification), not a payload a device receives: preflight what Airship delivers to the device")
                return
            }
            // A payload without `aps` is no APNs payload (an Android data map, say): no warning,
            // and no notification, since nothing says how it is shown. With `aps`, iOS shows it
            // as a plain APNs push.
            if json["aps"] != nil {
                let (content, contentWarnings) = ContentReader.readPlainAPNs(json)
                notification = content
                warnings += contentWarnings
                if !ContentReader.runsServiceExtension(json), !json.isSilentPush { warnings.append(Self.noExtensionWarning) }
            }
            next = .original(.noAttachment, "no known vendor's attachment keys" + (OneSignalAndroidSchema.unclaimed(json).map { ": " + $0 } ?? ""))
            return
        }
        let vendor = recognized.vendor
        self.vendor = vendor
        // The payload was parsed once, above; its content is read from that parse.
        let (content, contentWarnings) = ContentReader.read(json, vendor: vendor, platform: recognized.platform)
        var notification = content
        if case .internalPush = recognized.recognition { notification.visible = false }
        self.notification = notification
        warnings += contentWarnings
        if vendor == .firebase, recognized.platform == .android, platforms.contains(.ios),
            ContentReader.isFirebaseHTTPv1(json)
        {
            let (iPhone, iPhoneWarnings) = ContentReader.readFirebaseHTTPv1IPhone(json)
            otherPlatformNotifications = [iPhone]
            warnings += iPhoneWarnings
        }
        switch recognized.recognition {
        case .internalPush(let detail):
            next = .original(.internalPush, detail)
        case .malformed(let detail):
            next = .original(.invalidPayload, detail)
        case _ where !notification.visible && !otherPlatformNotifications.contains(where: \.visible):
            // No banner, so no attachment, though iOS may still set the badge and play the sound.
            next = .original(.internalPush, "the \(vendor) \(recognized.platform.rawValue) push \(notification.invisibleEffect): no request is made")
        case .noAttachment:
            if notification.serviceExtension == false { warnings.append(Self.noExtensionWarning) }
            next = .original(.noAttachment, "the \(vendor) payload names no attachment")
        case .notAttached(let detail):
            next = .original(.noAttachment, detail)
        case .attachments(let named):
            if notification.serviceExtension == false { warnings.append(Self.noExtensionWarning) }
            let requests = AttachmentSelection.select(
                named, limit: maximumAttachments, warnings: &warnings, pastLimit: &attachmentsPastLimit, normalise: normalise)
            next = .download(requests, platform: recognized.platform)
        }
    }
}
