/// Android's accent colour, as the platform and each vendor's SDK parse the colour a payload gives.
/// A colour is Android's `@ColorInt`, ARGB in 32 bits, written `#AARRGGBB` (see
/// `NotificationContent.accentColor`).
enum AndroidColor {
    /// `argb` as `#AARRGGBB`, upper-case hexadecimal.
    static func text(_ argb: UInt32) -> String {
        let digits = String(argb, radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// How a vendor's key writes a colour: how the key is read, and the opaque colour as the key
    /// would write it, for the warning about a colour of alpha 00.
    enum Notation {
        /// Braze's `ac`: a decimal ARGB number.
        case decimal
        /// OneSignal's `bgac`: hexadecimal AARRGGBB, without '#'.
        case hexadecimal
        /// `Color.parseColor`'s `#AARRGGBB` (FCM, CleverTap, Airship).
        case parseColor

        /// `argb` as the key writes it.
        func written(_ argb: UInt32) -> String {
            switch self {
            case .decimal: String(argb)
            case .hexadecimal: String(AndroidColor.text(argb).dropFirst())
            case .parseColor: AndroidColor.text(argb)
            }
        }

        /// How `key` is read, where the alpha is.
        func reading(_ key: String) -> String {
            switch self {
            case .decimal: "\(key) is a decimal ARGB number, the alpha its top byte (an RGB value alone has alpha 00)"
            case .hexadecimal: "\(key) is hexadecimal AARRGGBB, the alpha first (RRGGBB alone has alpha 00)"
            case .parseColor: "Color.parseColor reads #AARRGGBB with the alpha first (#RRGGBB is opaque)"
            }
        }
    }

    /// The names `Color.parseColor` knows (`android.graphics.Color.sColorNameMap`), in lower case.
    static let names: [String: UInt32] = [
        "black": 0xFF00_0000, "darkgray": 0xFF44_4444, "gray": 0xFF88_8888, "lightgray": 0xFFCC_CCCC,
        "white": 0xFFFF_FFFF, "red": 0xFFFF_0000, "green": 0xFF00_FF00, "blue": 0xFF00_00FF,
        "yellow": 0xFFFF_FF00, "cyan": 0xFF00_FFFF, "magenta": 0xFFFF_00FF, "aqua": 0xFF00_FFFF,
        "fuchsia": 0xFFFF_00FF, "darkgrey": 0xFF44_4444, "grey": 0xFF88_8888, "lightgrey": 0xFFCC_CCCC,
        "lime": 0xFF00_FF00, "maroon": 0xFF80_0000, "navy": 0xFF00_0080, "olive": 0xFF80_8000,
        "purple": 0xFF80_0080, "silver": 0xFFC0_C0C0, "teal": 0xFF00_8080,
    ]

    /// `android.graphics.Color.parseColor`: `#` then a hexadecimal `Long.parseLong` (an optional
    /// sign, then digits) making 7 characters in all (`#RRGGBB`, alpha FF) or 9 (`#AARRGGBB`), or
    /// one of its colour names in any case; `nil` where it throws (for an empty string too, where
    /// `charAt(0)` throws).
    static func parse(_ text: String) -> UInt32? {
        guard text.hasPrefix("#") else { return names[text.lowercased()] }
        let length = text.utf16.count
        guard length == 7 || length == 9, var color = Int64(text.dropFirst(), radix: 16) else { return nil }
        if length == 7 { color |= 0xFF00_0000 }
        return UInt32(truncatingIfNeeded: color)
    }

    /// Braze's `ac` as `BrazeNotificationPayload.parseStringAsColorInt` reads it: a decimal
    /// `Long.parseLong` (an optional sign, then digits) cast to a 32-bit int, which keeps its low
    /// 32 bits; `nil` where it throws.
    static func decimal(_ text: String) -> (color: UInt32, exact: Bool)? {
        guard let value = Int64(text) else { return nil }
        return (UInt32(truncatingIfNeeded: value), Int64(Int32.min)...Int64(UInt32.max) ~= value)
    }

    /// OneSignal's `bgac` as its `getAccentColor` reads it, `BigInteger(bgac, 16).toInt()`: an
    /// optional sign, then hexadecimal digits of any length, of which the low 32 bits stand; `nil`
    /// where the `BigInteger` constructor throws.
    static func bigIntegerHex(_ text: String) -> UInt32? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative || digits.first == "+" { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var low: UInt32 = 0
        for character in digits {
            guard let digit = character.hexDigitValue else { return nil }
            low = low &* 16 &+ UInt32(digit)
        }
        return negative ? 0 &- low : low
    }
}

extension ContentReader {
    /// Sets the accent colour `color` read from `key` (`shown` the payload's value, written in
    /// `notation`), with a warning when it is 0, Android's `COLOR_DEFAULT`, which gives the
    /// notification no colour, and when its alpha is 00, fully transparent (a colour written
    /// without its alpha, the likeliest mistake), naming the opaque colour as the key writes it.
    mutating func setAccentColor(_ color: UInt32, from key: String, shown value: String, notation: AndroidColor.Notation) {
        guard color != 0 else {
            warnings.append("\(key) '\(value)' is 0, Android's COLOR_DEFAULT: the notification gets the default colour, none of its own")
            return
        }
        content.accentColor = AndroidColor.text(color)
        if color >> 24 == 0 {
            warnings.append(
                "\(key) '\(value)' has alpha 00, so the accent colour (\(AndroidColor.text(color))) is fully transparent: \(notation.reading(key)); the opaque colour is \(notation.written(color | 0xFF00_0000))")
        }
    }

    /// Reads the accent colour of `key` through `Color.parseColor` (FCM, CleverTap, Airship);
    /// `false` when the value is one it throws on, with a warning that ends with `sdk`: what the
    /// vendor's SDK does then. An empty string is no colour at all when `emptyIsNone` (FCM checks
    /// `TextUtils.isEmpty` first), else one `Color.parseColor` throws on.
    @discardableResult
    mutating func readParsedColor(_ value: JSONValue?, at key: String, emptyIsNone: Bool, otherwise sdk: String) -> Bool {
        guard let text = rawString(value, at: key), !(text.isEmpty && emptyIsNone) else { return true }
        guard !text.isEmpty else {
            warnings.append("\(key) is empty, on which Color.parseColor throws: \(sdk)")
            return false
        }
        guard let color = AndroidColor.parse(text) else {
            warnings.append(
                "\(key) '\(text)' is no colour Color.parseColor reads (#RRGGBB, #AARRGGBB or one of its colour names): \(sdk)")
            return false
        }
        setAccentColor(color, from: key, shown: text, notation: .parseColor)
        return true
    }

    /// A 32-bit integer as Java's `Integer.parseInt` and Kotlin's `toInt()` read it (an optional
    /// sign, then decimal digits, nothing around them), or why not: `nil` without the key (and,
    /// when `emptyIsNone`, for an empty string).
    mutating func javaInt(_ key: String, emptyIsNone: Bool = true) -> Result<Int, JavaIntFailure>? {
        guard let text = rawString(payload[key], at: key) else { return nil }
        if text.isEmpty, emptyIsNone { return nil }
        guard let value = Int32(text) else { return .failure(JavaIntFailure(text: text)) }
        return .success(Int(value))
    }

    /// A value `javaInt` could not read.
    struct JavaIntFailure: Error {
        var text: String
    }

    /// The public version `key` holds (a JSON object, on Android as a string): its title, text
    /// and summary under the keys `fields` names, each read as a string. `emptyIsNone`: an object
    /// with no member sets none (Braze's SDK returns on an empty bundle). Read after the
    /// visibility: a public version that a public or secret notification never shows gets a
    /// warning, as does one that does not parse (the SDK then sets none).
    mutating func readPublicVersion(_ key: String, fields: (title: String, text: String, summary: String), emptyIsNone: Bool) {
        // An empty string is none: both SDKs skip it.
        guard payload[key]?.string != "", let object = object(payload[key], at: key) else { return }
        if object.isEmpty, emptyIsNone { return }
        content.publicVersion = NotificationContent.PublicVersion(
            title: text(object[fields.title], at: "\(key).\(fields.title)"),
            text: text(object[fields.text], at: "\(key).\(fields.text)"),
            summary: text(object[fields.summary], at: "\(key).\(fields.summary)"))
        if content.shownPublicVersion == nil, let visibility = content.lockScreenVisibility {
            warnings.append("\(key) is never shown: the notification is \(visibility.name) on the lock screen (\(visibility.effect))")
        }
    }

    /// The lock-screen visibility `key` names, for the SDKs that set it only when it is one of
    /// Android's three and otherwise set none (Braze, whose `isValidNotificationVisibility` checks
    /// it; FCM, whose `NotificationParams.getNotificationVisibility` skips it), named `sdk`.
    mutating func readCheckedVisibility(_ key: String, sdk: String) {
        readVisibility(key, outOfRange: "\(sdk) sets no visibility", notInteger: "\(sdk) sets no visibility")
    }

    /// Reads `key` as Android's lock-screen visibility (`javaInt`, an empty string as a value
    /// unless `emptyIsNone`), with a warning that ends with `outOfRange` for an integer outside
    /// −1…1, or with `notInteger` for another value; `false` for a value that is no integer.
    @discardableResult
    mutating func readVisibility(_ key: String, emptyIsNone: Bool = true, outOfRange: String, notInteger: String) -> Bool {
        switch javaInt(key, emptyIsNone: emptyIsNone) {
        case nil: return true
        case .success(let value)?:
            if let visibility = NotificationContent.LockScreenVisibility(rawValue: value) {
                content.lockScreenVisibility = visibility
            } else {
                warnings.append("\(key) is \(value), outside −1…1 (secret, private, public): \(outOfRange)")
            }
            return true
        case .failure(let failure)?:
            warnings.append("\(key) '\(failure.text)' is not an integer: \(notInteger)")
            return false
        }
    }
}
