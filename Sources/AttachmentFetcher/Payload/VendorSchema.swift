/// What a payload's type hint claims about its attachment; used only for warnings, never to
/// name or place a file.
enum ClaimedType: Hashable, Sendable {
    /// A file suffix, as Braze sends it ("jpg").
    case fileExtension(String)
    /// A type class, as MoEngage sends it ("image").
    case kind(String)
}

/// One attachment a payload asks for.
struct RequestedAttachment: Hashable, Sendable {
    /// The URL exactly as the payload gives it.
    var url: String
    /// The payload's type hint, if any.
    var claimedType: ClaimedType?
    /// The platforms that show this attachment when the payload names one per platform (an FCM
    /// HTTP v1 message's Android picture and iPhones' image); `nil`: every platform judged.
    var platforms: Set<Platform>? = nil

    /// Whether `platform` judges this attachment.
    ///
    /// A Linux client takes the files of the payload's own shape: the only payloads naming files
    /// per platform are FCM HTTP v1 messages, whose shape is Android's.
    func isJudged(on platform: Platform) -> Bool { platforms?.contains(platform == .linux ? .android : platform) ?? true }
}

/// What a vendor's keys say a payload is.
enum PayloadRecognition: Hashable, Sendable {
    /// An internal or silent push that must cost no network request; the text says which.
    case internalPush(String)
    /// A push with attachments to fetch.
    case attachments([RequestedAttachment])
    /// A push of this vendor with nothing to attach.
    case noAttachment
    /// A push of this vendor that names an attachment its SDK will not fetch; the text says why.
    case notAttached(String)
    /// A vendor key holds a value of the wrong JSON type; the text says which.
    case malformed(String)
}

extension PayloadRecognition {
    /// The one attachment whose URL is `value`, the payload's `path`: none when the key is absent
    /// or empty, malformed when it is not a string.
    static func attachment(_ value: JSONValue?, at path: String, claimedType: ClaimedType? = nil) -> Self {
        guard let value else { return .noAttachment }
        guard let url = value.string else { return .malformed("\(path) is not a string") }
        return url.isEmpty ? .noAttachment : .attachments([RequestedAttachment(url: url, claimedType: claimedType)])
    }
}

/// One push vendor's payload keys. Each vendor is one small file; adding a vendor is adding a
/// type and listing it in `VendorSchemas.all`.
protocol VendorSchema: Sendable {
    /// Which vendor this is.
    var vendor: Vendor { get }
    /// What the payload is, or `nil` when it is not this vendor's.
    func recognize(_ payload: JSONObject) -> PayloadRecognition?
}

/// A payload's vendor, the device its shape is for, and what its keys say.
struct RecognizedPayload: Hashable, Sendable {
    /// Whose keys the payload uses.
    var vendor: Vendor
    /// `ios` for an APNs payload, `android` for an FCM data map or HTTP v1 message: the
    /// platform whose rules judge the attachment.
    var platform: Platform
    /// What the keys say: internal, attachments (on Android, the one picture), none, malformed.
    var recognition: PayloadRecognition
}

/// The vendors recognised, in the order they are tried.
enum VendorSchemas {
    /// Every iOS (APNs) schema.
    static let all: [any VendorSchema] = [
        BrazeSchema(), MoEngageSchema(), AirshipSchema(), OneSignalSchema(), FirebaseSchema(), CleverTapSchema(),
        IterableSchema(), CustomerIOSchema(),
    ]

    /// The vendor that recognises `payload`, with its platform and what it recognised. A payload
    /// without `aps` is tried against the Android shapes first (`AndroidSchemas`); then, and for
    /// every payload with `aps`, the iOS schemas by their attachment keys, then the iOS markers of
    /// pushes that name no attachment (`iOSMarkers`).
    static func recognize(_ payload: JSONObject) -> RecognizedPayload? {
        if payload["aps"] == nil {
            for schema in AndroidSchemas.all {
                if let recognition = schema.recognize(payload) {
                    return RecognizedPayload(vendor: schema.vendor, platform: .android, recognition: recognition)
                }
            }
        }
        for schema in all {
            if let recognition = schema.recognize(payload) {
                return RecognizedPayload(vendor: schema.vendor, platform: .ios, recognition: recognition)
            }
        }
        return iOSMarkers(payload).map { RecognizedPayload(vendor: $0, platform: .ios, recognition: $1) }
    }

