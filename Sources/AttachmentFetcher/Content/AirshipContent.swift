/// Airship. iOS: the APNs layer, with `com.urbanairship.media_attachment.content` replacing the
/// title, subtitle and body it gives; its `thumbnail_id` and `options` (`crop`, `time`,
/// `hidden`); tap target the top-level actions `^d` / `deep_link_action`, else `^u` /
/// `open_external_url_action` (or a wallet pass's `^w` / `wallet_action`), else a landing page
/// `^p` (in a web view); buttons those of `aps.category` (a built-in Airship group's, else the
/// app's), with `com.urbanairship.interactive_actions` (button id → actions); send id `_`.
/// A Message Center action (`^mc` / `open_mc_action`) names the message a tap opens. Extras are
/// the top-level keys but `aps`, `_`, `_uamid`, `com.urbanairship.*` and action names.
///
/// Android (`com.urbanairship.*`): body `com.urbanairship.push.ALERT`, title `.title`, summary
/// `.summary`, from the JSON-in-string `.style` of type `big_picture`, `big_text` or `inbox` the
/// expanded title `title` and the expanded text (`summary`, `big_text`, or `lines` one per line),
/// picture that style's `big_picture` when its type is `big_picture`,
/// tap target the JSON-in-string `.actions` (a rich message id `_uamid` adds Message Center's),
/// buttons those of the group `.interactive_type`, with `.interactive_actions`, category
/// `.category`, channel `.notification_channel`, priority `.priority` (clamped to −2…2; the
/// delivery priority `"high"` and any other value that is no 32-bit integer are 0), tag
/// `.notification_tag`, small icon `.icon`, accent colour `.icon_color`, lock-screen visibility
/// `.visibility` (clamped to −1…1; public when it is absent or no integer, Airship's default),
/// public version `.public_notification` (`{title, alert, summary}`), sound `.sound`, send id
/// `.push.PUSH_ID`. A `big_text` or `inbox` style's `summary` is the summary line. Shown only with
/// a non-empty ALERT.
extension ContentReader {
    static let airshipPrefix = "com.urbanairship."
    static let airshipActionNames: Set<String> = [
        "deep_link_action", "open_external_url_action", "landing_page_action", "wallet_action",
    ]

    mutating func readAirshipIOS() {
        readAPNs()
        setExtras(from: payload) {
            $0 == "aps" || $0 == "_" || $0 == "_uamid" || $0.hasPrefix(Self.airshipPrefix) || $0.hasPrefix("^")
                || Self.airshipActionNames.contains($0)
        }
        content.campaignID = text("_")
        warnInternalKeysShown([("com.urbanairship.remote-data.update", payload["com.urbanairship.remote-data.update"] != nil)], sdk: "Airship")
        if let target = airshipActionTarget(payload, at: "") {
            (content.openURL, content.openInWebview) = target
        }
        // The tap runs the whole userInfo as actions: a Message Center action among them opens
        // its message; `_uamid` alone only refreshes the inbox.
        content.messageCenterID = airshipMessageCenter(payload, at: "")
        airshipButtons(group: content.category, at: "aps.category")
        let key = "com.urbanairship.media_attachment"
        guard let media = object(payload[key], at: key) else { return }
        // The extension decodes the object whole or not at all: then the original content
        // shows, no `content` override, no thumbnail options.
        let decoded = AirshipSchema.decode(media)
        // It attaches all of the media or none, and sets the override's texts only with them
        // (`OutcomeDraft.finish`, `original`).
        if case .success = decoded, serviceExtensionRuns {
            content.allOrNothing = .init(title: content.title, subtitle: content.subtitle, body: content.body, visible: content.visible)
        }
        if let override = object(media["content"], at: "\(key).content"),
            extensionMakes("\(key).content replaces the alert's texts", instead: "the alert stands as aps gives it")
        {
            // iOS runs a service extension only for a push that shows an alert: with no text in
            // aps, nothing is shown and nothing replaced.
            if case .failure(let failure) = decoded {
                warnings.append("\(failure.problem): Airship's extension applies nothing of \(key), \(key).content included")
            } else if !content.hasText {
                warnings.append("\(key).content replaces an alert's texts, but aps has none: iOS runs no service extension and shows nothing")
            } else {
                if override["title"] != nil { content.title = text(override["title"], at: "\(key).content.title") }
                if override["subtitle"] != nil { content.subtitle = text(override["subtitle"], at: "\(key).content.subtitle") }
                if override["body"] != nil { content.body = text(override["body"], at: "\(key).content.body") }
                content.visible = content.hasText
            }
        }
        guard case .success = decoded else { return }
        content.thumbnailID = text(media["thumbnail_id"], at: "\(key).thumbnail_id")
        guard let options = object(media["options"], at: "\(key).options") else { return }
        if let crop = object(options["crop"], at: "\(key).options.crop") {
            let values = ["x", "y", "width", "height"].map { number(crop[$0], at: "\(key).options.crop.\($0)") }
            if let x = values[0], let y = values[1], let width = values[2], let height = values[3] {
                content.crop = .init(x: x, y: y, width: width, height: height)
            }
        }
        content.time = number(options["time"], at: "\(key).options.time")
        content.hidden = flag(options["hidden"], at: "\(key).options.hidden")
    }

