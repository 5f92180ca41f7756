/// Firebase Cloud Messaging. iOS: the APNs layer; extras are the top-level keys but `aps`,
/// `fcm_options` and FCM's `gcm.*` / `google.*`; campaign `google.c.a.c_id`.
///
/// Android, as the device sees a notification message: `gcm.n.title`, `gcm.n.body` (and the
/// legacy `gcm.notification.*`), their `_loc_key` / `_loc_args`, picture `gcm.n.image`, channel
/// `gcm.n.android_channel_id`, sound `gcm.n.sound2` (else `gcm.n.sound`), count
/// `gcm.n.notification_count` (sets the badge), priority `gcm.n.notification_priority`, small icon
/// `gcm.n.icon`, accent colour `gcm.n.color`, lock-screen visibility `gcm.n.visibility`, tag
/// `gcm.n.tag` (the tag a later notification replaces it by), the picture as the collapsed
/// large icon too, tap target `gcm.n.link_android` else `gcm.n.link`. Shown only with
/// `gcm.n.e` set and without `gcm.n.noui`. Extras: the keys that are not FCM's.
///
/// Android, as an HTTP v1 message (`{message: …}` or its content): `notification{title, body,
/// image}` overridden by `android.notification{…, channel_id, sound, tag, icon, color, visibility,
/// notification_count (a negative one sets nothing, as on the device), *_loc_key, *_loc_args,
/// notification_priority (a `NotificationPriority` name; another value is a warning)}`; extras
/// `data`. Shown when it has text or a picture (a picture alone is a warning). `visibility`
/// (`PRIVATE`, `PUBLIC`, `SECRET`) is the lock-screen visibility; a value other than those and
/// `VISIBILITY_UNSPECIFIED` is a warning, as is a value of the wrong type: the API refuses either.
/// Either enum given by its number, which the API takes, is a warning too, and not read
/// (`warnIfEnumNumber`). When iPhones attach another image (`apns.fcm_options.image`, else
/// `notification.image`), a warning names it; iOS's verdict is on that image (see
/// `FirebaseAndroidSchema`). When iOS is judged too, `readFirebaseHTTPv1IPhone` reads what iPhones
/// show of the message, and says so when they show nothing of a message meant to be seen.
extension ContentReader {
    mutating func readFirebaseIOS() {
        readAPNs()
        setExtras(from: payload) { $0 == "aps" || $0 == "fcm_options" || Self.isFCMKey($0) }
        content.campaignID = text("google.c.a.c_id")
    }

