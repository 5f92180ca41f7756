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
        for warning in outcome.warnings where !Self.restatesReason(warning, of: outcome) {
            lines.append("  warning: \(TerminalText.escaped(warning))")
        }
        return lines.joined(separator: "\n")
    }

    /// Whether `warning`'s first clause is the first clause of the outcome's reason or of a
    /// platform's refusal ("aps.mutable-content is not 1: …"), or is it under a longer key path
    /// (an FCM message's "message.apns.payload.aps.mutable-content is not 1: …"), which the
    /// summary has just said; JSON keeps every warning.
    static func restatesReason(_ warning: String, of outcome: Outcome) -> Bool {
        guard let end = warning.range(of: ": ") else { return false }
        let clause = warning[..<end.lowerBound]
        let refusals = (outcome.status == .original ? [outcome.detail] : []) + outcome.verdicts.filter { $0.status == .original }.map(\.detail)
        return refusals.contains { detail in
            guard let detail, let end = detail.range(of: ": ") else { return false }
            let said = detail[..<end.lowerBound]
            return clause == said || clause.hasSuffix("." + said)
        }
    }

    /// What a person would see and hear on the device (the notification's `shownLines`, which
    /// the report prints too: texts with their localisation arguments, badge, sound, Android's
    /// priority, icons, accent colour, lock screen and dismissal, how it interrupts, its thread or
    /// group, buttons with what each tap does, where a tap goes), and the picture's file. A push
    /// that shows no banner says so, with the badge and sound iOS still applies.
    static func notificationLines(_ notification: NotificationContent, _ outcome: Outcome) -> [String] {
        let platform = notification.platform.rawValue
        let shown = notification.shownLines(vendor: outcome.vendor).map { "    \($0.label): \(TerminalText.escaped($0.text))" }
        guard notification.visible else { return ["  \(platform) notification: \(notification.invisibleHeading)"] + shown }
        var lines = ["  \(platform) notification:"] + shown
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
