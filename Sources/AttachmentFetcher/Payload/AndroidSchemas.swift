/// The Android (FCM data map) shape of each vendor's push: how it is recognised, which pushes
/// are internal, and which key holds the picture (from the vendors' SDK sources and documentation). Values are
/// strings; the picture's key is read where it is a string, and the content reader warns about
/// any other type.
///
/// A payload is tried against these only when it has no `aps`; FCM comes last, since every
/// vendor's push arrives through FCM and may carry its `google.*` keys.
enum AndroidSchemas {
    /// Every Android schema, in the order they are tried.
    static let all: [any VendorSchema] = [
        BrazeAndroidSchema(), MoEngageAndroidSchema(), AirshipAndroidSchema(), CleverTapAndroidSchema(),
        IterableAndroidSchema(), CustomerIOAndroidSchema(), OneSignalAndroidSchema(), FirebaseAndroidSchema(),
    ]

    /// Whether `schema` takes `payload` for an internal push, which its SDK handles without
    /// showing anything (and which no warning about a missing key concerns).
    static func isInternal(_ payload: JSONObject, by schema: some VendorSchema) -> Bool {
        if case .internalPush? = schema.recognize(payload) { return true }
        return false
    }

    /// The one picture `url` names, or `noAttachment`.
    static func picture(_ url: String?) -> PayloadRecognition {
        guard let url, !url.isEmpty else { return .noAttachment }
        return .attachments([RequestedAttachment(url: url, claimedType: nil)])
    }
}

/// Braze (`_ab` is `"true"`, in any case, as `BrazePushReceiver` checks). Internal: uninstall
/// tracking (top level or in `extra`), always; and, for a push without both keys `t` and `a`
/// (which the SDK shows, empty or not), content-card sync (`ab_cd`), feature-flag and banner
/// refreshes (`br_ffr`, `br_br`), test-trigger fetch and geofence sync. A push with both is shown
/// and does its sync as well.
struct BrazeAndroidSchema: VendorSchema {
    var vendor: Vendor { .braze }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["_ab"]?.string?.lowercased() == "true" || payload["_ab"] == .bool(true) else { return nil }
        var reader = ContentReader(payload, platform: .android)
        if payload["appboy_uninstall_tracking"] != nil
            || reader.object(payload["extra"], at: "extra")?["appboy_uninstall_tracking"] != nil
        {
            return .internalPush("Braze uninstall tracking")
        }
        if !ContentReader.brazeAndroidShows(payload) {
            for (key, what) in [
                ("ab_cd", "content-card sync"), ("br_ffr", "feature-flag refresh"), ("br_br", "banners refresh"),
                ("ab_push_fetch_test_triggers_key", "test-trigger fetch"), ("ab_sync_geos", "geofence sync"),
            ] where payload[key] != nil {
                return .internalPush("Braze \(what)")
            }
        }
        return AndroidSchemas.picture(ContentReader.brazeAndroidPicture(payload))
    }
}

/// MoEngage (`push_from: moengage`, or its mandatory `gcm_campaign_id` with
/// `gcm_notificationType`). Internal: `gcm_notificationType: gcm_silentNotification`.
struct MoEngageAndroidSchema: VendorSchema {
    var vendor: Vendor { .moengage }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["push_from"]?.string == "moengage"
            || (payload["gcm_campaign_id"] != nil && payload["gcm_notificationType"] != nil)
        else { return nil }
        if payload["gcm_notificationType"]?.string == "gcm_silentNotification" {
            return .internalPush("MoEngage silent push")
        }
        return AndroidSchemas.picture(payload["gcm_image_url"]?.string)
    }
}

/// Airship (any `com.urbanairship.*` key). Internal: `com.urbanairship.push.PING` and
/// `com.urbanairship.remote-data.update`.
struct AirshipAndroidSchema: VendorSchema {
    var vendor: Vendor { .airship }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload.members.contains(where: { $0.key.hasPrefix(ContentReader.airshipPrefix) }) else { return nil }
        if payload["com.urbanairship.push.PING"] != nil { return .internalPush("Airship ping") }
        if payload["com.urbanairship.remote-data.update"] != nil { return .internalPush("Airship remote-data refresh") }
        return AndroidSchemas.picture(ContentReader.airshipAndroidPicture(payload))
    }
}