    mutating func readFirebaseAndroid() {
        if Self.isFirebaseHTTPv1(payload) { return readFirebaseHTTPv1() }
        func key(_ name: String) -> String {
            payload["gcm.n.\(name)"] == nil && payload["gcm.notification.\(name)"] != nil
                ? "gcm.notification.\(name)" : "gcm.n.\(name)"
        }
        content.title = text(key("title"))
        content.body = text(key("body"))
        content.titleLocKey = text(key("title_loc_key"))
        content.titleLocArgs = strings(payload[key("title_loc_args")], at: key("title_loc_args"))
        content.bodyLocKey = text(key("body_loc_key"))
        content.bodyLocArgs = strings(payload[key("body_loc_args")], at: key("body_loc_args"))
        content.imageURL = text(key("image"))
        content.channel = text(key("android_channel_id"))
        content.sound = text(key("sound2")) ?? text(key("sound"))
        warnSoundBeforeChannels("FCM's \(key("sound2")) / \(key("sound"))")
        // `NotificationParams` skips a negative count and a priority outside −2…2 (with a log line).
        if let count = integer(payload[key("notification_count")], at: key("notification_count")) {
            if count >= 0 {
                content.badge = .set(count)
            } else {
                warnings.append("\(key("notification_count")) is \(count): the FCM SDK sets no count below 0")
            }
        }
        if let priority = integer(payload[key("notification_priority")], at: key("notification_priority")) {
            if (-2...2).contains(priority) {
                content.priority = priority
            } else {
                warnings.append("\(key("notification_priority")) is \(priority), outside −2…2: the FCM SDK skips it (the channel's importance applies)")
            }
        }
        content.tag = text(key("tag"))
        // `CommonNotificationBuilder`: the small icon names a drawable (else the manifest's
        // default icon); a colour that does not parse gives the manifest's default colour; a
        // visibility outside −1…1 is skipped (`NotificationParams.getNotificationVisibility`).
        content.smallIcon = text(key("icon"))
        readParsedColor(
            payload[key("color")], at: key("color"), emptyIsNone: true,
            otherwise: "the FCM SDK uses the app's default colour (the manifest's default_notification_color)")
        readCheckedVisibility(key("visibility"), sdk: "the FCM SDK")
        // `CommonNotificationBuilder`: `setAutoCancel(!sticky)`, sticky "1" or "true" in any case.
        if flag(payload[key("sticky")], at: key("sticky")) == true { content.staysAfterTap = true }
        // `DisplayNotification` draws the picture as the collapsed notification's large icon too.
        content.largeIconURL = content.imageURL
        let linkKey = payload[key("link_android")] != nil ? key("link_android") : key("link")
        content.openURL = text(key("link_android")) ?? text(key("link"))
        // `CommonNotificationBuilder.createTargetIntent`: a click action starts the activity
        // for that action, and the link goes unused.
        if let action = text(key("click_action")) {
            if let link = content.openURL {
                warnings.append("\(key("click_action")) '\(action)' starts the app's activity for that action: the link \(link) is not opened")
            }
            content.openURL = nil
        } else if let link = content.openURL, link.lowercased().hasPrefix("http") {
            // The same: its `ACTION_VIEW` intent names the app's package.
            warnings.append("\(linkKey) \(link) opens only in the app itself (FCM's SDK limits its intent to the app's package): never in a browser, and not at all unless the app handles the link")
        }
        content.campaignID = text("google.c.a.c_id")
        // `NotificationParams.isNotification`: "1" exactly, under either prefix.
        let displayed = payload["gcm.n.e"]?.string == "1" || payload["gcm.notification.e"]?.string == "1"
        let noUI = flag(payload[key("noui")], at: key("noui")) ?? false
        // `FirebaseMessagingService` hands a "deleted messages" notice to `onDeletedMessages`
        // and shows nothing, whatever else it carries.
        let deletedMessages = payload["message_type"]?.string == "deleted_messages"
        content.visible = displayed && !noUI && !deletedMessages
        warnIfPictureWithoutText(title: key("title"), body: key("body"))
        // A notification's keys without `gcm.n.e`: what a device gets of a data message whose
        // keys were copied from a notification message. The SDK shows none of it.
        if !displayed, !deletedMessages, content.hasText || content.imageURL != nil {
            warnings.append(
                "gcm.n.e is not \"1\": the FCM SDK shows nothing of this push itself, whatever gcm.n.title, gcm.n.body or gcm.n.image say; it hands the push to the app's onMessageReceived (a data message), which draws what the app's own code draws")
        }
        setExtras(from: payload) { Self.isFCMKey($0) }
    }

    /// An HTTP v1 message, or the `message` object of a send request.
    static func isFirebaseHTTPv1(_ payload: JSONObject) -> Bool {
        guard !isAirshipPushRequest(payload) else { return false }
        return payload["message"]?.object != nil || payload["notification"]?.object != nil
            || payload["android"]?.object != nil
    }

    /// The data map an Android device receives of an HTTP v1 message that is a data message (no
    /// `notification`, none in `android`): `android.data`, which replaces `data` for Android
    /// (`AndroidConfig.data`), else `data`; with its path. `nil` for a message with a
    /// notification, or no data.
    static func firebaseHTTPv1DataMessage(_ payload: JSONObject) -> (data: JSONObject, path: String)? {
        guard isFirebaseHTTPv1(payload) else { return nil }
        let message = payload["message"]?.object ?? payload
        let prefix = payload["message"] == nil ? "" : "message."
        let android = message["android"]?.object
        guard message["notification"] == nil, android?["notification"] == nil else { return nil }
        if let data = android?["data"]?.object { return (data, "\(prefix)android.data") }
        return message["data"]?.object.map { ($0, "\(prefix)data") }
    }

