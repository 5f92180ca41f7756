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

    /// Parses `data` as one JSON object (see `JSONReader`), or returns `nil`.
    static func object(from data: Data) -> [String: JSONValue]? {
        (try? JSONReader.read(data))?.object
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
