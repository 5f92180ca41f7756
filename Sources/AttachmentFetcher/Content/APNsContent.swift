/// The APNs layer every iOS vendor inherits: `aps.alert` (a string, or title / subtitle / body
/// and their localisation keys), `aps.badge` (absolute), `aps.sound` (a name, or a critical
/// sound's dictionary), `category`, `thread-id`, `interruption-level`, `relevance-score`,
/// `target-content-id`, the alert's `launch-image`, and a
/// warning for `filter-criteria` (a Focus filter the app sets may hold the push back).
/// Every top-level key but `aps` is an extra until the vendor removes its own.
///
/// An iOS push is visible when its alert has something to show.
extension ContentReader {
    mutating func readAPNs() {
        setExtras(from: payload) { $0 == "aps" }
        guard let apsValue = payload["aps"] else { return }
        guard let aps = object(apsValue, at: "aps") else { return }
        readAlert(aps["alert"], at: "aps.alert")
        // iOS reads the badge only as a number: a string ("+1", "5") changes nothing.
        switch aps["badge"] {
        case nil, .null?, .number?:
            if let badge = integer(aps["badge"], at: "aps.badge") { content.badge = .set(badge) }
        default: warnings.append("aps.badge is not an integer: iOS ignores it, and the badge stays as it was")
        }
        readSound(aps["sound"], at: "aps.sound")
        content.category = text(aps["category"], at: "aps.category")
        content.threadID = text(aps["thread-id"], at: "aps.thread-id")
        content.interruptionLevel = text(aps["interruption-level"], at: "aps.interruption-level")
        if let level = content.interruptionLevel, !Self.interruptionLevels.contains(level) {
            warnings.append("aps.interruption-level is '\(level)': iOS knows passive, active, time-sensitive and critical")
        }
        content.relevanceScore = fraction(aps["relevance-score"], at: "aps.relevance-score")
        content.targetContentID = text(aps["target-content-id"], at: "aps.target-content-id")
        // A Focus filter the app sets (SetFocusFilterIntent) decides whether the push comes
        // through while that Focus is on: nothing here can tell, so it is said.
        if let criteria = text(aps["filter-criteria"], at: "aps.filter-criteria"), content.visible {
            warnings.append(
                "aps.filter-criteria is '\(criteria)': while a Focus is on for which the app set a filter, iOS shows the push only if the filter admits these criteria")
        }
    }

    /// A number meant to be from 0 to 1 (a relevance score, a volume): one outside is kept as
    /// given (what iOS does with it is not documented) and named in a warning.
    mutating func fraction(_ value: JSONValue?, at path: String) -> Double? {
        let fraction = number(value, at: path)
        if let fraction, !(0...1).contains(fraction) {
            warnings.append("\(path) is \(PayloadValue.text(of: fraction)), outside 0–1")
        }
        return fraction
    }

    /// APNs' interruption levels (`UNNotificationInterruptionLevel`), as the payload spells them.
    static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]

    /// On iOS, when `aps.category` is set, the buttons are that category's, which the app
    /// registers; a vendor SDK makes a category of the payload's own buttons only when there is
    /// none (OneSignal, Iterable), and when it is made by the service extension
    /// (`madeByExtension`), only when iOS runs that. Drops `buttons` with a warning otherwise.
    mutating func keepButtonsUnlessCategory(_ buttons: [NotificationContent.Button], from path: String, madeByExtension: Bool) {
        guard let category = content.category, !buttons.isEmpty else {
            let these = buttons.count == 1 ? "the 1 button in \(path) becomes" : "the \(buttons.count) buttons in \(path) become"
            let made = !madeByExtension || buttons.isEmpty || extensionMakes("\(these) a category", instead: "none are shown")
            content.buttons = made ? buttons : []
            return
        }
        content.buttons = []
        warnings.append(
            "aps.category '\(category)' is set: iOS shows the buttons the app registered for that category, not the payload's (\(buttons.count) in \(path))")
    }

    /// An APNs alert: a string is the body; a dictionary gives title, subtitle, body and their
    /// localisation keys and arguments.
    mutating func readAlert(_ value: JSONValue?, at path: String) {
        switch value {
        case nil, .null?: break
        case .string(let body)?: content.body = body.isEmpty ? nil : body
        case .object(let alert)?:
            content.title = text(alert["title"], at: "\(path).title")
            content.subtitle = text(alert["subtitle"], at: "\(path).subtitle")
            content.body = text(alert["body"], at: "\(path).body")
            content.titleLocKey = text(alert["title-loc-key"], at: "\(path).title-loc-key")
            content.titleLocArgs = strings(alert["title-loc-args"], at: "\(path).title-loc-args")
            content.subtitleLocKey = text(alert["subtitle-loc-key"], at: "\(path).subtitle-loc-key")
            content.subtitleLocArgs = strings(alert["subtitle-loc-args"], at: "\(path).subtitle-loc-args")
            content.bodyLocKey = text(alert["loc-key"], at: "\(path).loc-key")
            content.bodyLocArgs = strings(alert["loc-args"], at: "\(path).loc-args")
            content.launchImage = text(alert["launch-image"], at: "\(path).launch-image")
            for (literal, text, key, locKey) in [
                ("title", content.title, "title-loc-key", content.titleLocKey),
                ("subtitle", content.subtitle, "subtitle-loc-key", content.subtitleLocKey),
                ("body", content.body, "loc-key", content.bodyLocKey),
            ] where text != nil {
                guard let locKey else { continue }
                warnings.append("\(path).\(literal) is not shown: iOS shows the app's localized string for \(key) '\(locKey)' instead")
            }
        default: warnings.append("\(path) is neither a string nor an object")
        }
        content.visible = content.hasText
    }

    /// An APNs sound: a name, or `{critical, name, volume}` (a volume outside 0–1 is a warning).
    mutating func readSound(_ value: JSONValue?, at path: String) {
        switch value {
        case nil, .null?: break
        case .string(let name)?: content.sound = name.isEmpty ? nil : name
        case .object(let sound)?:
            content.sound = text(sound["name"], at: "\(path).name")
            content.criticalSound = flag(sound["critical"], at: "\(path).critical")
            content.soundVolume = fraction(sound["volume"], at: "\(path).volume")
        default: warnings.append("\(path) is neither a string nor an object")
        }
    }

    /// The first of `keys` that `actions` (an Airship-style `{actionName: value}` map) opens:
    /// `(url, webview)`.
    mutating func airshipActionTarget(_ actions: JSONObject, at path: String) -> (String, Bool)? {
        for (name, webview) in [
            ("^d", false), ("deep_link_action", false), ("^u", false), ("open_external_url_action", false),
            ("^w", false), ("wallet_action", false), ("^p", true), ("landing_page_action", true),
        ] {
            if let url = text(actions[name], at: path.isEmpty ? name : "\(path).\(name)") { return (url, webview) }
        }
        return nil
    }
}

extension NotificationContent {
    /// Whether there is a title, subtitle, body or a localisation key for one.
    var hasText: Bool {
        title != nil || subtitle != nil || body != nil || titleLocKey != nil || subtitleLocKey != nil
            || bodyLocKey != nil
    }
}
