/// Braze. iOS: the APNs layer; tap target `ab_uri` / `ab_use_webview`; buttons from Braze's
/// default categories (`ab_cat_yes_no`…) or `ab.ab_cat` (`a_t`, `a_uri`, `a_use_webview`);
/// extras are the top-level keys but `aps`, `ab`, `ab_uri`, `ab_use_webview`; campaign the
/// top-level `c`, else `ab.c`.
///
/// Android (`_ab`): title `t`, body `a`, summary `s`, expanded title and text `ab_bt` / `ab_bs`
/// (the text is the body with a picture and neither `s` nor `ab_bs`), badge `ab_bc`, sound `sd`
/// (`d` = default), channel `ab_nc`, priority `p`, category `ab_ct`, accent colour `ac` (decimal
/// ARGB), lock-screen visibility `ab_vs` and public version `ab_pn` (`{t, a, s}`), tag the custom
/// notification id `n` (a 32-bit integer), large icon `ab_li`, inline
/// image `ab_iip`, picture a push story's (`ab_c`) first page's `ab_c0_i`, else `ab_iu`, else
/// `extra.appboy_image_url`, tap target `uri` /
/// `ab_use_webview`, buttons `ab_a*_a` / `_t` / `_uri` / `_use_webview` / `_id`, extras the
/// JSON-in-string `extra`, campaign `cid`. Shown only with both `t` and `a`.
extension ContentReader {
    /// Braze's default iOS categories and their fixed actions: id, English title, and what a tap
    /// does without a URL. Braze's API reference ("Apple push action button object for Braze
    /// default buttons") gives Accept, Yes, Confirm and More the actions `OPEN_APP` (their
    /// default), `URI` or `DEEP_LINK`, and Decline, No and Cancel `CLOSE` alone.
    static let brazeCategories: [String: [(id: String, title: String, tap: NotificationContent.Button.Tap)]] = [
        "ab_cat_accept_decline": [("ab_pb_accept", "Accept", .opensApp), ("ab_pb_decline", "Decline", .dismisses)],
        "ab_cat_yes_no": [("ab_pb_yes", "Yes", .opensApp), ("ab_pb_no", "No", .dismisses)],
        "ab_cat_confirm_cancel": [("ab_pb_confirm", "Confirm", .opensApp), ("ab_pb_cancel", "Cancel", .dismisses)],
        "ab_cat_more": [("ab_pb_more", "More", .opensApp)],
    ]

