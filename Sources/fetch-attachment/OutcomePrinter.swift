import AttachmentFetcher
import Foundation

/// Prints outcomes as one JSON object each, or as a short human summary.
struct OutcomePrinter {
    /// JSON (one object per line) or text.
    var json: Bool
    /// The columns text is wrapped to (see `LineWrapping`): standard output's terminal's, or 80.
    var width = LineWrapping.width(of: .standardOutput)

    /// Writes `outcome` to standard output, at once.
    func print(_ outcome: Outcome, index: Int? = nil) {
        var line: [UInt8] = []
        appendLine(outcome, index: index, to: &line)
        StandardStreams.output.write(line)
    }

    /// What `print` prints, line break included, appended to `buffer`.
    func appendLine(_ outcome: Outcome, index: Int? = nil, to buffer: inout [UInt8]) {
        if json {
            outcome.appendJSONLine(index: index, to: &buffer)
        } else {
            let text = Self.summary(outcome, label: index.map { "line \($0 + 1): " } ?? "")
            buffer.append(contentsOf: LineWrapping.wrapped(text, width: width).utf8)
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    /// A few lines for a person, to be printed through `LineWrapping.wrapped` (which lays them out
    /// and turns their `LineWrapping.glue` into spaces); what came from the payload or the origin
    /// is escaped (see `TerminalText`).
    static func summary(_ outcome: Outcome, label: String = "") -> String {
        let vendor = outcome.vendor.map { "\($0)" } ?? "unknown vendor"
        let timing = String(format: "%.1f ms", outcome.elapsedMilliseconds)
        // Said after the outcome, and never split across lines.
        let origin = LineWrapping.glued("(\(vendor), \(timing))")
        var lines: [String] = []
        switch outcome.status {
        case .attached:
            for attachment in outcome.attachments {
                lines.append("\(label)attached \(attachment.mime), \(LineWrapping.glued("\(attachment.bytes) bytes")): \(TerminalText.escaped(attachment.path))")
                lines.append("  from \(TerminalText.escaped(attachment.url)) \(origin)")
            }
        case .original:
            let reason = outcome.reason.map { "\($0)" } ?? "unknown"
            lines.append("\(label)original content stands: \(reason): \(TerminalText.escaped(outcome.detail ?? "")) \(origin)")
        }
        for failure in outcome.failures where outcome.status == .attached {
            lines.append("  not attached: \(TerminalText.escaped(failure.url)): \(failure.reason): \(TerminalText.escaped(failure.detail))")
        }
        for notification in outcome.notifications { lines += Self.notificationLines(notification, outcome) }
        for verdict in outcome.verdicts {
            let name = verdict.platform.displayName
            switch verdict.status {
            case .attached:
                let what = verdict.platform == .android ? "picture" : "attachment"
                lines.append("  on \(name): shown (\(what) \(TerminalText.escaped(verdict.path ?? outcome.attachments.first?.path ?? "")))")
            case .original:
                lines.append("  on \(name): not shown: \(verdict.reason.map { "\($0)" } ?? "unknown"): \(TerminalText.escaped(verdict.detail ?? ""))")
            }
        }
        for warning in outcome.warnings { lines.append("  warning: \(TerminalText.escaped(warning))") }
        return lines.joined(separator: "\n")
    }

    /// What each of iOS's interruption levels other than `active` (the default) does, after
    /// `UNNotificationInterruptionLevel`'s documentation.
    static let interruptionEffects = [
        "passive": "added to the list without lighting the screen or playing a sound",
        "time-sensitive": "breaks through Focus and the scheduled summary if the app has the Time Sensitive Notifications capability (else active)",
        "critical": "plays its sound through the mute switch and Focus if the app has Apple's Critical Alerts entitlement (else active)",
    ]

    /// What Android's lock screen shows of `notification`: its visibility, when the payload sets
    /// one, and its public version, which a secure lock screen shows in its place while it is
    /// private (Android's default); `nil` when the payload sets neither.
    static func lockScreen(_ notification: NotificationContent) -> String? {
        var line = notification.lockScreenVisibility.map { "\($0.name) (\($0.effect))" }
        if let shown = notification.shownPublicVersion {
            let texts = shown.texts.map { "\"\(TerminalText.escaped($0))\"" }
            let version = "a secure lock screen shows " + (texts.isEmpty ? "an empty public version" : texts.joined(separator: " / ")) + " instead"
            line = (line ?? "private (Android's default)") + "; " + version
        }
        return line
    }

    /// A button's text; one the payload gives none (an app's own category or button group) is
    /// the app's, named by its action's identifier.
    static func label(of button: NotificationContent.Button) -> String {
        button.title ?? "the app's button '\(button.id)'"
    }

    /// What a person would see on the device: the texts, badge, sound, Android's small icon, accent
    /// colour and lock-screen visibility, how it interrupts, its thread, buttons, where a tap goes,
    /// and the picture's file.
    static func notificationLines(_ notification: NotificationContent, _ outcome: Outcome) -> [String] {
        let platform = notification.platform.rawValue
        guard notification.visible else { return ["  \(platform) notification: shows nothing (silent or internal)"] }
        var lines = ["  \(platform) notification:"]
        for (label, text) in [
            ("title", notification.shownTitle?.description), ("subtitle", notification.shownSubtitle?.description),
            ("body", notification.shownBody?.description), ("summary", notification.summary),
            // Android's expanded view, with the picture.
            ("expanded title", notification.expandedTitle), ("expanded text", notification.expandedText),
        ] {
            if let text { lines.append("    \(label): \(TerminalText.escaped(text))") }
        }
        switch notification.badge {
        case .set(let count)?: lines.append("    badge: \(count)")
        // A change of the count the app keeps (OneSignal's badge_inc), which a bare "-1" would hide.
        case .increment(let delta)?: lines.append("    badge: the app's count \(delta < 0 ? "" : "+")\(delta)")
        case nil: break
        }
        // A push that names no sound is silent on iOS; on Android its channel decides.
        let channel = notification.channel.map(TerminalText.escaped) ?? "the default channel"
        var sound = notification.sound.map(TerminalText.escaped) ?? (notification.platform == .android ? "the channel's (\(channel))" : "none")
        // These vendors' Android sound keys apply before Android 8 only (a warning says so).
        if notification.platform == .android, let named = notification.sound,
            [Vendor.braze, .airship, .firebase, .cleverTap].contains(where: { $0 == outcome.vendor })
        {
            sound = "the channel's (\(channel)); \(TerminalText.escaped(named)) before Android 8"
        }
        let qualities = [notification.criticalSound == true ? "critical" : nil, notification.soundVolume.map { "volume \(PayloadValue.text(of: $0))" }]
            .compactMap { $0 }
        if !qualities.isEmpty { sound += " (\(qualities.joined(separator: ", ")))" }
        let passive = notification.platform == .ios && notification.interruptionLevel == "passive"
        if passive, notification.sound != nil { sound = "none (\(sound), not played: a passive notification plays no sound)" }
        lines.append("    sound: \(sound)")
        // Android's small icon, its tint and what the lock screen shows, as the payload sets them.
        if notification.platform == .android {
            if let icon = notification.smallIcon { lines.append("    small icon: \(TerminalText.escaped(icon))") }
            if let colour = notification.accentColor { lines.append("    accent colour: \(TerminalText.escaped(colour))") }
            if let lockScreen = Self.lockScreen(notification) { lines.append("    lock screen: \(lockScreen)") }
            if notification.staysAfterTap == true { lines.append("    after a tap: stays in the shade (sticky)") }
            if notification.ongoing == true { lines.append("    ongoing: Clear all leaves it (up to Android 13, a swipe too)") }
            if let seconds = notification.dismissAfterSeconds { lines.append("    removed after: \(PayloadValue.text(of: seconds)) s") }
        }
        if notification.platform == .ios, let level = notification.interruptionLevel, let effect = Self.interruptionEffects[level] {
            lines.append("    interruption: \(level): \(effect)")
        }
        if notification.platform == .ios, let thread = notification.threadID, !thread.isEmpty {
            lines.append("    grouped: by thread \(TerminalText.escaped(thread))")
        }
        if !notification.buttons.isEmpty {
            let buttons = notification.buttons.map { button in
                let title = TerminalText.escaped(Self.label(of: button))
                guard let url = button.url else { return "[\(title)]" }
                return "[\(title) → \(TerminalText.escaped(url))\(button.webview ? " in a web view" : "")]"
            }
            lines.append("    buttons: \(buttons.joined(separator: " "))")
        } else if notification.platform == .ios, let category = notification.category {
            // iOS shows the buttons the app registered for the category; the payload cannot say which.
            lines.append("    buttons: the app's for category \(TerminalText.escaped(category))")
        }
        let messageCenter = notification.messageCenterID.map {
            $0.isEmpty ? "Message Center's inbox" : "Message Center's message \(TerminalText.escaped($0))"
        }
        if let url = notification.openURL {
            let also = messageCenter.map { ", then \($0)" } ?? ""
            lines.append("    tap opens: \(TerminalText.escaped(url))\(notification.openInWebview ? " in a web view" : "")\(also)")
        } else {
            lines.append("    tap opens: \(messageCenter ?? "the app")")
        }
        // A preflight's file that another platform shows and this one refuses is not this one's.
        if let verdict = outcome.verdicts.first(where: { $0.platform == notification.platform }), verdict.status == .original,
            outcome.verdicts.contains(where: { $0.status == .attached }), notification.serviceExtension != false
        {
            let noun = notification.platform == .ios ? "attachment" : "picture"
            let reason = verdict.reason.map { "\($0)" } ?? "unknown"
            lines.append("    \(noun): none shown (\(reason): see \(notification.platform.displayName)'s verdict)")
            return lines
        }
        guard notification.platform == .android else {
            // A preflight whose --platform leaves iOS out judged no file by iOS's rules: the
            // files fetched are the other platforms', which iOS may refuse.
            if !outcome.verdicts.isEmpty, !outcome.verdicts.contains(where: { $0.platform == .ios }) {
                var seen = Set<String>()
                let urls = (outcome.attachments.map { $0.payloadURL ?? $0.url } + outcome.failures.map { $0.payloadURL ?? $0.url })
                    .filter { seen.insert($0).inserted }
                for url in urls { lines.append("    attachment: \(TerminalText.escaped(url)) (not judged: --platform leaves iOS out)") }
                return lines
            }
            // An iPhone notification read from an FCM HTTP v1 message shows iPhones' own image,
            // the one its verdict names; an iOS payload's shows every attachment.
            if notification.serviceExtension == false, outcome.verdicts.contains(where: { $0.status == .attached }) || !outcome.attachments.isEmpty {
                lines.append("    attachment: none shown: aps.mutable-content is not 1, so iOS runs no service extension")
                return lines
            }
            let own = outcome.notification?.platform == .ios
            let paths = own ? outcome.attachments.map(\.path) : outcome.verdicts.filter { $0.platform == .ios }.compactMap(\.path)
            for path in paths { lines.append("    attachment: \(TerminalText.escaped(path))") }
            return lines
        }
        // A preflight whose --platform leaves Android out fetched nothing for it.
        if !outcome.verdicts.isEmpty, !outcome.verdicts.contains(where: { $0.platform == .android }) {
            if let url = notification.imageURL {
                lines.append("    picture: \(TerminalText.escaped(url)) (not judged: --platform leaves Android out)")
            }
            return lines
        }
        // Android shows one picture, the notification's: an FCM HTTP v1 message may also have
        // fetched iPhones' image, which is not it.
        let pictures = notification.imageURL.map { url in outcome.attachments.filter { ($0.payloadURL ?? $0.url) == url } }
            ?? outcome.attachments
        for attachment in pictures { lines.append("    picture: \(TerminalText.escaped(attachment.path))") }
        if pictures.isEmpty, let url = notification.imageURL { lines.append("    picture: none (\(TerminalText.escaped(url)) not attached)") }
        return lines
    }
}
