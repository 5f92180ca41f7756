/// OneSignal. iOS: the APNs layer (or, in the legacy minified form with no `aps.alert`, which its
/// SDK shows itself only with buttons or attachments, the alert `m`, badge `b` (not 0), sound `s`
/// (else the default), buttons `o` and attachments `at`); its data is `os_data` (extras: the
/// top-level keys but `aps` and `os_data`) or the legacy `custom` (extras: `custom.a`); tap
/// target `u`; `badge_inc` increments the badge (0 does not: `aps.badge` stands); buttons, each
/// `{i, n}` (the id defaulting to the text, one without text skipped; exactly two in reverse
/// order, as the SDK registers them): in the `os_data` format `os_data.buttons` (an array or
/// `{o: [...]}`), else the top-level `actionbuttons`; in the original format the top-level
/// `buttons`; in the minified form `o`; notification id `i`. With `aps.category` set, the buttons are that category's, not the
/// payload's (a warning says so).
///
/// Android: title `title`, body `alert`, picture `bicon`, large icon `licon`, small icon `sicon`,
/// accent colour `bgac` (hexadecimal ARGB), lock-screen visibility `vis` (one that is no integer
/// shows nothing), sound `sound` (the sound of the channel `chnl` creates; without `chnl`,
/// played before Android 8 only, with a warning; `"null"` or `"nil"`: none named, with a
/// warning: silent before Android 8 and in the channel `chnl` creates, the channel's sound
/// otherwise), priority `pri` (1–10), group `grp`, tag `collapse_key` (not `"do_not_collapse"`), channel `oth_chnl` else `chnl.id` (the background
/// image `bg_img` is a warning), buttons the JSON-in-string `o`, and the JSON-in-string `custom`
/// (`i`, `u`, extras `a`). Shown only with a non-empty `alert`, and not at all when it is an
/// in-app message preview (`custom.a.os_in_app_message_preview_id`).
extension ContentReader {
    mutating func readOneSignalIOS() {
        readAPNs()
        // As the SDK's parser (`OSNotification.m`): the `os_data` format when `os_data` is an
        // object, else the original one with `custom`.
        let osData: JSONObject?
        if case .object(let object) = payload["os_data"] { osData = object } else { osData = nil }
        let data: JSONObject?
        if let osData {
            data = osData
            setExtras(from: payload) { $0 == "aps" || $0 == "os_data" }
        } else {
            data = object(payload["custom"], at: "custom")
            setExtras(from: object(data?["a"], at: "custom.a") ?? [:]) { _ in false }
        }
        let path = osData != nil ? "os_data" : "custom"
        // The minified form, shown by the SDK itself (no `aps.alert`): `m`, `b`, `s` and `o` at the
        // top level, or, in the `os_data` format, inside `os_data.buttons`. The rest is shown by
        // iOS, and what the extension does happens only when iOS runs it.
        let alertless = payload[path: ["aps", "alert"]] == nil
        let minifiedKeys: (fields: JSONObject, path: String)?
        if let osData {
            if alertless, case .object(let fields)? = osData["buttons"] { minifiedKeys = (fields, "os_data.buttons.") } else { minifiedKeys = nil }
        } else {
            minifiedKeys = alertless && payload["m"] != nil ? (payload, "") : nil
        }
        let minified = minifiedKeys != nil
        if let (fields, prefix) = minifiedKeys {
            // The SDK shows it itself, as a local notification (`prepareUNNotificationRequest`),
            // only with rich data (`receiveRemoteNotification`): buttons `o` or attachments `at`
            // in the original format, `os_data.buttons` as an object in the `os_data` one. It
            // plays the default sound without `s`, and sets no badge for `b` 0.
            // Its content is the SDK's: the alert, sound, badge, buttons and attachments, and the
            // payload as its user info; nothing else `aps` says (a thread, an interruption level,
            // a relevance score, a target window, a critical sound, a category: the SDK makes its own for the
            // buttons) reaches it. The app downloads the attachments (`addAttachments`), without
            // a service extension.
            content.category = nil
            content.threadID = nil
            content.interruptionLevel = nil
            content.relevanceScore = nil
            content.targetContentID = nil
            content.criticalSound = nil
            content.soundVolume = nil
            readAlert(fields["m"], at: prefix + "m")
            if let badge = integer(fields["b"], at: prefix + "b"), badge != 0 { content.badge = .set(badge) }
            if fields["s"] != nil { readSound(fields["s"], at: prefix + "s") } else { content.sound = "default" }
            content.visible = content.hasText && (osData != nil || fields["o"] != nil || fields["at"] != nil)
            shownByTheApp = true
            if content.visible { warnings.append(Self.oneSignalShownByTheAppWarning) }
        }
        content.openURL = text(data?["u"], at: "\(path).u")
        content.campaignID = identifier(data?["i"], at: "\(path).i")
        // The SDK reads it with `integerValue` (a number, or a string of digits) and takes 0 for
        // no increment (`OneSignalExtensionBadgeHandler`): aps.badge then stands.
        let incrementPath = "\(path).badge_inc"
        let increment: Int? =
            if case .string(let digits)? = data?["badge_inc"], let number = Int(digits.trimmingCharacters(in: .whitespaces)) {
                number
            } else {
                integer(data?["badge_inc"], at: incrementPath)
            }
        // The local notification of the minified form takes no increment: `b` alone.
        if let increment, increment != 0, !minified,
            extensionMakes(
                "\(path).badge_inc is applied", instead: content.badge == nil ? "the badge is left as it is" : "the badge is aps.badge's")
        {
            content.badge = .increment(increment)
        }
        // The buttons: the minified form's `o`; in the `os_data` format `os_data.buttons` (a list,
        // or `{o: list}`), else the top-level `actionbuttons`; in the original format the
        // top-level `buttons` alone.
        var buttons: [NotificationContent.Button] = []
        var buttonsPath = "buttons"
        if let (fields, prefix) = minifiedKeys {
            buttonsPath = prefix + "o"
            buttons = oneSignalButtons(fields["o"], at: buttonsPath)
        } else if let osData {
            if case .array? = osData["buttons"] {
                buttonsPath = "os_data.buttons"
                buttons = oneSignalButtons(osData["buttons"], at: buttonsPath)
            } else if case .object(let wrapped)? = osData["buttons"], case .array? = wrapped["o"] {
                buttonsPath = "os_data.buttons.o"
                buttons = oneSignalButtons(wrapped["o"], at: buttonsPath)
            } else if case .array? = payload["actionbuttons"] {
                buttonsPath = "actionbuttons"
                buttons = oneSignalButtons(payload["actionbuttons"], at: buttonsPath)
            }
        } else if payload["buttons"] != nil {
            buttons = oneSignalButtons(payload["buttons"], at: buttonsPath)
        }
        // The SDK makes a category of exactly two buttons in reverse order
        // (`OneSignalAttachmentHandler.addActionButtons`), only when `aps.category` is not set;
        // the minified form's local notification has its own category whatever `aps` says.
        let reversed = buttons.count == 2
        if minified {
            content.buttons = reversed ? buttons.reversed() : buttons
        } else {
            keepButtonsUnlessCategory(reversed ? buttons.reversed() : buttons, from: buttonsPath, madeByExtension: true)
        }
        if reversed, content.buttons.count == 2 {
            warnings.append(
                "OneSignal's SDK shows exactly two buttons in reverse order: iOS shows '\(buttons[1].title ?? buttons[1].id)' before '\(buttons[0].title ?? buttons[0].id)' (\(buttonsPath))")
        }
        setOneSignalButtonTaps()
    }