    /// A request to Airship's push API (`audience`, `device_types`, `notification`), which a
    /// campaign team may paste in place of what a device receives; it has a `notification` object
    /// of its own, but no FCM message has `audience` or `device_types`.
    static func isAirshipPushRequest(_ payload: JSONObject) -> Bool {
        payload["audience"] != nil && payload["device_types"] != nil && payload["notification"] != nil
    }

    private mutating func readFirebaseHTTPv1() {
        // A value of another type than the field's is refused by the API, as an unknown enum name is.
        wrongTypeConsequence = "FCM's HTTP v1 API refuses a message with a value of another type (400 INVALID_ARGUMENT), so the send fails"
        defer { wrongTypeConsequence = nil }
        let message = payload["message"]?.object ?? payload
        let prefix = payload["message"] == nil ? "" : "message."
        let common = object(message["notification"], at: "\(prefix)notification") ?? [:]
        let android = object(message["android"], at: "\(prefix)android") ?? [:]
        let specific = object(android["notification"], at: "\(prefix)android.notification") ?? [:]
        func value(_ name: String) -> (JSONValue?, String) {
            if let value = specific[name] { return (value, "\(prefix)android.notification.\(name)") }
            return (common[name], "\(prefix)notification.\(name)")
        }
        func textValue(_ name: String) -> String? {
            let (found, path) = value(name)
            return text(found, at: path)
        }
        content.title = textValue("title")
        content.body = textValue("body")
        content.imageURL = textValue("image")
        content.titleLocKey = textValue("title_loc_key")
        content.bodyLocKey = textValue("body_loc_key")
        let titleArgs = value("title_loc_args"), bodyArgs = value("body_loc_args")
        content.titleLocArgs = strings(titleArgs.0, at: titleArgs.1)
        content.bodyLocArgs = strings(bodyArgs.0, at: bodyArgs.1)
        content.channel = textValue("channel_id")
        content.sound = textValue("sound")
        warnSoundBeforeChannels("FCM's android.notification.sound")
        content.tag = textValue("tag")
        // Delivered as `gcm.n.icon` and `gcm.n.color`, read as on the device.
        content.smallIcon = text(specific["icon"], at: "\(prefix)android.notification.icon")
        readParsedColor(
            specific["color"], at: "\(prefix)android.notification.color", emptyIsNone: true,
            otherwise: "the FCM SDK uses the app's default colour (the manifest's default_notification_color)")
        // Delivered as `gcm.n.visibility`.
        if let visibility = enumName(
            specific["visibility"], at: "\(prefix)android.notification.visibility", type: "Visibility",
            zero: "VISIBILITY_UNSPECIFIED", values: ["PRIVATE": NotificationContent.LockScreenVisibility.private, "PUBLIC": .public, "SECRET": .secret])
        {
            content.lockScreenVisibility = visibility
        }
        content.largeIconURL = content.imageURL
        // Delivered as `gcm.n.sticky`.
        if flag(specific["sticky"], at: "\(prefix)android.notification.sticky") == true { content.staysAfterTap = true }
        // FCM passes the count on as `gcm.n.notification_count`, where `NotificationParams`
        // skips a negative one, as in the device's bundle.
        let (countValue, countPath) = value("notification_count")
        if let count = integer(countValue, at: countPath) {
            if count >= 0 {
                content.badge = .set(count)
            } else {
                warnings.append("\(countPath) is \(count): the FCM SDK sets no count below 0")
            }
        }
        // Delivered as `gcm.n.notification_priority`.
        let (priorityValue, priorityPath) = value("notification_priority")
        if let priority = enumName(
            priorityValue, at: priorityPath, type: "NotificationPriority", zero: "PRIORITY_UNSPECIFIED", values: Self.firebasePriorities)
        {
            content.priority = priority
        }
        // FCM delivers a message with a notification as a display notification (`gcm.n.e`), which
        // `DisplayNotification` shows whatever its text: a picture alone is shown too.
        content.visible = content.hasText || content.imageURL != nil
        let (_, titlePath) = value("title"), (_, bodyPath) = value("body")
        warnIfPictureWithoutText(title: titlePath, body: bodyPath)
        // `android.data` replaces `data` for Android (`AndroidConfig.data`).
        let androidData = object(android["data"], at: "\(prefix)android.data")
        setExtras(from: androidData ?? object(message["data"], at: "\(prefix)data") ?? [:]) { _ in false }
        // iPhones attach `apns.fcm_options.image`, else the common `notification.image`: when
        // that is another image than Android's, say so (iOS's verdict is on it when iOS is judged).
        if let apns = object(message["apns"], at: "\(prefix)apns") { _ = object(apns["fcm_options"], at: "\(prefix)apns.fcm_options") }
        if let (url, path) = Self.firebaseHTTPv1iOSImage(payload), url != content.imageURL {
            let android = content.imageURL.map { ", not the Android picture (\(URLCredentials.redacted($0)))" } ?? "; Android shows no picture"
            warnings.append("iPhones attach \(path) (\(URLCredentials.redacted(url)))\(android)")
        }
    }