    mutating func readBrazeIOS() {
        readAPNs()
        setExtras(from: payload) { ["aps", "ab", "ab_uri", "ab_use_webview"].contains($0) }
        content.openURL = text("ab_uri")
        content.openInWebview = flag(payload["ab_use_webview"], at: "ab_use_webview") ?? false
        let ab = object(payload["ab"], at: "ab")
        warnInternalKeysShown(
            [
                ("appboy_uninstall_tracking", payload["appboy_uninstall_tracking"]?.isSet == true),
                ("ab.ab_sync_geos", ab?["ab_sync_geos"] != nil), ("ab.ab_cd", ab?["ab_cd"] != nil),
                ("ab_push_fetch_test_triggers_key", payload["ab_push_fetch_test_triggers_key"] != nil),
            ], sdk: "Braze")
        // Braze's payload description puts the campaign id `c` (which may be null) at the top
        // level, where it stays among the extras; `ab.c` [U] is read when that one is not there.
        content.campaignID = identifier(payload["c"], at: "c") ?? identifier(ab?["c"], at: "ab.c")
        // iOS shows the buttons of the category `aps.category` names (Braze's defaults are
        // registered by its SDK); the older `ab.ab_cat` form gives the buttons only where
        // there is none. With both, an `ab_cat` entry whose `a_id` is a default button's id
        // gives that button its URL.
        let listed = ab?["ab_cat"].map { brazeIOSButtons($0) }
        if let category = content.category {
            if let listed, !listed.isEmpty {
                warnings.append(
                    "aps.category '\(category)' is set: iOS shows that category's buttons, not ab.ab_cat's titles (\(listed.count) in ab.ab_cat)")
            }
            let byID = Dictionary((listed ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            content.buttons = (Self.brazeCategories[category] ?? []).map { id, title, tap in
                NotificationContent.Button(id: id, title: title, url: byID[id]?.url, webview: byID[id]?.webview ?? false, tap: tap)
            }
        } else if let listed {
            content.buttons = listed
        }
    }

    /// `ab.ab_cat`: an array of buttons, or an object from action id to button.
    private mutating func brazeIOSButtons(_ value: JSONValue) -> [NotificationContent.Button] {
        let entries: [(String?, JSONValue)]
        switch value {
        case .array(let list): entries = list.map { (nil, $0) }
        case .object(let byID): entries = byID.sortedByKey.map { ($0.key, $0.value) }
        default:
            warnings.append("ab.ab_cat is neither an array nor an object")
            return []
        }
        var buttons: [NotificationContent.Button] = []
        for (index, (key, entry)) in entries.enumerated() {
            let path = "ab.ab_cat.\(key ?? String(index))"
            guard let button = object(entry, at: path) else { continue }
            let id = identifier(button["a_id"], at: "\(path).a_id") ?? key ?? String(index)
            buttons.append(
                .init(
                    id: id, title: text(button["a_t"], at: "\(path).a_t"), url: text(button["a_uri"], at: "\(path).a_uri"),
                    webview: flag(button["a_use_webview"], at: "\(path).a_use_webview") ?? false))
        }
        return buttons
    }

    /// Whether Braze's SDK shows the push: it has the keys `t` and `a`, empty or not
    /// (`isNotificationMessage`).
    static func brazeAndroidShows(_ payload: JSONObject) -> Bool {
        payload["t"] != nil && payload["a"] != nil
    }

    mutating func readBrazeAndroid() {
        content.title = text("t")
        content.body = text("a")
        content.visible = Self.brazeAndroidShows(payload)
        content.summary = text("s")
        content.expandedTitle = text("ab_bt")
        content.expandedText = text("ab_bs")
        if let count = integer(payload["ab_bc"], at: "ab_bc") { content.badge = .set(count) }
        // A blank channel id is none: the SDK falls back to its default channel.
        content.channel = nonBlankText("ab_nc")
        if let sound = text("sd") { content.sound = sound == "d" ? "default" : sound }
        warnSoundBeforeChannels("Braze's sd")
        // `getNotificationPriority`: a value outside −2…2 is logged and the default used.
        if let priority = integer(payload["p"], at: "p") {
            if (-2...2).contains(priority) {
                content.priority = priority
            } else {
                content.priority = 0
                warnings.append("p is \(priority), outside −2…2: Braze's SDK gives the notification the default priority (0)")
            }
        }
        content.category = text("ab_ct")
        // `setAccentColorIfPresentAndSupported`: `ac` as `parseStringAsColorInt` reads it, else
        // (one that does not parse too) the app's default accent colour.
        if let value = text("ac") {
            if let (color, exact) = AndroidColor.decimal(value) {
                if !exact {
                    warnings.append("ac \(value) does not fit in 32 bits: Braze's SDK keeps its low 32 bits, \(AndroidColor.text(color))")
                }
                setAccentColor(color, from: "ac", shown: value, notation: .decimal)
            } else {
                warnings.append(
                    "ac '\(value)' is not a decimal ARGB number (such as 4278190335 for #FF0000FF): Braze's SDK uses the app's default accent colour")
            }
        }
        // `setVisibilityIfPresentAndSupported` sets only a visibility Android defines.
        readCheckedVisibility("ab_vs", sdk: "Braze's SDK")
        // `BrazePushReceiver`: a push duration `nd` (milliseconds) sets an alarm that removes the
        // notification, from 1,000 ms on (`setNotificationDurationAlarm`).
        switch javaInt("nd") {
        case nil: break
        case .success(let milliseconds)? where milliseconds >= 1000: content.dismissAfterSeconds = Double(milliseconds) / 1000
        case .success(let milliseconds)?:
            warnings.append("nd is \(milliseconds) ms, under 1000: Braze's SDK sets no timer, and the notification stays")
        case .failure(let failure)?:
            warnings.append("nd '\(failure.text)' is not an integer (milliseconds): Braze's SDK sets no timer, and the notification stays")
        }
        // `setPublicVersionIfPresentAndSupported`: `a`, `t` and `s` of `ab_pn`'s object.
        readPublicVersion("ab_pn", fields: ("t", "a", "s"), emptyIsNone: true)
        // `BrazeNotificationUtils.getNotificationId`: a custom notification id `n`
        // (`parseStringAsInteger`) is the id the push is posted under, so a later push with the
        // same `n` replaces it; without one the id is a hash of the title and body.
        if let id = integer(payload["n"], at: "n") {
            if Int32(exactly: id) != nil {
                content.tag = String(id)
            } else {
                warnings.append("n is \(id), not a 32-bit integer: Braze's SDK takes it for no custom notification id")
            }
        }
        content.largeIconURL = text("ab_li")
        // The receiver asks only whether the key is there (`containsKey`), whatever its value.
        if payload["ab_iip"] != nil { content.inlineImage = true }
        // A blank deep link opens the app (`isNullOrBlank`); the web view only for "true" in
        // any case (`"true".equals(…, ignoreCase = true)`).
        content.openURL = nonBlankText("uri")
        content.openInWebview = text("ab_use_webview")?.lowercased() == "true"
        content.campaignID = text("cid")
        let extra = object(payload["extra"], at: "extra") ?? [:]
        content.imageURL = text("ab_iu") ?? text(extra["appboy_image_url"], at: "extra.appboy_image_url")
        // A push story (`ab_c`) shows its pages in place of any big picture: page 1's image
        // (`ab_c0_i`) is the picture it opens on.
        let pages = Self.brazeStoryPages(payload)
        if pages > 0, let first = text("ab_c0_i") {
            let replaced = content.imageURL.map { " in place of \($0)" } ?? ""
            content.imageURL = first
            let page = [text("ab_c0_t"), text("ab_c0_st")].compactMap { $0 }.map { "'\($0)'" }.joined(separator: " / ")
            warnings.append(
                "ab_c: a Braze push story of \(pages) page\(pages == 1 ? "" : "s"): Android shows page 1 (\(first)\(page.isEmpty ? "" : ", " + page))\(replaced), and shows no picture when that image does not load; the other pages' images (ab_c1_i…) are not fetched here")
        }
        // A conversation push (`ab_cp`), on Android 7.1 (API 25) and later, is drawn as a
        // messaging style from its `ab_c_*` keys, ahead of any big picture (and of a story).
        if payload["ab_cp"] != nil, pages == 0 {
            let picture = content.imageURL.map { ", not the picture \($0) (which earlier versions show)" } ?? ""
            warnings.append(
                "ab_cp: a Braze conversation push: Android 7.1 (API 25) and later show its messages (ab_c_mt*, not modelled here)\(picture)")
        }
        // The SDK's big picture shows the body under the title when neither line is set: without
        // it, "the message would be blank in expanded mode".
        if content.expandedText == nil, content.summary == nil, content.imageURL != nil, content.inlineImage != true {
            content.expandedText = content.body
        }
        setExtras(from: extra) { $0 == "appboy_image_url" || $0 == "appboy_uninstall_tracking" }
        var buttons: [NotificationContent.Button] = []
        for index in 0..<32 {
            guard let type = text("ab_a\(index)_a") else { break }
            // `ab_uri` opens its URL, or the app when it has none; `ab_open` the app; `ab_none`
            // only dismisses; the SDK does nothing for another type.
            let tap: NotificationContent.Button.Tap? =
                switch type {
                case "ab_uri", "ab_open": .opensApp
                case "ab_none": .dismisses
                default: nil
                }
            buttons.append(
                .init(
                    id: text("ab_a\(index)_id") ?? "ab_a\(index)", title: text("ab_a\(index)_t"),
                    url: type == "ab_uri" ? text("ab_a\(index)_uri") : nil,
                    webview: type == "ab_uri" && flag(payload["ab_a\(index)_use_webview"], at: "ab_a\(index)_use_webview") == true, tap: tap))
        }
        content.buttons = buttons
        // Braze's silent push has neither `t` nor `a`: one with either of them, or a picture, that
        // lacks the other is a mistake (its internal pushes are recognised as such).
        if !content.visible, payload["t"] != nil || payload["a"] != nil || content.imageURL != nil,
            !AndroidSchemas.isInternal(payload, by: BrazeAndroidSchema())
        {
            warnNothingShown(without: ["t", "a"].filter { payload[$0] == nil }, sdk: "Braze's SDK", rule: "with both keys t and a (empty or not)")
        }
    }

    /// How many pages a Braze push story has: none without `ab_c`, else as many as there are
    /// non-blank `ab_c<i>_i` from 0 on (`BrazeNotificationPayload.parsePushStoryData`).
    static func brazeStoryPages(_ payload: JSONObject) -> Int {
        guard payload["ab_c"] != nil else { return 0 }
        var pages = 0
        while pages < 64, let image = payload["ab_c\(pages)_i"]?.string, !image.allSatisfy(\.isWhitespace) { pages += 1 }
        return pages
    }

    /// Braze Android's picture: a push story's first page's image, else `ab_iu`, else
    /// `appboy_image_url` in the JSON-in-string `extra`.
    static func brazeAndroidPicture(_ payload: JSONObject) -> String? {
        if brazeStoryPages(payload) > 0, let url = payload["ab_c0_i"]?.string { return url }
        if let url = payload["ab_iu"]?.string, !url.isEmpty { return url }
        var reader = ContentReader(payload, platform: .android)
        return reader.object(payload["extra"], at: "extra")?["appboy_image_url"]?.string.flatMap { $0.isEmpty ? nil : $0 }
    }
}
