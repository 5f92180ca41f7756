import Foundation

/// Reads a recognised payload's `NotificationContent`: typed access to the payload's values,
/// where a value of the wrong type, or a JSON-in-string field that does not parse, is left out
/// and named in `warnings`.
struct ContentReader {
    /// The payload (for an FCM HTTP v1 message, the `message` object when it is wrapped in one).
    let payload: JSONObject
    var content: NotificationContent
    var warnings: [String] = []
    /// What follows from a value of another type than its field's, while one is set: added to
    /// each such warning (`warnWrongType`). An FCM HTTP v1 message sets it, since its API refuses
    /// the whole message then.
    var wrongTypeConsequence: String?
    /// Set when the vendor's SDK shows the push itself, as a local notification the app makes
    /// (OneSignal's minified form): no service extension is involved, and the app attaches the
    /// files it downloads (`NotificationContent.serviceExtension` is then `nil`).
    var shownByTheApp = false

    init(_ payload: JSONObject, platform: Platform) {
        self.payload = payload
        content = NotificationContent(platform: platform)
    }

    /// The content of `payload`, a push of `vendor` shaped for `platform`, and the warnings.
    static func read(
        _ payload: JSONObject, vendor: Vendor, platform: Platform
    ) -> (NotificationContent, [String]) {
        var reader = ContentReader(payload, platform: platform)
        switch (vendor, platform) {
        case (.braze, .ios): reader.readBrazeIOS()
        case (.braze, .android): reader.readBrazeAndroid()
        case (.moengage, .ios): reader.readMoEngageIOS()
        case (.moengage, .android): reader.readMoEngageAndroid()
        case (.airship, .ios): reader.readAirshipIOS()
        case (.airship, .android): reader.readAirshipAndroid()
        case (.oneSignal, .ios): reader.readOneSignalIOS()
        case (.oneSignal, .android): reader.readOneSignalAndroid()
        case (.firebase, .ios): reader.readFirebaseIOS()
        case (.firebase, .android): reader.readFirebaseAndroid()
        case (.cleverTap, .ios): reader.readCleverTapIOS()
        case (.cleverTap, .android): reader.readCleverTapAndroid()
        case (.iterable, .ios): reader.readIterableIOS()
        case (.iterable, .android): reader.readIterableAndroid()
        case (.customerIO, .ios): reader.readCustomerIOIOS()
        case (.customerIO, .android): reader.readCustomerIOAndroid()
        default: reader.readAPNs()
        }
        return reader.finished()
    }

    /// The content of an APNs payload with no vendor's keys: what iOS shows of its `aps`, and
    /// its custom keys as extras.
    static func readPlainAPNs(_ payload: JSONObject) -> (NotificationContent, [String]) {
        var reader = ContentReader(payload, platform: .ios)
        reader.readAPNs()
        return reader.finished()
    }

    private func finished() -> (NotificationContent, [String]) {
        var reader = self
        reader.warnUnrenderedPlaceholders()
        if reader.content.platform == .ios { reader.content.serviceExtension = reader.shownByTheApp ? nil : reader.serviceExtensionRuns }
        // The pictures' URLs are fetched, so they are shown as outcomes show fetched URLs: with
        // any credentials redacted; so are URLs among the extras, which hold the attachment's
        // key on CleverTap iOS (`ct_mediaUrl`) and every data key on Android. Tap targets are
        // the campaign's content and stay as written.
        reader.content.imageURL = reader.content.imageURL.map(URLCredentials.redacted)
        reader.content.largeIconURL = reader.content.largeIconURL.map(URLCredentials.redacted)
        if reader.content.extras.values.contains(where: \.holdsURLCredentials) {
            reader.content.extras = reader.content.extras.mapValues { $0.redactingURLCredentials() }
        }
        return (reader.content, reader.warnings)
    }

    /// A warning for each text a visible push shows, and each tap target, that still holds a
    /// template's placeholder (`{{first_name}}`, `{% if vip %}`, `${name}`: Liquid, Handlebars,
    /// Jinja): the campaign's tool did not render it, and the phone shows it as it is.
    mutating func warnUnrenderedPlaceholders() {
        guard content.visible else { return }
        var fields: [(name: String, text: String?)] = [
            ("title", content.title), ("subtitle", content.subtitle), ("body", content.body), ("summary", content.summary),
            ("expanded title", content.expandedTitle), ("expanded text", content.expandedText), ("tap target", content.openURL),
        ]
        for button in content.buttons {
            let name = "button '\(button.title ?? button.id)'"
            fields += [(name, button.title), (name + " target", button.url)]
        }
        for field in fields {
            guard let text = field.text, let placeholder = Self.placeholder(in: text) else { continue }
            warnings.append("\(field.name) holds '\(placeholder)', a template placeholder left unrendered: the phone shows it as it is")
        }
    }