    /// A shown notification with a picture and no text (`title` and `body` its keys): the FCM SDK
    /// draws it all the same, the app's name above the picture, which is rarely what a campaign
    /// meant.
    private mutating func warnIfPictureWithoutText(title: String, body: String) {
        guard content.visible, !content.hasText, content.imageURL != nil else { return }
        warnings.append("\(title) and \(body) are missing: Android shows the picture under the app's name alone, without text")
    }

    /// The value of an HTTP v1 enum field (`type`, its names and values `values`, in order) that
    /// `value` names, in any case (the API reads enum names so, as FCM's own examples write
    /// `"priority": "normal"`). `nil` for the enum's `zero` (`VISIBILITY_UNSPECIFIED`), which
    /// sets none; and, with a warning, for a number (the API's JSON, proto3's, takes an enum's
    /// number too, so the message is sent, but this reading maps names only and says so rather
    /// than guess) and for any other text (no value of the enum: the API refuses the request).
    mutating func enumName<Value>(
        _ value: JSONValue?, at path: String, type: String, zero: String, values: KeyValuePairs<String, Value>
    ) -> Value? {
        let names = values.map(\.key).joined(separator: ", ")
        if case .number(let number)? = value {
            warnings.append(
                "\(path) is the number \(PayloadValue.text(of: number)): FCM's HTTP v1 API takes an enum's number, but this preview reads the field by its name only (\(names)), and shows none")
            return nil
        }
        guard let name = text(value, at: path) else { return nil }
        let upper = name.uppercased()
        if let known = values.first(where: { $0.key == upper }) { return known.value }
        guard upper != zero else { return nil }
        warnings.append(
            "\(path) is '\(name)', which is no \(type) (\(zero), \(names)): FCM's HTTP v1 API refuses such a message (400 INVALID_ARGUMENT), so the send fails, and none is read here")
        return nil
    }