/// CleverTap (`wzrk_pn`). Internal: test payloads (`wzrk_inapp`, `wzrk_inbox`, `wzrk_adunit`,
/// `wzrk_inapp_s3_url`).
struct CleverTapAndroidSchema: VendorSchema {
    var vendor: Vendor { .cleverTap }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["wzrk_pn"] != nil else { return nil }
        if let test = CleverTapSchema.testPayload(payload) { return test }
        return AndroidSchemas.picture(ContentReader.cleverTapAndroidPicture(payload))
    }
}

/// Iterable (`itbl`, a JSON string). Internal: a ghost push (`itbl.isGhostPush`).
struct IterableAndroidSchema: VendorSchema {
    var vendor: Vendor { .iterable }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["itbl"] else { return nil }
        var reader = ContentReader(payload, platform: .android)
        if ContentReader.isIterableGhost(reader.object(value, at: "itbl")?["isGhostPush"], on: .android) {
            return .internalPush("Iterable ghost push")
        }
        return AndroidSchemas.picture(ContentReader.iterableAndroidPicture(payload))
    }
}

/// Customer.io (`CIO-Delivery-ID` or `CIO-Delivery-Token`).
struct CustomerIOAndroidSchema: VendorSchema {
    var vendor: Vendor { .customerIO }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["CIO-Delivery-ID"] != nil || payload["CIO-Delivery-Token"] != nil else { return nil }
        return AndroidSchemas.picture(ContentReader.customerIOAndroidPicture(payload))
    }
}

/// OneSignal (`custom`, a JSON string holding the notification id `i`). Internal: an in-app
/// message preview (`custom.a.os_in_app_message_preview_id`), which the SDK shows as an in-app
/// message, not as a notification.
struct OneSignalAndroidSchema: VendorSchema {
    var vendor: Vendor { .oneSignal }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let custom = payload["custom"] else { return nil }
        var reader = ContentReader(payload, platform: .android)
        guard let fields = reader.object(custom, at: "custom"), fields["i"] != nil else { return nil }
        if case .object(let additional)? = fields["a"], additional["os_in_app_message_preview_id"] != nil {
            return .internalPush("OneSignal in-app message preview")
        }
        return AndroidSchemas.picture(payload["bicon"]?.string.flatMap(ContentReader.oneSignalAndroidImageURL))
    }

    /// Why a data map with OneSignal's Android keys (`alert`, `bicon`, `licon`, `sicon`, `bgac`)
    /// that this schema does not recognise is no OneSignal push: its SDK takes a push as its own
    /// only when `custom` holds the notification id `i`. `nil` for any other payload.
    static func unclaimed(_ payload: JSONObject) -> String? {
        guard payload["aps"] == nil, OneSignalAndroidSchema().recognize(payload) == nil else { return nil }
        let keys = ["title", "alert", "bicon", "licon", "sicon", "bgac"].filter { payload[$0] != nil }
        guard keys.contains(where: { $0 != "title" }) else { return nil }
        let theirs = keys.count == 1 ? "is OneSignal's key" : "are OneSignal's keys"
        let state = payload["custom"] == nil ? "custom is missing" : "custom holds no i"
        return "\(keys.joined(separator: ", ")) \(theirs), but \(state): OneSignal's SDK takes a push only when custom (a JSON string) holds the notification id i, so it shows nothing of this one and fetches no picture"
    }
}

/// FCM: a device bundle (`gcm.*` / `google.*` keys) or an HTTP v1 message (`notification`,
/// `android`, or either inside `message`). A payload with `fcm_options` is an APNs payload that
/// lacks its `aps`, left to the iOS schema.
///
/// An HTTP v1 message is a send request for every platform: when iPhones' image
/// (`apns.fcm_options.image`, else `notification.image`) is not the Android picture, each is
/// requested for its own platform, and fetched only when that platform is judged.
struct FirebaseAndroidSchema: VendorSchema {
    var vendor: Vendor { .firebase }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard payload["fcm_options"] == nil else { return nil }
        let isMessage = ContentReader.isFirebaseHTTPv1(payload)
        guard isMessage || payload.members.contains(where: { $0.key.hasPrefix("gcm.") || $0.key.hasPrefix("google.") })
        else { return nil }
        let android = ContentReader.firebaseAndroidPicture(payload)
        guard isMessage, let iOS = ContentReader.firebaseHTTPv1iOSImage(payload)?.url, iOS != android else {
            return AndroidSchemas.picture(android)
        }
        var requests: [RequestedAttachment] = []
        if let android { requests.append(RequestedAttachment(url: android, claimedType: nil, platforms: [.android])) }
        requests.append(RequestedAttachment(url: iOS, claimedType: nil, platforms: [.ios]))
        return .attachments(requests)
    }
}