    /// A OneSignal button has no target of its own: a tap opens the app, and the notification's
    /// launch URL `u` when it has one, which the SDK opens for a button's tap as for the
    /// notification's. iOS: every action the extension registers has
    /// `UNNotificationActionOptionForeground` (`OneSignalAttachmentHandler.m`), and
    /// `OSNotificationsManager` launches the URL whatever the action. Android: each button's
    /// intent goes to `NotificationOpenedActivity`, which opens the URL instead of the app when
    /// there is one (`OSNotificationOpenBehaviorFromPushPayload`). An app may turn either off in
    /// its settings.
    private mutating func setOneSignalButtonTaps() {
        let url = content.openURL
        content.buttons = content.buttons.map { .init(id: $0.id, title: $0.title, url: url, tap: .opensApp) }
    }

    /// The minified form's notification is made by the app, in the background, when iOS wakes it
    /// for the push (`content-available`).
    static let oneSignalShownByTheAppWarning =
        "OneSignal's SDK shows this push itself (aps has no alert): the app makes the notification, with its attachments, when iOS wakes it for a background push, which iOS never does after the user force-quits the app and does not guarantee otherwise (it may delay or drop background pushes)"

    /// iOS's `[{i: id, n: text}]`, the id defaulting to the text (OneSignal has no per-button
    /// URL); the SDK skips a button without its text.
    private mutating func oneSignalButtons(_ value: JSONValue?, at path: String) -> [NotificationContent.Button] {
        guard let list = array(value, at: path) else { return [] }
        var buttons: [NotificationContent.Button] = []
        for (index, entry) in list.enumerated() {
            guard let button = object(entry, at: "\(path)[\(index)]") else { continue }
            guard let title = text(button["n"], at: "\(path)[\(index)].n") else { continue }
            buttons.append(.init(id: identifier(button["i"], at: "\(path)[\(index)].i") ?? title, title: title))
        }
        return buttons
    }

