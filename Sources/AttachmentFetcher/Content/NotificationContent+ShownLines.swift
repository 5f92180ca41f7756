extension NotificationContent {
    /// One line of what a notification shows or does, in words, as a person reads it: the CLI's
    /// human output and its report print these lines, each escaping them its own way, so that
    /// the two never say different things of one field.
    package struct ShownLine: Sendable, Hashable {
        /// The field a line tells of.
        package enum Field: Sendable, Hashable {
            case title, subtitle, body, summary, expandedTitle, expandedText, badge, sound, priority, smallIcon, largeIcon
            case accentColour, lockScreen, afterTap, ongoing, removedAfter, interruption, grouped, buttons, tap
        }

        /// The field.
        package var field: Field
        /// Its name, as printed before `text` and a colon: `title`, `sound`, `tap opens`….
        package var label: String
        /// What the field says.
        package var text: String
        /// For `.buttons`, each button's text (`Button.shownText`), which `text` prints
        /// bracketed; empty for every other field, and for an app's own category's buttons.
        package var items: [String] = []
    }

    /// What iOS still does with a push that shows no banner (`visible` is false): it applies
    /// `aps.badge` (0 clears it) and plays `aps.sound`, alert or not (a passive push plays none).
    /// `nil` for a visible push, on Android (a push that posts no notification sets no badge and
    /// plays no sound), and for a push that sets neither.
    package var effectsWithoutBanner: (badge: Badge?, sound: String?)? {
        guard !visible, platform == .ios else { return nil }
        let sound = interruptionLevel == "passive" ? nil : sound
        guard badge != nil || sound != nil else { return nil }
        return (badge, sound)
    }

    /// Whether a person notices the push: it is `visible`, or it still sets a badge or plays a
    /// sound (`effectsWithoutBanner`).
    package var isNoticeable: Bool { visible || effectsWithoutBanner != nil }

    /// What a push that is not `visible` shows, in words: `shows nothing`, or, for one that still
    /// sets a badge or plays a sound, `shows no banner but sets the badge to 5 and plays the sound
    /// 'default'`.
    package var invisibleEffect: String {
        guard let effects = effectsWithoutBanner else { return "shows nothing" }
        var done: [String] = []
        switch effects.badge {
        case .set(0)?: done.append("clears the badge")
        case .set(let count)?: done.append("sets the badge to \(count)")
        case .increment(let delta)?: done.append("changes the app's badge count by \(delta < 0 ? "" : "+")\(delta)")
        case nil: break
        }
        if let sound = effects.sound { done.append("plays the sound '\(sound)'") }
        return "shows no banner but " + done.joined(separator: " and ")
    }

    /// The heading of a notification that is not `visible`: `shows nothing (silent or internal)`,
    /// or `shows no banner` when it still sets a badge or plays a sound, which `shownLines` lists.
    package var invisibleHeading: String {
        effectsWithoutBanner == nil ? "shows nothing (silent or internal)" : "shows no banner"
    }

    /// What each of iOS's interruption levels other than `active` (the default) does, after
    /// `UNNotificationInterruptionLevel`'s documentation.
    package static let interruptionEffects = [
        "passive": "added to the list without lighting the screen or playing a sound",
        "time-sensitive": "breaks through Focus and the scheduled summary if the app has the Time Sensitive Notifications capability (else active)",
        "critical": "plays its sound through the mute switch and Focus if the app has Apple's Critical Alerts entitlement (else active)",
    ]

    /// NotificationCompat's names of Android's priorities, −2 to 2.
    static let priorityNames = [-2: "min", -1: "low", 0: "default", 1: "high", 2: "max"]

    /// What a person would see and hear of the notification, field by field, for a push from
    /// `vendor`: the texts, badge, sound, Android's priority, icons, accent colour, lock-screen
    /// visibility and dismissal, how it interrupts, its thread or group, buttons and where a
    /// tap goes. For a push that is not `visible`, only the badge and sound it still sets and
    /// plays (`effectsWithoutBanner`), if any. Not its picture, which depends on the download.
    package func shownLines(vendor: Vendor?) -> [ShownLine] {
        guard visible else {
            guard let effects = effectsWithoutBanner else { return [] }
            return [Self.badgeLine(effects.badge), effects.sound.map { ShownLine(field: .sound, label: "sound", text: $0) }].compactMap { $0 }
        }
        var lines: [ShownLine] = []
        for (field, label, text) in [
            (ShownLine.Field.title, "title", shownTitle?.description), (.subtitle, "subtitle", shownSubtitle?.description),
            (.body, "body", shownBody?.description), (.summary, "summary", summary),
            // Android's expanded view, with the picture.
            (.expandedTitle, "expanded title", expandedTitle), (.expandedText, "expanded text", expandedText),
        ] {
            if let text { lines.append(ShownLine(field: field, label: label, text: text)) }
        }
        if let badge = Self.badgeLine(badge) { lines.append(badge) }
        lines.append(ShownLine(field: .sound, label: "sound", text: shownSound()))
        if platform == .android {
            if let priority {
                let name = Self.priorityNames[priority].map { "\($0) (\(priority))" } ?? "\(priority)"
                lines.append(ShownLine(field: .priority, label: "priority", text: "\(name); from Android 8 on, the channel's importance instead"))
            }
            if let icon = smallIcon { lines.append(ShownLine(field: .smallIcon, label: "small icon", text: icon)) }
            if let url = largeIconURL { lines.append(ShownLine(field: .largeIcon, label: "large icon", text: url)) }
            if let colour = accentColor { lines.append(ShownLine(field: .accentColour, label: "accent colour", text: colour)) }
            if let lockScreen = shownLockScreen { lines.append(ShownLine(field: .lockScreen, label: "lock screen", text: lockScreen)) }
            if staysAfterTap == true { lines.append(ShownLine(field: .afterTap, label: "after a tap", text: "stays in the shade (sticky)")) }
            if ongoing == true { lines.append(ShownLine(field: .ongoing, label: "ongoing", text: "Clear all leaves it (up to Android 13, a swipe too)")) }
            if let seconds = dismissAfterSeconds {
                lines.append(ShownLine(field: .removedAfter, label: "removed after", text: "\(PayloadValue.text(of: seconds)) s"))
            }
        }
        if platform == .ios, let level = interruptionLevel, let effect = Self.interruptionEffects[level] {
            lines.append(ShownLine(field: .interruption, label: "interruption", text: "\(level): \(effect)"))
        }
        if let thread = threadID, !thread.isEmpty {
            lines.append(ShownLine(field: .grouped, label: "grouped", text: platform == .ios ? "by thread \(thread)" : "by group \(thread)"))
        }
        if !buttons.isEmpty {
            let items = buttons.map(\.shownText)
            lines.append(ShownLine(field: .buttons, label: "buttons", text: items.map { "[\($0)]" }.joined(separator: " "), items: items))
        } else if platform == .ios, let category {
            // iOS shows the buttons the app registered for the category; the payload cannot say which.
            lines.append(ShownLine(field: .buttons, label: "buttons", text: "the app's for category \(category)"))
        }
        let messageCenter = messageCenterID.map { $0.isEmpty ? "Message Center's inbox" : "Message Center's message \($0)" }
        var tap =
            openURL.map { "\($0)\(openInWebview ? " in a web view" : "")" + (messageCenter.map { ", then \($0)" } ?? "") }
            ?? messageCenter ?? "the app"
        // iOS brings forward the app's window of that content, and shows that launch image
        // while the app starts.
        if platform == .ios, let window = targetContentID { tap += " (its window for \(window))" }
        if platform == .ios, let image = launchImage { tap += ", launching with \(image) in place of the launch screen" }
        lines.append(ShownLine(field: .tap, label: "tap opens", text: tap))
        return lines
    }

    /// The line of `badge`, when the push changes the badge.
    private static func badgeLine(_ badge: Badge?) -> ShownLine? {
        switch badge {
        case .set(let count)?: ShownLine(field: .badge, label: "badge", text: count == 0 ? "0 (cleared)" : "\(count)")
        // A change of the count the app keeps (OneSignal's badge_inc), which a bare "-1" would hide.
        case .increment(let delta)?: ShownLine(field: .badge, label: "badge", text: "the app's count \(delta < 0 ? "" : "+")\(delta)")
        case nil: nil
        }
    }

    /// The sound a visible notification plays: iOS plays none when the push names none, Android
    /// the channel's; a passive iOS push plays none.
    func shownSound() -> String {
        let channel = self.channel ?? "the default channel"
        var sound = self.sound ?? (platform == .android ? "the channel's (\(channel))" : "none")
        // A sound the SDK gives the notification itself plays before Android 8 only: from 8 on,
        // the channel's sound plays (a warning says so).
        if platform == .android, let named = self.sound, soundBeforeAndroid8Only {
            sound = "the channel's (\(channel)); \(named) before Android 8"
        }
        let qualities = [criticalSound == true ? "critical" : nil, soundVolume.map { "volume \(PayloadValue.text(of: $0))" }].compactMap { $0 }
        if !qualities.isEmpty { sound += " (\(qualities.joined(separator: ", ")))" }
        if platform == .ios, interruptionLevel == "passive", self.sound != nil {
            sound = "none (\(sound), not played: a passive notification plays no sound)"
        }
        return sound
    }

    /// What Android's lock screen shows: its visibility, when the payload sets one, and its
    /// public version, which a secure lock screen shows in its place while it is private
    /// (Android's default); `nil` when the payload sets neither.
    var shownLockScreen: String? {
        var line = lockScreenVisibility.map { "\($0.name) (\($0.effect))" }
        if let shown = shownPublicVersion {
            let texts = shown.texts.map { "\"\($0)\"" }
            let version = "a secure lock screen shows " + (texts.isEmpty ? "an empty public version" : texts.joined(separator: " / ")) + " instead"
            line = (line ?? "private (Android's default)") + "; " + version
        }
        return line
    }
}

extension NotificationContent.Button {
    /// The button as a person reads it: its text (an app's own button, which the payload gives
    /// none, named by its action's identifier), then what a tap does: `Details → https://…` (in
    /// a web view), `Open → the app`, `Close: only dismisses`; nothing more when the payload
    /// does not say.
    package var shownText: String {
        let label = title ?? "the app's button '\(id)'"
        if let url { return "\(label) → \(url)\(webview ? " in a web view" : "")" }
        switch tap {
        case .opensApp?: return "\(label) → the app"
        case .dismisses?: return "\(label): only dismisses"
        case .opensURL?, nil: return label
        }
    }
}