    /// The buttons of the button group (Android) or category (iOS) `group`, named at `path`, with
    /// the actions `com.urbanairship.interactive_actions` (`{buttonId: {actionName: value}}`) gives
    /// them. A built-in group (`AirshipButtonGroups`) shows all its buttons, titled; the app's own
    /// group shows the app's buttons, taken to be the actions' ids, untitled; no group, or a `ua_`
    /// group Airship does not have, shows none.
    private mutating func airshipButtons(group: String?, at path: String) {
        let actionsPath = "com.urbanairship.interactive_actions"
        let byID = object(payload[actionsPath], at: actionsPath) ?? [:]
        func button(_ id: String, title: String?, tap: NotificationContent.Button.Tap? = nil) -> NotificationContent.Button {
            let target = object(byID[id], at: "\(actionsPath).\(id)").flatMap { airshipActionTarget($0, at: "\(actionsPath).\(id)") }
            return .init(id: id, title: title, url: target?.0, webview: target?.1 ?? false, tap: tap)
        }
        guard let group else {
            if !byID.isEmpty { warnings.append("\(actionsPath) has actions, but \(path) names no button group: no buttons are shown") }
            content.buttons = []
            return
        }
        if let builtIn = AirshipButtonGroups.group(group, on: content.platform) {
            content.buttons = builtIn.map {
                button($0.id, title: $0.title, tap: AirshipButtonGroups.opensApp($0.id, inGroup: group) ? .opensApp : .dismisses)
            }
        } else if content.platform == .android, group.hasPrefix("ua_") {
            warnings.append("\(path) '\(group)' is no Airship button group (and apps cannot register ua_ groups): no buttons are shown")
            content.buttons = []
        } else {
            var seen: Set<String> = []
            content.buttons = byID.members.map(\.key).filter { seen.insert($0).inserted }.map { button($0, title: nil) }
        }
    }