    /// The first template placeholder in `text`: `{{…}}`, `{%…%}` or `${…}`, with something
    /// inside and at most 80 characters in all (a longer stretch between braces is prose).
    static func placeholder(in text: String) -> Substring? {
        // Most texts hold no brace at all: one pass over the bytes, before any search.
        guard text.utf8.contains(UInt8(ascii: "{")) else { return nil }
        for (open, close) in [("{{", "}}"), ("{%", "%}"), ("${", "}")] {
            var from = text.startIndex
            while let start = text.range(of: open, range: from..<text.endIndex) {
                guard let end = text.range(of: close, range: start.upperBound..<text.endIndex) else { break }
                let candidate = text[start.lowerBound..<end.upperBound]
                if start.upperBound < end.lowerBound, candidate.count <= 80 { return candidate }
                from = start.upperBound
            }
        }
        return nil
    }

    /// iOS runs the app's notification service extension only for `aps.mutable-content: 1`.
    static func runsServiceExtension(_ payload: JSONObject) -> Bool {
        payload[path: ["aps", "mutable-content"]]?.isSet == true
    }

    /// Whether iOS runs the service extension for this payload.
    var serviceExtensionRuns: Bool { Self.runsServiceExtension(payload) }

    /// A warning for each of `keys` (paths into the payload, present) that marks an internal push
    /// for `sdk`, when `aps.alert` is set: iOS shows the push all the same.
    mutating func warnInternalKeysShown(_ keys: [(path: String, present: Bool)], sdk: String) {
        guard payload.hasAPSAlert else { return }
        for key in keys where key.present {
            warnings.append(
                "\(key.path) marks an internal push for \(sdk)'s SDK, yet aps.alert is set: iOS shows this push all the same (an extension cannot hide it), and its picture is fetched")
        }
    }

    /// Whether the service extension makes `change` (what the vendor's extension does with the
    /// payload's `path`); when iOS runs none, a warning says so and what the phone shows instead.
    mutating func extensionMakes(_ change: String, instead: String) -> Bool {
        if serviceExtensionRuns { return true }
        warnings.append("\(change) only in the app's service extension, which iOS does not run without aps.mutable-content: 1: \(instead)")
        return false
    }

    // MARK: Typed values

    /// The warning for `path`, whose value is not `expected` ("a string"), with
    /// `wrongTypeConsequence` when one is set.
    mutating func warnWrongType(_ path: String, _ expected: String) {
        warnWrongType("\(path) is not \(expected)")
    }

    /// `warning`, about a value of the wrong type, with `wrongTypeConsequence` when one is set.
    mutating func warnWrongType(_ warning: String) {
        warnings.append(warning + (wrongTypeConsequence.map { ": " + $0 } ?? ""))
    }

    /// A string; `nil` when absent, and a warning when it is another type. An empty string is
    /// returned as it is.
    mutating func rawString(_ value: JSONValue?, at path: String) -> String? {
        guard let value else { return nil }
        switch value {
        case .string(let text): return text
        case .null: return nil
        default:
            warnWrongType(path, "a string")
            return nil
        }
    }

    /// A string to show: as `rawString`, with an empty string as `nil`.
    mutating func text(_ value: JSONValue?, at path: String) -> String? {
        guard let text = rawString(value, at: path), !text.isEmpty else { return nil }
        return text
    }

    /// A top-level string to show.
    mutating func text(_ key: String) -> String? { text(payload[key], at: key) }

    /// A top-level string that is not blank (only white space): what Kotlin SDKs check with
    /// `isNullOrBlank` / `isNotBlank`.
    mutating func nonBlankText(_ key: String) -> String? {
        text(key).flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
    }

    /// The warning for an Android sound key that `NotificationCompat`'s `setSound` applies:
    /// from Android 8 (API 26) a notification plays its channel's sound, whatever the builder
    /// was given: Braze's `sd` (`BrazeNotificationUtils.setSoundIfPresentAndSupported`),
    /// FCM's `sound2`/`sound`, CleverTap's `wzrk_sound`, and OneSignal's `sound` without `chnl`
    /// (`NotificationChannelManager`: the app's `oth_chnl`, else the SDK's default channel).
    /// Added when the content names a sound, which `key` set (called after the channel is read).
    mutating func warnSoundBeforeChannels(_ key: String) {
        guard content.sound != nil else { return }
        content.soundBeforeAndroid8Only = true
        warnings.append(
            "\(key) plays only before Android 8 (API 26): from Android 8 the sound is the channel's (\(content.channel ?? "the default channel"))")
    }

    /// The warning for a push that `sdk`, the vendor's SDK, does not show because each of `keys`
    /// is missing (or empty, or no string); `rule` says what the SDK requires. Called only for a
    /// push that is no deliberately silent or internal one, which shows nothing with no warning.
    mutating func warnNothingShown(without keys: [String], sdk: String, rule: String) {
        let states = keys.map { key in
            switch payload[key] {
            case nil, .null?: "\(key) is missing"
            case .string?: "\(key) is empty"
            default: "\(key) is not a string"
            }
        }
        warnings.append("\(states.joined(separator: " and ")): \(sdk) shows a push only \(rule), so it shows nothing of this one")
    }

