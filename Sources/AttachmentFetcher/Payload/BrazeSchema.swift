/// Braze: a push is Braze's when `ab` is a non-empty object or `appboy_uninstall_tracking` is
/// present. The attachment is `ab.att.url` with an optional suffix hint `ab.att.type`.
///
/// Internal pushes: uninstall tracking (`appboy_uninstall_tracking`), geofence sync
/// (`ab.ab_sync_geos`), content-card sync (`ab.ab_cd`), test-trigger fetch
/// (`ab_push_fetch_test_triggers_key`), and a silent push (`aps.content-available: 1` with no
/// alert and no `mutable-content`), which has nothing to display. Each of those keys tells only
/// the SDK what to do: iOS shows any push with an `aps.alert` (a service extension cannot hide
/// it), so a push that carries one is shown, and its picture fetched, like any other (a warning
/// says so, `readBrazeIOS`).
struct BrazeSchema: VendorSchema {
    var vendor: Vendor { .braze }

    /// The internal push `payload` is when it asks the SDK to fetch test triggers (top-level
    /// `ab_push_fetch_test_triggers_key`, with or without `ab`).
    static func testTriggerFetch(_ payload: JSONObject) -> PayloadRecognition? {
        payload["ab_push_fetch_test_triggers_key"] == nil ? nil : .internalPush("Braze test-trigger fetch")
    }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        let ab = payload["ab"]?.object
        let uninstallTracking = payload["appboy_uninstall_tracking"]
        guard !(ab ?? [:]).isEmpty || uninstallTracking != nil else { return nil }

        if !payload.hasAPSAlert {
            if uninstallTracking?.isSet == true { return .internalPush("Braze uninstall tracking") }
            if ab?["ab_sync_geos"] != nil { return .internalPush("Braze geofence sync") }
            if ab?["ab_cd"] != nil { return .internalPush("Braze content-card sync") }
            if let fetch = Self.testTriggerFetch(payload) { return fetch }
        }
        if payload.isSilentPush { return .internalPush("Braze silent push (aps.content-available only)") }

        guard let attachment = payload[path: ["ab", "att"]] else { return .noAttachment }
        guard let object = attachment.object else { return .malformed("ab.att is not an object") }
        guard let urlValue = object["url"] else { return .noAttachment }
        guard let url = urlValue.string else { return .malformed("ab.att.url is not a string") }
        let type = object["type"]?.string.flatMap { $0.isEmpty ? nil : ClaimedType.fileExtension($0) }
        return .attachments([RequestedAttachment(url: url, claimedType: type)])
    }
}

extension JSONObject {
    /// Whether `aps.alert` is there: iOS shows such a push whatever its other keys say.
    var hasAPSAlert: Bool { self["aps"]?.object?["alert"] != nil }

    /// `aps.content-available` is set, and there is neither an alert nor `mutable-content`:
    /// iOS shows nothing for such a push.
    var isSilentPush: Bool {
        guard let aps = self["aps"]?.object, aps["content-available"]?.isSet == true else { return false }
        return aps["alert"] == nil && aps["mutable-content"]?.isSet != true
    }
}
