extension NotificationContent {
    /// A line of the notification as its platform shows it: the payload's own words, or the
    /// app's localized string for a key, which the payload cannot tell.
    public enum ShownText: Sendable, Hashable, CustomStringConvertible {
        /// The payload's literal text.
        case literal(String)
        /// The app's localized string for `key`, formatted with `arguments`.
        case localized(key: String, arguments: [String])

        /// The literal, or `[KEY]` standing for the app's string, with its arguments, if any:
        /// `[KEY] with argument "Ann"`, `[KEY] with arguments "Jenna", "Frank"`.
        public var description: String {
            switch self {
            case .literal(let text): return text
            case .localized(let key, let arguments):
                guard !arguments.isEmpty else { return "[\(key)]" }
                let quoted = arguments.map { "\"\($0)\"" }.joined(separator: ", ")
                return "[\(key)] with argument\(arguments.count == 1 ? "" : "s") \(quoted)"
            }
        }
    }

    /// The title as the platform shows it: on iOS the localisation key's string before the
    /// literal, on Android the literal first.
    public var shownTitle: ShownText? { shown(literal: title, key: titleLocKey, arguments: titleLocArgs) }
    /// The subtitle as the platform shows it.
    public var shownSubtitle: ShownText? { shown(literal: subtitle, key: subtitleLocKey, arguments: subtitleLocArgs) }
    /// The body as the platform shows it.
    public var shownBody: ShownText? { shown(literal: body, key: bodyLocKey, arguments: bodyLocArgs) }

    /// Which of a text's literal and localisation key the platform shows when the payload has
    /// both: on iOS the key ("use this key, instead of the body key", Apple's payload reference),
    /// on Android the literal (FCM's `NotificationParams.getPossiblyLocalizedString` looks the
    /// key up only when the literal is empty).
    func shown(literal: String?, key: String?, arguments: [String]?) -> ShownText? {
        let localized = key.map { ShownText.localized(key: $0, arguments: arguments ?? []) }
        let plain = literal.map(ShownText.literal)
        return platform == .ios ? localized ?? plain : plain ?? localized
    }
}