    /// The first of `candidates` that is a non-empty string: a picture named by one of several
    /// keys, in the vendor's order. Read without warnings, as the vendor's SDK reads it.
    static func firstText(_ candidates: [JSONValue?]) -> String? {
        candidates.lazy.compactMap { $0?.string }.first { !$0.isEmpty }
    }

    /// An id: a string, or a number written as an integer.
    mutating func identifier(_ value: JSONValue?, at path: String) -> String? {
        if case .number(let number)? = value {
            return PayloadValue.text(of: number)
        }
        return text(value, at: path)
    }

    /// Whether a string may stand for a number or hold JSON: on Android, where every value of the
    /// data map is a string. An APNs payload is real JSON, and iOS reads its values by their JSON
    /// type: a string badge (`"+1"`, `"5"`) changes nothing there.
    var readsStringsAsValues: Bool { content.platform == .android }

    /// An integer: a whole number, or on Android a string holding one.
    mutating func integer(_ value: JSONValue?, at path: String) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .number(let number)?:
            if let integer = PayloadValue.exactInteger(number) { return integer }
        case .string(let text)? where readsStringsAsValues:
            if let integer = Int(text.trimmingCharacters(in: .whitespaces)) { return integer }
        default: break
        }
        warnWrongType(path, "an integer")
        return nil
    }

    /// A number, or on Android a string holding one.
    mutating func number(_ value: JSONValue?, at path: String) -> Double? {
        switch value {
        case nil, .null?: return nil
        case .number(let number)?: return number
        case .string(let text)? where readsStringsAsValues:
            if let number = Double(text), number.isFinite { return number }
        default: break
        }
        warnWrongType(path, "a number")
        return nil
    }

    /// A flag: `true`/`false`, 1/0, or those as strings.
    mutating func flag(_ value: JSONValue?, at path: String) -> Bool? {
        switch value {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        case .number(let number)? where number == 0 || number == 1: return number == 1
        case .string(let text)?:
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0", "": return false
            default: break
            }
        default: break
        }
        warnWrongType(path, "a boolean")
        return nil
    }

    /// A JSON object, or on Android a string holding one (its JSON-in-string fields).
    mutating func object(_ value: JSONValue?, at path: String) -> JSONObject? {
        switch decoded(value, at: path) {
        case nil: return nil
        case .object(let object)?: return object
        default:
            warnWrongType(path, "an object")
            return nil
        }
    }

    /// A JSON array, or on Android a string holding one.
    mutating func array(_ value: JSONValue?, at path: String) -> [JSONValue]? {
        switch decoded(value, at: path) {
        case nil: return nil
        case .array(let array)?: return array
        default:
            warnWrongType(path, "an array")
            return nil
        }
    }

    /// An array of strings (localisation arguments), or on Android a string holding one.
    mutating func strings(_ value: JSONValue?, at path: String) -> [String]? {
        guard let array = array(value, at: path) else { return nil }
        let strings = array.compactMap { element -> String? in
            if case .number(let number) = element { return PayloadValue.text(of: number) }
            return element.string
        }
        guard strings.count == array.count else {
            warnWrongType("\(path) holds a value that is not a string")
            return nil
        }
        return strings
    }

    /// `value`, with (on Android) a string that starts like a JSON object or array decoded; `nil`
    /// and a warning when such a string does not parse. What comes before the `{` or `[` may be
    /// JSON's whitespace (space, tab, line feed, carriage return), which Android's `JSONTokener`
    /// skips too: a field written from a template often starts with a line break.
    private mutating func decoded(_ value: JSONValue?, at path: String) -> JSONValue? {
        guard let value else { return nil }
        guard case .string(let text) = value, readsStringsAsValues else { return value == .null ? nil : value }
        let whitespace: [UInt8] = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        guard let first = text.utf8.first(where: { !whitespace.contains($0) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else {
            if text.isEmpty { return nil }
            warnings.append("\(path) is not JSON")
            return nil
        }
        do {
            return try JSONReader.read(Data(text.utf8))
        } catch {
            warnings.append("\(path) is not valid JSON: \(error.message) at byte \(error.offset)")
            return nil
        }
    }

    // MARK: Extras

    /// The payload's members whose key `isVendorKey` does not claim, as extras.
    mutating func setExtras(from object: JSONObject, excluding isVendorKey: (String) -> Bool) {
        var extras: [String: PayloadValue] = [:]
        for member in object.members where !isVendorKey(member.key) {
            extras[member.key] = PayloadValue(member.value)
        }
        content.extras = extras
    }

    /// Keys FCM puts into every Android data map (`google.*`, `gcm.*`, `from`, …): never extras.
    static func isFCMKey(_ key: String) -> Bool {
        key.hasPrefix("google.") || key.hasPrefix("gcm.") || key == "from" || key == "message_type"
            || key == "collapse_key"
    }
}