    mutating func readOneSignalAndroid() {
        content.title = text("title")
        content.body = text("alert")
        content.visible = content.body != nil
        for key in ["bicon", "licon"] {
            guard let value = text(key) else { continue }
            let url = Self.oneSignalAndroidImageURL(value)
            if key == "bicon" { content.imageURL = url } else { content.largeIconURL = url }
            if url == nil {
                warnings.append("\(key) '\(value)' names an image bundled with the app (an asset or a resource), which is not fetched: only a URL starting with http:// or https:// is")
            }
        }
        // "null" or "nil" names no sound: the model's nil, the channel's sound on Android 8 and
        // later (a warning below says where it is silent instead).
        let sound = text("sound")
        let silencing = sound.flatMap { ["null", "nil"].contains($0) ? $0 : nil }
        content.sound = silencing == nil ? sound : nil
        content.threadID = text("grp")
        content.smallIcon = text("sicon")
        // `getAccentColor`: `BigInteger(bgac, 16).toInt()`, else (one that does not parse too)
        // the app's default accent colour.
        if let value = rawString(payload["bgac"], at: "bgac") {
            if let color = AndroidColor.bigIntegerHex(value) {
                setAccentColor(color, from: "bgac", shown: value, notation: .hexadecimal)
            } else {
                warnings.append("bgac '\(value)' is not hexadecimal ARGB (such as FFFF0000, without '#'): OneSignal's SDK uses the app's default accent colour")
            }
        }
        // `Notification.kt` reads `vis` with `toInt()` while it builds the notification, before
        // anything is shown: one that is no integer throws, and the push is not shown. Any
        // integer is passed on to `setVisibility`.
        let visibilityRead = readVisibility(
            "vis", emptyIsNone: false, outOfRange: "OneSignal's SDK passes it on, and Android defines no such visibility",
            notInteger: "OneSignal's SDK throws on it (toInt()) while reading the push, and shows nothing")
        if !visibilityRead { content.visible = false }
        // `Notification.kt` takes `collapse_key` as the collapse id unless it is
        // "do_not_collapse"; `NotificationGenerationProcessor` then posts the push under the
        // Android id of the shown notification with that collapse id, which it replaces.
        content.tag = text("collapse_key").flatMap { $0 == "do_not_collapse" ? nil : $0 }
        if let priority = integer(payload["pri"], at: "pri") {
            // OneSignal's 1–10 scale as NotificationCompat's −2…2 (9–10 max, 7–8 high, 5–6 default…);
            // a value outside 1–10 counts as the nearest end (and cannot overflow the sum).
            content.priority = (min(10, max(1, priority)) - 1) / 2 - 2
        }
        // `oth_chnl` (a channel the app made) wins, where the device has it; else `chnl`.
        let otherChannel = text("oth_chnl")
        content.channel = otherChannel ?? text(object(payload["chnl"], at: "chnl")?["id"], at: "chnl.id")
        // Before Android 8 `NotificationDisplayBuilder.isSoundEnabled` is false for these values;
        // from Android 8 only a channel the SDK creates from `chnl` is made silent
        // (`NotificationChannelManager.createChannel`: `setSound(null, null)`), and any other
        // channel (`oth_chnl`, or the SDK's default one) plays its own sound.
        if let silencing {
            warnings.append(
                "sound '\(silencing)' turns the sound off before Android 8 (API 26) and in the channel that chnl creates; from Android 8 otherwise the sound is the channel's (\(otherChannel ?? "OneSignal's default channel"))")
        }
        // A sound's name: `createChannel` gives it to the channel `chnl` makes; without `chnl`
        // the notification goes to the app's `oth_chnl` or the SDK's default channel, which
        // play their own, and the name only before Android 8.
        if silencing == nil, payload["chnl"] == nil { warnSoundBeforeChannels("OneSignal's sound") }
        if payload["bg_img"] != nil {
            warnings.append("bg_img is OneSignal's background-image layout, which Android shows only up to Android 11 (API 30); its image is not fetched here")
        }
        let custom = object(payload["custom"], at: "custom")
        // The SDK trims the launch URL (`Uri.parse(url.trim { it <= ' ' })`).
        content.openURL = text(custom?["u"], at: "custom.u").map(Self.trimmedAsKotlin).flatMap { $0.isEmpty ? nil : $0 }
        content.campaignID = identifier(custom?["i"], at: "custom.i")
        let additional = object(custom?["a"], at: "custom.a") ?? [:]
        // `Notification.kt` takes the buttons (and the id of the one pressed) out of the data.
        setExtras(from: additional) { ["actionButtons", "actionId"].contains($0) }
        // An in-app message preview is shown as an in-app message, not as a notification.
        let preview = additional["os_in_app_message_preview_id"] != nil
        if preview { content.visible = false }
        // A push without `alert` is a data push, which only the app sees: one with a title or a
        // picture but no `alert` is a mistake.
        if content.body == nil, !preview, content.hasText || content.imageURL != nil {
            warnNothingShown(without: ["alert"], sdk: "OneSignal's SDK", rule: "with a non-empty alert (one without is a data push, which only the app sees)")
        }
        if payload["o"] != nil {
            content.buttons = oneSignalMinifiedAndroidButtons(payload["o"])
        } else if let list = array(additional["actionButtons"], at: "custom.a.actionButtons") {
            // `NotificationDisplayBuilder.addNotificationActionButtons`: `{id, text, icon}`.
            content.buttons = list.enumerated().compactMap { index, entry in
                let path = "custom.a.actionButtons[\(index)]"
                guard let button = object(entry, at: path), let id = identifier(button["id"], at: "\(path).id") else { return nil }
                return .init(id: id, title: text(button["text"], at: "\(path).text"))
            }
        }
        setOneSignalButtonTaps()
    }

    /// Android's minified buttons `o`, as `NotificationBundleProcessor.maximizeButtonsFromBundle`
    /// expands them into `actionButtons` (`{i: id, n: text}`, the id defaulting to the text): in
    /// one `try`, so that a single entry without its text (`getString` throws) leaves none.
    private mutating func oneSignalMinifiedAndroidButtons(_ value: JSONValue?) -> [NotificationContent.Button] {
        guard let list = array(value, at: "o") else { return [] }
        var buttons: [NotificationContent.Button] = []
        for (index, entry) in list.enumerated() {
            // `getString` reads a number as its text; a missing or null text throws.
            func scalar(_ value: JSONValue?) -> String? {
                switch value {
                case .string(let text)?: text
                case .number(let number)?: PayloadValue.text(of: number)
                case .bool(let flag)?: "\(flag)"
                default: nil
                }
            }
            guard case .object(let button) = entry, let title = scalar(button["n"]) else {
                warnings.append("o[\(index)] has no text (n): OneSignal's SDK then shows none of the \(list.count) buttons")
                return []
            }
            buttons.append(.init(id: scalar(button["i"]) ?? title, title: title))
        }
        return buttons
    }

    /// Kotlin's `trim { it <= ' ' }`: every character up to the space off both ends.
    static func trimmedAsKotlin(_ text: String) -> String {
        let isTrimmed: (Character) -> Bool = { $0.unicodeScalars.allSatisfy { $0.value <= 0x20 } }
        return String(text.drop(while: isTrimmed).reversed().drop(while: isTrimmed).reversed())
    }

    /// The URL OneSignal's Android SDK fetches for `bicon` or `licon`: the value trimmed, when it
    /// starts with `http://` or `https://` (in that case); anything else names an image bundled
    /// with the app (`getBitmapFromAssetsOrResourceName`).
    static func oneSignalAndroidImageURL(_ value: String) -> String? {
        let trimmed = trimmedAsKotlin(value)
        return trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://") ? trimmed : nil
    }
}
