/// MoEngage: a push is MoEngage's when `moengage` is an object. The attachment is
/// `moengage.media-attachment` with a class hint `moengage.media-type` (image/audio/video).
///
/// Internal pushes: `moengage.silentPush: 1`, used for uninstall tracking across the whole
/// user base at once, unless it carries an `aps.alert`, which iOS shows all the same (a
/// warning says so).
struct MoEngageSchema: VendorSchema {
    var vendor: Vendor { .moengage }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let moengage = payload["moengage"]?.object else { return nil }
        if moengage["silentPush"]?.isSet == true, !payload.hasAPSAlert { return .internalPush("MoEngage silent push") }
        let type = moengage["media-type"]?.string.flatMap { $0.isEmpty ? nil : ClaimedType.kind($0) }
        return .attachment(moengage["media-attachment"], at: "moengage.media-attachment", claimedType: type)
    }
}
