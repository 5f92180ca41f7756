/// CleverTap. iOS: the APNs layer; tap target `wzrk_dl`; campaign `wzrk_id`; extras are the
/// top-level keys but `aps`, CleverTap's own (`wzrk_*`, `W$*`) among them: the SDK hands the app
/// the payload less `aps` (`CleverTap.m`, `_notifyPushNotificationTapped`, to
/// `pushNotificationTappedWithCustomExtras`).
///
/// Android (`wzrk_pn`): title `nt`, body `nm`, summary (subText) `wzrk_st`, expanded text `wzrk_nms` (only
/// with a picture, the body when absent), picture
/// `wzrk_bp` (an http(s) URL), large icon `ico` (none when `wzrk_hide_large_icon` is `"true"` in
/// any case), tap target `wzrk_dl`, channel `wzrk_cid`, accent colour `wzrk_clr` (one that
/// `Color.parseColor` throws on shows nothing), priority `pr` (`high`, `max`), sound
/// `wzrk_sound` (`true` or exactly `"true"` = default, any other string a raw resource's name
/// without `.mp3` / `.ogg` / `.wav`), count `wzrk_bc` (sets the badge), buttons the JSON-in-string
/// `wzrk_acts` (`id`, `l`, `dl`), tag the collapse key `wzrk_ck`, ongoing `wzrk_sticky` (`"true"` in
/// any case; its SDK sets it from Android 14 on), campaign `wzrk_id`. `wzrk_gif` is a warning
/// (Android 14 and later show it in place of `wzrk_bp`). Shown only
/// with a non-empty `nm` and without `wzrk_pn_s` `"true"` (in any case; another value does not
/// silence it). Extras are every data key the app receives (FCM's own keys are not among them),
/// CleverTap's included: the click listener gets the whole payload.
extension ContentReader {
    mutating func readCleverTapIOS() {
        readAPNs()
        setExtras(from: payload) { $0 == "aps" }
        content.openURL = text("wzrk_dl")
        content.campaignID = text("wzrk_id")
        warnInternalKeysShown(CleverTapSchema.testPayloadKeys.map { ($0, payload[$0] != nil) }, sdk: "CleverTap")
    }

