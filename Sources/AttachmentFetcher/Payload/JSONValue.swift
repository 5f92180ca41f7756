import Foundation

/// A parsed JSON value, used only to read vendor keys; the payload bytes themselves are never
/// re-serialised.
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses `data` as one JSON object, or returns `nil`.
    ///
    /// Foundation's `JSONSerialization` is used rather than `JSONDecoder`: reading an arbitrary
    /// value through `Decodable` means trying each type in turn, and each miss throws, which
    /// made parsing five times slower.
    static func object(from data: Data) -> [String: JSONValue]? {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        return object.mapValues(JSONValue.init(foundation:))
    }

    /// Converts what `JSONSerialization` produced.
    ///
    /// The casts are ordered by cost and frequency: a cast that fails has to try bridging first
    /// (a string tested as a number, a dictionary as an array), and in this order the common
    /// leaves and objects match at the first or second try. Measured in a micro-benchmark, this
    /// made the conversion 3–10 times cheaper than the natural order (string, number, array, object).
    private init(foundation value: Any) {
        if let string = value as? String {
            self = .string(string)
        } else if let object = value as? [String: Any] {
            self = .object(object.mapValues(JSONValue.init(foundation:)))
        } else if let number = value as? NSNumber {
            // Booleans come back as NSNumbers of C type `char`.
            self = String(cString: number.objCType) == "c" ? .bool(number.boolValue) : .number(number.doubleValue)
        } else if let array = value as? [Any] {
            self = .array(array.map(JSONValue.init(foundation:)))
        } else {
            self = .null
        }
    }

    /// The object, if this is one.
    var object: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The string, if this is one.
    var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// Whether a vendor flag is set: `true`, `1` or `"1"`/`"true"`, as SDKs read it.
    var isSet: Bool {
        switch self {
        case .bool(let value): value
        case .number(let value): value == 1
        case .string(let value): value == "1" || value.lowercased() == "true"
        default: false
        }
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The value at a dotted path of object keys, e.g. `["ab", "att", "url"]`.
    subscript(path path: [String]) -> JSONValue? {
        var current: JSONValue = .object(self)
        for key in path {
            guard let next = current.object?[key] else { return nil }
            current = next
        }
        return current
    }
}