    /// What iPhones show of an HTTP v1 message, with the warnings about it: the APNs payload FCM
    /// makes of the message, read as any Firebase iOS push. That payload is `apns.payload` (its
    /// `aps` and its custom keys), with `notification.title` and `body` as `aps.alert` when `aps`
    /// has no alert of its own (`apns.payload` overrides them, as FCM documents; an alert of its
    /// own is the whole alert), `data`'s keys as further custom keys (`apns.payload`'s win), and
    /// the iPhone image (`firebaseHTTPv1iOSImage`) as `fcm_options.image`. What FCM adds of its
    /// own (`gcm.message_id`, `google.c.*`) shows nothing and is left out. A warning names its
    /// key by its place in the message (`apns.payload.aps.badge`).
    static func readFirebaseHTTPv1IPhone(_ payload: JSONObject) -> (NotificationContent, [String]) {
        let message = payload["message"]?.object ?? payload
        let prefix = payload["message"] == nil ? "" : "message."
        var warnings: [String] = []
        var apns = JSONObject()
        switch message[path: ["apns", "payload"]] {
        case nil, .null?: break
        case .object(let object)?: apns = object
        default: warnings.append("\(prefix)apns.payload is not an object")
        }
        // `aps`, absent or an object (anything else the iOS reading names), without an alert of
        // its own gets notification's texts: only strings (the Android reading names the others).
        if var aps = apns["aps"] == nil ? [:] : apns["aps"]?.object, aps["alert"] == nil {
            var alert = JSONObject()
            for key in ["title", "body"] {
                if let text = message[path: ["notification", key]]?.string { alert.append(key, .string(text)) }
            }
            if !alert.isEmpty { aps.append("alert", .object(alert)) }
            apns.append("aps", .object(aps))
        }
        if let data = message["data"]?.object {
            for member in data.members where apns[member.key] == nil { apns.append(member.key, member.value) }
        }
        let image = firebaseHTTPv1iOSImage(payload)?.url
        if let image { apns.append("fcm_options", .object(["image": .string(image)])) }
        let (content, read) = ContentReader.read(apns, vendor: .firebase, platform: .ios)
        warnings += read.map { $0.hasPrefix("aps") ? "\(prefix)apns.payload.\($0)" : $0 }
        if content.visible, image != nil, content.serviceExtension == false {
            warnings.append(
                "\(prefix)apns.payload.aps.mutable-content is not 1: iPhones would not run a service extension for this message, so they show no image")
        }
        // A message meant to be seen (a notification, or an image for iPhones) that gives iPhones
        // no alert: APNs shows nothing, unless it is a background push on purpose.
        let meantToShow = message["notification"] != nil || message[path: ["android", "notification"]] != nil || image != nil
        if !content.visible, meantToShow, apns[path: ["aps", "content-available"]]?.isSet != true {
            warnings.append(
                "iPhones show nothing of this message: without \(prefix)notification.title or body, or an alert in \(prefix)apns.payload.aps, APNs delivers no alert, so no service extension runs"
                    + (image == nil ? "" : " and the image is not attached"))
        }
        return (content, warnings)
    }

    /// The image iPhones attach from an HTTP v1 message: `apns.fcm_options.image`, else
    /// `notification.image`, with its path.
    static func firebaseHTTPv1iOSImage(_ payload: JSONObject) -> (url: String, path: String)? {
        let message = payload["message"]?.object ?? payload
        let prefix = payload["message"] == nil ? "" : "message."
        for (value, path) in [
            (message[path: ["apns", "fcm_options", "image"]], "apns.fcm_options.image"),
            (message[path: ["notification", "image"]], "notification.image"),
        ] {
            if let url = value?.string, !url.isEmpty { return (url, prefix + path) }
        }
        return nil
    }

    /// HTTP v1's `NotificationPriority` names as NotificationCompat's −2…2.
    static let firebasePriorities: KeyValuePairs<String, Int> = [
        "PRIORITY_MIN": -2, "PRIORITY_LOW": -1, "PRIORITY_DEFAULT": 0, "PRIORITY_HIGH": 1, "PRIORITY_MAX": 2,
    ]

    /// FCM Android's picture: `gcm.n.image` (or the legacy `gcm.notification.image`), or an HTTP
    /// v1 message's `android.notification.image` else `notification.image`.
    static func firebaseAndroidPicture(_ payload: JSONObject) -> String? {
        let message = payload["message"]?.object ?? payload
        return firstText([
            payload["gcm.n.image"], payload["gcm.notification.image"],
            message[path: ["android", "notification", "image"]], message[path: ["notification", "image"]],
        ])
    }
}