    mutating func readCleverTapAndroid() {
        content.title = text("nt")
        content.body = text("nm")
        // The SDK's `equalsIgnoreCase("true")`: any other value ("1", "yes") leaves the push shown.
        let silent = payload["wzrk_pn_s"].map { $0 == .bool(true) || $0.string?.lowercased() == "true" } ?? false
        content.visible = content.body != nil && !silent
        // `setSubText`: Android's summary line, as Braze's `s` and MoEngage's `gcm_subtext`.
        content.summary = text("wzrk_st")
        content.imageURL = Self.cleverTapAndroidPicture(payload)
        if content.imageURL == nil, let value = text("wzrk_bp") {
            warnings.append("wzrk_bp '\(value)' is not an http(s) URL: CleverTap's SDK shows a picture only from a URL starting with http, so this push shows none")
        }
        // From Android 14 (API 34) the renderer first tries `wzrk_gif` (when it starts with
        // `http`) as an animated big picture, and falls back to `wzrk_bp` (decompiled 7.x). The
        // picture fetched and checked here stays `wzrk_bp`, which every version shows.
        if let gif = text("wzrk_gif") {
            warnings.append(
                gif.hasPrefix("http")
                    ? "wzrk_gif: on Android 14 (API 34) and later CleverTap's SDK shows \(gif) (animated) in place of wzrk_bp, and wzrk_bp when that GIF cannot be loaded; earlier versions show wzrk_bp"
                    : "wzrk_gif '\(gif)' does not start with http: CleverTap's SDK ignores it")
        }
        // `if (SDK_INT >= 34) setOngoing("true".equalsIgnoreCase(extras.getString("wzrk_sticky")))`.
        if payload["wzrk_sticky"].map({ $0 == .bool(true) || $0.string?.lowercased() == "true" }) == true {
            content.ongoing = true
            warnings.append("wzrk_sticky: CleverTap's SDK makes the notification ongoing (kept by Clear all) on Android 14 (API 34) and later only; earlier versions ignore it")
        }
        // An empty `nm` is its SDK's uninstall ping: only a push with a title or a picture but no
        // `nm` is a mistake (test payloads are recognised as internal).
        if content.body == nil, !silent, content.title != nil || content.imageURL != nil, CleverTapSchema.testPayload(payload) == nil {
            warnNothingShown(without: ["nm"], sdk: "CleverTap's SDK", rule: "with a non-empty nm (one without is its uninstall ping)")
        }
        // The expanded big picture's line, the body when not given; without a picture the expanded
        // view is the body's own (BigTextStyle), whatever `wzrk_nms` says.
        content.expandedText = content.imageURL == nil ? nil : text("wzrk_nms") ?? content.body
        // `CoreNotificationRenderer.renderNotification` sets the large icon unless
        // `"true".equalsIgnoreCase(extras.getString("wzrk_hide_large_icon"))`.
        let hideLargeIcon = payload["wzrk_hide_large_icon"].map { $0 == .bool(true) || $0.string?.lowercased() == "true" } ?? false
        content.largeIconURL = hideLargeIcon ? nil : text("ico")
        content.openURL = text("wzrk_dl")
        content.channel = text("wzrk_cid")
        // `CoreNotificationRenderer.renderNotification` calls `Color.parseColor` on `wzrk_clr`
        // unguarded: what it throws ends the rendering (`PushProviders`: "Couldn't render
        // notification"), so nothing is shown.
        let colorShown = readParsedColor(
            payload["wzrk_clr"], at: "wzrk_clr", emptyIsNone: false, otherwise: "CleverTap's SDK throws while drawing the push, and shows nothing")
        if !colorShown { content.visible = false }
        // `PushProviders` posts a push with a collapse key under the key's number (the key
        // itself when it is an integer, else its `hashCode()`): a later push with the same key
        // replaces it.
        content.tag = identifier(payload["wzrk_ck"], at: "wzrk_ck")
        // `CoreNotificationRenderer.renderNotification`: `setTimeoutAfter(Long.parseLong(
        // wzrk_dismiss) * 1000)`, skipped (logged) for a value that is no integer.
        if let seconds = rawString(payload["wzrk_dismiss"], at: "wzrk_dismiss") {
            if let value = Int64(seconds) {
                if value > 0 { content.dismissAfterSeconds = Double(value) }
            } else {
                warnings.append("wzrk_dismiss '\(seconds)' is not an integer (seconds): CleverTap's SDK sets no timer, and the notification stays")
            }
        }
        switch text("pr") {
        case "high": content.priority = 1
        case "max": content.priority = 2
        default: break
        }
        // `CoreNotificationRenderer.setSound`: the default sound for `true` or the string "true"
        // (`equals`, so "TRUE" is not it); any other non-empty string names a raw resource, with
        // a trailing `.mp3`, `.ogg` or `.wav` dropped ("false" is a resource named "false").
        if let sound = payload["wzrk_sound"] {
            if sound == .bool(true) || sound.string == "true" {
                content.sound = "default"
            } else if sound != .bool(false), let name = text(sound, at: "wzrk_sound") {
                let stripped = [".mp3", ".ogg", ".wav"].first { name.hasSuffix($0) }.map { String(name.dropLast($0.count)) }
                content.sound = stripped ?? name
            }
            warnSoundBeforeChannels("CleverTap's wzrk_sound")
        }
        if let count = integer(payload["wzrk_bc"], at: "wzrk_bc"), count >= 0 { content.badge = .set(count) }
        content.campaignID = text("wzrk_id")
        if let actions = array(payload["wzrk_acts"], at: "wzrk_acts") {
            for (index, entry) in actions.enumerated() {
                let path = "wzrk_acts[\(index)]"
                guard let action = object(entry, at: path),
                    let id = text(action["id"], at: "\(path).id"), let label = text(action["l"], at: "\(path).l")
                else { continue }
                // Without a deep link, the button's intent is the app's launch intent
                // (`INotificationRenderer`); `ac` decides only whether the notification goes.
                content.buttons.append(.init(id: id, title: label, url: text(action["dl"], at: "\(path).dl"), tap: .opensApp))
            }
        }
        // The Push Templates module draws a push that names a template (`pt_id`) from its own
        // `pt_*` keys, which are not read here.
        if let template = text("pt_id") {
            warnings.append("pt_id '\(template)': CleverTap's Push Templates draw this push from its pt_* keys (not modelled here); the texts above are what it shows without the module")
        }
        setExtras(from: payload) { Self.isFCMKey($0) }
    }

    /// CleverTap Android's picture: `wzrk_bp` when it starts with `http`.
    static func cleverTapAndroidPicture(_ payload: JSONObject) -> String? {
        guard let url = payload["wzrk_bp"]?.string, url.hasPrefix("http") else { return nil }
        return url
    }
}
