import Foundation

/// Iterable. iOS: the APNs layer; `itbl` gives the tap target (`defaultAction` of type
/// `openUrl`; without a `defaultAction` object, the legacy top-level `url`), the buttons
/// (`actionButtons`: string `identifier` and `title`, an `openUrl` action's `data`; none of them when
/// `aps.category` is set, whose buttons iOS shows instead, or without a `messageId`, which names
/// the category the extension makes of them) and the campaign (`campaignId`); a warning when
/// the SDK would count no open of it (`isIterableTracked`); extras are the top-level keys but
/// `aps` and `itbl` [U].
///
/// Android: title `title`, body `body`, sound `sound` (of an `https` URL its file's name, without
/// its extension either way) and the channel named after it (`iterableChannel`), and
/// the JSON-in-string `itbl` (`attachment-url` the picture, `defaultAction`, `actionButtons`,
/// `campaignId`), legacy tap target `uri`, at most 3 buttons (a missing `identifier` an empty
/// one); extras the keys but those [U]. Shown only when not a
/// ghost push and with a non-empty `body`, always with priority HIGH (1), which no key changes.
extension ContentReader {
    mutating func readIterableIOS() {
        readAPNs()
        setExtras(from: payload) { $0 == "aps" || $0 == "itbl" }
        let ghost = readIterableMetadata(legacyURLKey: "url")
        if let itbl = payload["itbl"]?.object, !Self.isIterableTracked(itbl) {
            warnings.append(
                "itbl needs a numeric templateId and a string messageId (and a numeric campaignId, when there is one) for Iterable's iOS SDK to take the push for its own: it runs the push's actions all the same, but counts no open of it")
        }
        if ghost, payload["aps"]?.object?["alert"] != nil {
            warnings.append(
                "itbl.isGhostPush is true, yet aps.alert is set: iOS shows this push all the same (the flag only tells the Iterable SDK, which sends its ghost pushes silent)")
        }
    }

    mutating func readIterableAndroid() {
        content.title = text("title")
        content.body = text("body")
        let sound = text("sound")
        content.sound = sound.map(Self.iterableSoundName)
        content.channel = sound.flatMap { Self.iterableChannel(sound: $0) }
        let ghost = readIterableMetadata(legacyURLKey: "uri")
        content.visible = content.body != nil && !ghost
        // `IterableNotificationHelper` reads the title with the app's name as its default.
        if content.visible, payload["title"] == nil {
            warnings.append("title is missing: Iterable's SDK shows the app's name as the title")
        }
        // Its silent pushes are ghost pushes: any other push without a body is a mistake.
        if content.body == nil, !ghost {
            warnNothingShown(without: ["body"], sdk: "Iterable's SDK", rule: "with a non-empty body (its silent pushes are ghost pushes, itbl.isGhostPush)")
        }
        // `IterableNotificationHelper.createNotification` sets `PRIORITY_HIGH` on every push it
        // shows (and creates its channels with `IMPORTANCE_HIGH`); no key of the payload changes it.
        if content.visible { content.priority = 1 }
        setExtras(from: payload) {
            ["itbl", "title", "body", "sound", "uri", "notificationType", "messageId"].contains($0) || Self.isFCMKey($0)
        }
    }

    /// The sound name Iterable's Android SDK plays (the raw resource, which also names the
    /// channel), as `IterableNotificationHelper` makes it: of a value containing "https", what
    /// follows its last `/`; then without its extension (`replaceFirst("[.][^.]+$", "")`).
    static func iterableSoundName(_ sound: String) -> String {
        var name = Substring(sound)
        if sound.contains("https"), let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
        if let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex { name = name[..<dot] }
        return String(name)
    }

    /// The channel Iterable's Android SDK posts a push with the sound `sound` on, when it is not
    /// the app's default one (named after the app's package), as `IterableNotificationHelper`
    /// (`createNotification`, `getSoundUri`, `getChannelIdName`; the version that reads an https
    /// sound) decides: the sound's name (`iterableSoundName`) when the sound is an https URL, or
    /// when the app has a raw resource of that name; the default channel when it has none. Which
    /// raw resources the app bundles the payload cannot tell: a name one can have (only `a`–`z`,
    /// `0`–`9` and `_`, as Android requires of resource files) is taken to be the app's, except
    /// `default`, which campaigns write for the default sound, not for a resource. The SDK adds
    /// `_noBadge` to the name where the app turns Iterable's badging off in its manifest.
    static func iterableChannel(sound: String) -> String? {
        let name = iterableSoundName(sound)
        guard !name.isEmpty else { return nil }
        if sound.contains("https") { return name }
        let resourceName = name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        return resourceName && name != "default" ? name : nil
    }

    /// Whether Iterable's iOS SDK takes a push with `itbl` for its own, and so tracks its opens
    /// (`IterableNotificationMetadata.isIterableNotification`: `templateId` a number, `messageId` a
    /// string, `campaignId` a number or absent, since proofs send none; a JSON `true` is an
    /// `NSNumber` there too). Its actions run whatever this says (`InternalIterableAppIntegration`
    /// reads any `itbl` object).
    static func isIterableTracked(_ itbl: JSONObject) -> Bool {
        func isNumber(_ value: JSONValue?) -> Bool {
            switch value {
            case .number?, .bool?: true
            default: false
            }
        }
        return isNumber(itbl["templateId"]) && itbl["messageId"]?.string != nil
            && (itbl["campaignId"] == nil || isNumber(itbl["campaignId"]))
    }