    mutating func readAirshipAndroid() {
        content.body = text("com.urbanairship.push.ALERT")
        content.visible = content.body != nil
        content.title = text("com.urbanairship.title")
        // `AirshipNotificationProvider` titles a push without one (or with an empty one) with the
        // app's name.
        if content.visible, content.title?.isEmpty != false {
            warnings.append("com.urbanairship.title is missing: Airship's SDK shows the app's name as the title")
        }
        content.summary = text("com.urbanairship.summary")
        // The SDK applies a style of a type it knows: its title, and as the expanded text the big
        // picture's summary, the big text or the inbox's lines (their summary is the summary line).
        let stylePath = "com.urbanairship.style"
        if let style = object(payload[stylePath], at: stylePath),
            let type = text(style["type"], at: "\(stylePath).type"), ["big_picture", "big_text", "inbox"].contains(type)
        {
            content.expandedTitle = text(style["title"], at: "\(stylePath).title")
            switch type {
            case "big_picture":
                // `StyleNotificationExtender` applies the style only with a picture to fetch:
                // without one, neither its title nor its summary shows.
                if let picture = text(style["big_picture"], at: "\(stylePath).big_picture") {
                    content.expandedText = text(style["summary"], at: "\(stylePath).summary")
                    content.imageURL = picture
                } else {
                    content.expandedTitle = nil
                    warnings.append("\(stylePath) is big_picture without a big_picture URL: Airship's SDK applies no style, so its title and summary do not show")
                }
            case "big_text":
                content.expandedText = text(style["big_text"], at: "\(stylePath).big_text")
            default:
                let lines = (array(style["lines"], at: "\(stylePath).lines") ?? []).enumerated().compactMap { index, line in
                    text(line, at: "\(stylePath).lines[\(index)]")
                }
                content.expandedText = lines.isEmpty ? nil : lines.joined(separator: "\n")
            }
            // A big text's or inbox's summary is the expanded view's summary line (the style's
            // `setSummaryText`), in place of the notification's own while expanded.
            if type != "big_picture", let summary = text(style["summary"], at: "\(stylePath).summary") {
                if let own = content.summary, own != summary {
                    warnings.append("expanded, the notification shows \(stylePath)'s summary '\(summary)' instead of '\(own)'")
                } else {
                    content.summary = summary
                }
            }
        }
        let actionsPath = "com.urbanairship.actions"
        let actions = payload[actionsPath] == nil ? [:] : object(payload[actionsPath], at: actionsPath)
        if let actions, let target = airshipActionTarget(actions, at: actionsPath) {
            (content.openURL, content.openInWebview) = target
        }
        // `PushMessage.actions` adds Message Center's action for a rich message id over the
        // payload's own; actions that do not parse are none at all.
        if let actions {
            let richMessage = text("_uamid")
            content.messageCenterID = richMessage ?? airshipMessageCenter(actions, at: actionsPath)
        }
        // The notification's category is `PushMessage.category`; the interactive type names
        // the button group alone.
        content.category = text("com.urbanairship.category")
        airshipButtons(group: text("com.urbanairship.interactive_type"), at: "com.urbanairship.interactive_type")
        content.channel = text("com.urbanairship.notification_channel")
        // `AirshipNotificationProvider` posts a push with `PushMessage.notificationTag` under that
        // tag and one fixed id (`TAG_NOTIFICATION_ID`): a later push with the same tag replaces it.
        content.tag = text("com.urbanairship.notification_tag")
        // `PushMessage.priority` reads the key with Kotlin's 32-bit `toInt()`, clamped to −2…2,
        // and takes 0 when that fails: the delivery priority "high", which shares the key, is the
        // default display priority, and so is any other value that is no 32-bit integer (with a
        // warning, as it is no priority at all).
        if let priority = text("com.urbanairship.priority") {
            if let value = Int32(priority) {
                content.priority = min(2, max(-2, Int(value)))
            } else {
                content.priority = 0
                if priority != "high" {
                    warnings.append(
                        "com.urbanairship.priority is '\(priority)', not a 32-bit integer: Airship's SDK gives the notification the default priority (0)")
                }
            }
        }
        // `PushMessage.getIcon` looks the drawable up by name (else the app's default icon);
        // `getIconColor` parses the colour (else the app's default accent colour).
        content.smallIcon = text("com.urbanairship.icon")
        let colorKey = "com.urbanairship.icon_color"
        readParsedColor(payload[colorKey], at: colorKey, emptyIsNone: false, otherwise: "Airship's SDK uses the app's default accent colour")
        // `PushMessage.visibility`: the key read with Kotlin's 32-bit `toInt()`, clamped to −1…1;
        // public (1) when the key is absent, empty or no integer. The notification provider sets
        // it on every notification it posts, so public is what the lock screen shows by default.
        let visibilityKey = "com.urbanairship.visibility"
        switch javaInt(visibilityKey) {
        case nil: content.lockScreenVisibility = .public
        case .success(let value)?:
            let visibility = NotificationContent.LockScreenVisibility(rawValue: min(1, max(-1, value)))
            content.lockScreenVisibility = visibility
            if let visibility, !(-1...1).contains(value) {
                warnings.append("\(visibilityKey) is \(value), outside −1…1: Airship's SDK makes it \(visibility.name)")
            }
        case .failure(let failure)?:
            content.lockScreenVisibility = .public
            warnings.append("\(visibilityKey) '\(failure.text)' is not a 32-bit integer: Airship's SDK makes the notification public, its default")
        }
        // `PublicNotificationExtender`: `title` and `alert` (an empty string when absent) and
        // `summary` of the object, set whatever it holds.
        readPublicVersion("com.urbanairship.public_notification", fields: ("title", "alert", "summary"), emptyIsNone: false)
        content.sound = text("com.urbanairship.sound")
        // The Kotlin `AirshipNotificationProvider` sets no sound of its own; the older Java one
        // set it before Android 8 only.
        if content.sound != nil {
            content.soundBeforeAndroid8Only = true
            warnings.append(
                "com.urbanairship.sound is not played by Airship's current SDK, which leaves the sound to the channel (\(content.channel ?? "the default channel")); older SDKs play it only before Android 8 (API 26)")
        }
        content.campaignID = text("com.urbanairship.push.PUSH_ID")
        setExtras(from: payload) { $0.hasPrefix(Self.airshipPrefix) || $0 == "_uamid" || Self.isFCMKey($0) }
        // A push without an alert is a data push, which only the app sees: one with a title or a
        // picture but no alert is a mistake (pings and refreshes are recognised as internal).
        if content.body == nil, content.hasText || content.imageURL != nil, !AndroidSchemas.isInternal(payload, by: AirshipAndroidSchema()) {
            warnNothingShown(
                without: ["com.urbanairship.push.ALERT"], sdk: "Airship's SDK",
                rule: "with a non-empty com.urbanairship.push.ALERT (one without is a data push, which only the app sees)")
        }
    }

