/// OneSignal. iOS: the APNs layer (or, in the legacy minified form with no `aps.alert`, the
/// alert `m`, badge `b`, sound `s` and buttons `o`); its data is `os_data` (extras: the
/// top-level keys but `aps` and `os_data`) or the legacy `custom` (extras: `custom.a`); tap
/// target `u`; `badge_inc` increments the badge; buttons `os_data.buttons` (an array or
/// `{o: [...]}`), else the top-level `buttons`, else `actionbuttons` (in the minified form `o`
/// alone), each `{i, n}`, the id defaulting to the text; notification id `i`. With `aps.category` set, the buttons are that category's, not the
/// payload's (a warning says so).
///
/// Android: title `title`, body `alert`, picture `bicon`, large icon `licon`, sound `sound`
/// (`"null"` or `"nil"`: none), priority `pri` (1–10), group `grp`, channel `oth_chnl` else
/// `chnl.id` (the background image `bg_img` is a warning), buttons the JSON-in-string `o`, and
/// the JSON-in-string `custom` (`i`, `u`, extras `a`). Shown only with a non-empty `alert`, and
/// not at all when it is an in-app message preview (`custom.a.os_in_app_message_preview_id`).
extension ContentReader {
    mutating func readOneSignalIOS() {
        readAPNs()
        let data: JSONObject?
        if payload["os_data"] != nil {
            data = object(payload["os_data"], at: "os_data")
            setExtras(from: payload) { $0 == "aps" || $0 == "os_data" }
        } else {
            data = object(payload["custom"], at: "custom")
            setExtras(from: object(data?["a"], at: "custom.a") ?? [:]) { _ in false }
        }
        let path = payload["os_data"] != nil ? "os_data" : "custom"
        // The legacy minified form (no `aps.alert`) is shown by the SDK itself; the rest by iOS, and
        // what the extension does happens only when iOS runs it.
        let minified = payload[path: ["aps", "alert"]] == nil && payload["m"] != nil
        if minified {
            readAlert(payload["m"], at: "m")
            if let badge = integer(payload["b"], at: "b") { content.badge = .set(badge) }
            if payload["s"] != nil { readSound(payload["s"], at: "s") }
        }
        content.openURL = text(data?["u"], at: "\(path).u")
        content.campaignID = identifier(data?["i"], at: "\(path).i")
        if let increment = integer(data?["badge_inc"], at: "\(path).badge_inc"),
            minified || extensionMakes(
                "\(path).badge_inc is applied", instead: content.badge == nil ? "the badge is left as it is" : "the badge is aps.badge's")
        {
            content.badge = .increment(increment)
        }
        // As the SDK's parser: the minified form's buttons are `o`; otherwise `os_data.buttons` (a
        // list, or `{o: list}`), else the legacy top-level `buttons` (in the `os_data` format an extra
        // when `os_data` has its own), else `actionbuttons`.
        var buttons: [NotificationContent.Button] = []
        var buttonsPath = "o"
        if minified {
            buttons = oneSignalButtons(payload["o"], at: buttonsPath)
        } else if let list = data?["buttons"] {
            if case .object(let wrapped) = list {
                buttonsPath = "\(path).buttons.o"
                buttons = oneSignalButtons(wrapped["o"], at: buttonsPath)
            } else {
                buttonsPath = "\(path).buttons"
                buttons = oneSignalButtons(list, at: buttonsPath)
            }
        } else if let list = payload["buttons"] {
            buttonsPath = "buttons"
            buttons = oneSignalButtons(list, at: buttonsPath)
        } else if let list = data?["actionbuttons"] ?? payload["actionbuttons"] {
            buttonsPath = "actionbuttons"
            buttons = oneSignalButtons(list, at: buttonsPath)
        }
        // The extension makes a category of the buttons only when `aps.category` is not set.
        keepButtonsUnlessCategory(buttons, from: buttonsPath, madeByExtension: !minified)
    }

    /// `[{i: id, n: text}]`, the id defaulting to the text (OneSignal has no per-button URL).
    private mutating func oneSignalButtons(_ value: JSONValue?, at path: String) -> [NotificationContent.Button] {
        guard let list = array(value, at: path) else { return [] }
        var buttons: [NotificationContent.Button] = []
        for (index, entry) in list.enumerated() {
            guard let button = object(entry, at: "\(path)[\(index)]") else { continue }
            let title = text(button["n"], at: "\(path)[\(index)].n")
            guard let id = identifier(button["i"], at: "\(path)[\(index)].i") ?? title else { continue }
            buttons.append(.init(id: id, title: title))
        }
        return buttons
    }

    mutating func readOneSignalAndroid() {
        content.title = text("title")
        content.body = text("alert")
        content.visible = content.body != nil
        content.imageURL = text("bicon")
        content.largeIconURL = text("licon")
        // "null" or "nil" turns the channel's sound off.
        content.sound = text("sound").flatMap { ["null", "nil"].contains($0) ? nil : $0 }
        content.threadID = text("grp")
        if let priority = integer(payload["pri"], at: "pri") {
            // OneSignal's 1–10 scale as NotificationCompat's −2…2 (9–10 max, 7–8 high, 5–6 default…);
            // a value outside 1–10 counts as the nearest end (and cannot overflow the sum).
            content.priority = (min(10, max(1, priority)) - 1) / 2 - 2
        }
        // `oth_chnl` (a channel the app made) wins, where the device has it; else `chnl`.
        content.channel = text("oth_chnl") ?? text(object(payload["chnl"], at: "chnl")?["id"], at: "chnl.id")
        if payload["bg_img"] != nil {
            warnings.append("bg_img is OneSignal's background-image layout, which Android shows only up to Android 11 (API 30); its image is not fetched here")
        }
        let custom = object(payload["custom"], at: "custom")
        content.openURL = text(custom?["u"], at: "custom.u")
        content.campaignID = identifier(custom?["i"], at: "custom.i")
        let additional = object(custom?["a"], at: "custom.a") ?? [:]
        setExtras(from: additional) { _ in false }
        // An in-app message preview is shown as an in-app message, not as a notification.
        if additional["os_in_app_message_preview_id"] != nil { content.visible = false }
        content.buttons = oneSignalButtons(payload["o"], at: "o")
    }
}