    /// Warnings for a payload in a shape no device receives, read as it stands all the same: an
    /// iOS vendor's attachment keys without `aps` (iOS shows no alert and runs no extension), an
    /// Android data map with values that are not strings (FCM's data map holds strings only, and
    /// its API refuses other values), and an Android vendor's keys beside `aps` (iOS reads the
    /// APNs payload, and no iOS SDK reads those keys). `recognized` is what `recognize` made of
    /// `payload`, the map a device is handed (`devicePayload`).
    static func shapeWarnings(_ payload: JSONObject, recognized: RecognizedPayload?) -> [String] {
        if payload["aps"] == nil, let recognized {
            switch (recognized.platform, recognized.recognition) {
            case (.ios, .attachments), (.ios, .notAttached):
                return [
                    "the payload has no aps: iOS shows no alert for it and runs no service extension, so its attachment is not fetched (an APNs payload carries alert and mutable-content in aps)"
                ]
            case (.android, _) where !ContentReader.isFirebaseHTTPv1(payload):
                let keys = payload.members.filter { $0.value.string == nil }.map(\.key)
                guard !keys.isEmpty else { return [] }
                let named = keys.count > 4 ? keys.prefix(3) + ["\(keys.count - 3) more"] : keys[...]
                let list = named.count == 1 ? named[named.startIndex] : named.dropLast().joined(separator: ", ") + " and " + named.last!
                return [
                    "\(list) \(keys.count == 1 ? "is not a string" : "are not strings"): an FCM data map's values are strings only (FCM refuses other values), so no device receives this payload as it stands; an iOS payload has aps"
                ]
            default:
                return []
            }
        }
        guard payload["aps"] != nil, recognized == nil else { return [] }
        let others = JSONObject(members: payload.members.filter { !JSONObject.sameKey($0.key, "aps") })
        guard let android = AndroidSchemas.all.first(where: { $0.vendor != .firebase && $0.recognize(others) != nil }) else { return [] }
        return [
            "the payload has aps, so it is read as iOS's, but its other keys are \(android.vendor)'s Android ones, which no iOS SDK reads: \(android.vendor)'s iOS keys name its attachment on iOS"
        ]
    }

    /// What a device is handed of `payload` when that differs from the payload itself, with a
    /// note saying so: of an FCM HTTP v1 data message whose data map another vendor's Android SDK
    /// takes (Braze's `_ab`, CleverTap's `wzrk_pn`, Customer.io's delivery keys…), the map, since
    /// FCM delivers it as it stands and that SDK draws the notification from it. `nil` otherwise:
    /// a message with a notification is shown by FCM's SDK, whatever its data says.
    static func devicePayload(of payload: JSONObject) -> (payload: JSONObject, note: String)? {
        guard payload["aps"] == nil, let (data, path) = ContentReader.firebaseHTTPv1DataMessage(payload) else { return nil }
        guard let schema = AndroidSchemas.all.first(where: { $0.vendor != .firebase && $0.recognize(data) != nil }) else { return nil }
        return (data, "an FCM HTTP v1 data message: read as the data map an Android device receives (\(path)), from which \(schema.vendor)'s SDK draws the notification")
    }

    /// iOS pushes whose vendor shows only in keys other than the attachment's: Braze's empty
    /// `ab`, Airship's send id `_`, a `com.urbanairship.*` key (its `metadata`) or a rich message
    /// id (`_uamid`), as Airship's SDK and its integrations tell its pushes (by `_` or the
    /// metadata), CleverTap's `wzrk_*` keys, FCM's message and
    /// sender ids. None names an attachment; Airship's remote-data refresh, Braze's test-trigger
    /// fetch and CleverTap's test payloads are internal.
    static func iOSMarkers(_ payload: JSONObject) -> (Vendor, PayloadRecognition)? {
        if let fetch = BrazeSchema.testTriggerFetch(payload) { return (.braze, fetch) }
        if payload["ab"]?.object != nil { return (.braze, .noAttachment) }
        // With an alert, iOS shows it all the same (a warning says so), as other vendors' internal keys.
        if payload["com.urbanairship.remote-data.update"] != nil, !payload.hasAPSAlert {
            return (.airship, .internalPush("Airship remote-data refresh"))
        }
        let keys = payload.members.lazy.map(\.key)
        if payload["_"] != nil || payload["_uamid"] != nil || keys.contains(where: { $0.hasPrefix(ContentReader.airshipPrefix) }) {
            return (.airship, .noAttachment)
        }
        if keys.contains(where: { $0.hasPrefix("wzrk_") || $0.hasPrefix("W$") }) {
            return (.cleverTap, CleverTapSchema.iOSTestPayload(payload) ?? .noAttachment)
        }
        if payload["gcm.message_id"] != nil || payload["google.c.sender.id"] != nil { return (.firebase, .noAttachment) }
        return nil
    }
}