    /// The message that Message Center's action in `actions` (`^mc` / `open_mc_action`) opens:
    /// its value, a list's first, `"auto"` the push's `_uamid`; an empty string (or none to
    /// name) for the inbox; `nil` without the action.
    private mutating func airshipMessageCenter(_ actions: JSONObject, at path: String) -> String? {
        guard let (name, value) = [("^mc", actions["^mc"]), ("open_mc_action", actions["open_mc_action"])]
            .first(where: { $0.1 != nil }).map({ ($0.0, $0.1!) })
        else { return nil }
        let at = path.isEmpty ? name : "\(path).\(name)"
        var id: String?
        switch value {
        case .array(let items): id = items.first.flatMap { text($0, at: "\(at)[0]") }
        case .null: id = nil
        default: id = text(value, at: at)
        }
        guard let id, !id.isEmpty else { return "" }
        return id == "auto" ? text("_uamid") ?? "" : id
    }

    /// Airship Android's picture: the `big_picture` of a `big_picture` style.
    static func airshipAndroidPicture(_ payload: JSONObject) -> String? {
        var reader = ContentReader(payload, platform: .android)
        guard let style = reader.object(payload["com.urbanairship.style"], at: "style"),
            style["type"]?.string == "big_picture", let url = style["big_picture"]?.string, !url.isEmpty
        else { return nil }
        return url
    }
}