    /// Reads `itbl`; whether it is a ghost push.
    @discardableResult
    private mutating func readIterableMetadata(legacyURLKey: String) -> Bool {
        let itbl = object(payload["itbl"], at: "itbl") ?? [:]
        content.campaignID = identifier(itbl["campaignId"], at: "itbl.campaignId")
        if content.platform == .android { content.imageURL = text(itbl["attachment-url"], at: "itbl.attachment-url") }
        // The legacy URL is the default action only when there is none (both SDKs take a
        // `defaultAction` that is no JSON object for none): a custom action opens no URL.
        if let action = itbl["defaultAction"], case .object = action {
            content.openURL = iterableURL(action, at: "itbl.defaultAction")
        } else {
            content.openURL = text(legacyURLKey)
            checkIterableScheme(content.openURL, at: legacyURLKey)
        }
        var buttons: [NotificationContent.Button] = []
        if let list = array(itbl["actionButtons"], at: "itbl.actionButtons") {
            for (index, entry) in list.enumerated() {
                let path = "itbl.actionButtons[\(index)]"
                guard let button = object(entry, at: path) else { continue }
                let id: String
                if content.platform == .ios {
                    // The extension registers a button only with a string identifier and title
                    // (`as? String`; an empty one is a string).
                    guard let identifier = button["identifier"]?.string, button["title"]?.string != nil else {
                        warnings.append("\(path) has no string identifier and title: the Iterable extension skips it")
                        continue
                    }
                    id = identifier
                } else {
                    // `optString`: a missing identifier is an empty one, and the button is shown.
                    id = button["identifier"]?.string ?? ""
                }
                // `openApp` (true unless the payload says false) opens the app; without it the
                // tap opens nothing. A text input's tap asks for the text first.
                let opensApp = flag(button["openApp"], at: "\(path).openApp") ?? true
                let textInput = button["buttonType"]?.string == "textInput"
                buttons.append(
                    .init(
                        id: id, title: text(button["title"], at: "\(path).title"), url: iterableURL(button["action"], at: "\(path).action"),
                        tap: textInput ? nil : opensApp ? .opensApp : .dismisses))
            }
        }
        if content.platform == .ios {
            // The extension registers a category of the buttons, named after `itbl.messageId` (a
            // string), only when `aps.category` is not set: without that id there is none.
            if content.category == nil, !buttons.isEmpty, itbl["messageId"]?.string?.isEmpty != false {
                let these = buttons.count == 1 ? "the 1 button" : "the \(buttons.count) buttons"
                warnings.append(
                    "itbl.messageId is not a non-empty string: the Iterable extension names the buttons' category after it, so \(these) in itbl.actionButtons are not shown")
                buttons = []
            }
            keepButtonsUnlessCategory(buttons, from: "itbl.actionButtons", madeByExtension: true)
        } else {
            // `IterableNotificationHelper` adds the first three and stops.
            if buttons.count > 3 {
                warnings.append("itbl.actionButtons has \(buttons.count) buttons: Iterable's Android SDK shows the first 3")
                buttons = Array(buttons.prefix(3))
            }
            content.buttons = buttons
        }
        return Self.isIterableGhost(itbl["isGhostPush"], on: content.platform)
    }

    /// Whether `itbl.isGhostPush` makes a ghost push, as each SDK reads the flag: iOS with
    /// `as? Bool` (`true`, or the number 1, which Foundation bridges; not a string), Android with
    /// `optBoolean` (`true`, or the string "true" in any case; not a number).
    static func isIterableGhost(_ value: JSONValue?, on platform: Platform) -> Bool {
        switch (value, platform) {
        case (.bool(let flag)?, _): flag
        case (.number(let number)?, .ios): number == 1
        case (.string(let text)?, .android): text.lowercased() == "true"
        default: false
        }
    }

    /// The URL of an `{type: "openUrl", data: URL}` action.
    private mutating func iterableURL(_ value: JSONValue?, at path: String) -> String? {
        guard let action = object(value, at: path), text(action["type"], at: "\(path).type") == "openUrl" else { return nil }
        let url = text(action["data"], at: "\(path).data")
        checkIterableScheme(url, at: "\(path).data")
        return url
    }

    /// Iterable's SDKs (Android 3.4, iOS 6.4 and later) open only `https` links, and those of the
    /// schemes the app lists in `IterableConfig.allowedProtocols`: a warning for any other.
    private mutating func checkIterableScheme(_ url: String?, at path: String) {
        guard let url, let scheme = url.split(separator: ":", maxSplits: 1).first.map({ $0.lowercased() }),
            scheme != "https", url.contains(":")
        else { return }
        warnings.append(
            "\(path) is \(url): Iterable's SDK opens it only if the app lists '\(scheme)' in IterableConfig.allowedProtocols (only https opens without)")
    }

    /// Iterable Android's picture: `attachment-url` in the JSON-in-string `itbl`.
    static func iterableAndroidPicture(_ payload: JSONObject) -> String? {
        var reader = ContentReader(payload, platform: .android)
        return reader.object(payload["itbl"], at: "itbl")?["attachment-url"]?.string.flatMap { $0.isEmpty ? nil : $0 }
    }
}
