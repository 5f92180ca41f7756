/// A JSON value taken from a payload, such as a custom extra: any JSON, objects as dictionaries.
public indirect enum PayloadValue: Sendable, Hashable, Encodable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([PayloadValue])
    /// An object (a repeated key keeps its last value).
    case object([String: PayloadValue])

    /// The value as JSON: objects as objects, numbers as numbers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let integer = Self.exactInteger(value) { try container.encode(integer) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }

    /// `value` as an `Int` when it is a whole number that a `Double` holds exactly.
    static func exactInteger(_ value: Double) -> Int? {
        guard value == value.rounded(), abs(value) <= 9_007_199_254_740_992 else { return nil }
        return Int(value)
    }

    /// `value` as a person writes it: `7`, not `7.0`; `0.25`.
    public static func text(of value: Double) -> String {
        exactInteger(value).map(String.init) ?? value.description
    }
}

extension PayloadValue {
    /// The library's parsed value, as the public one.
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .array(let values): self = .array(values.map(PayloadValue.init))
        // Swift's `String` keys merge canonically equivalent spellings ("K", "\u{212A}"), which
        // the payload's own reading keeps apart: in extras the later one stands.
        case .object(let object):
            self = .object(
                Dictionary(object.sortedByKey.map { ($0.key, PayloadValue($0.value)) }, uniquingKeysWith: { _, later in later }))
        }
    }

    /// Appends the value as JSON, object keys sorted, as `JSONEncoder` with `.sortedKeys` writes it.
    func appendJSON(to buffer: inout [UInt8]) {
        switch self {
        case .null: buffer.append(contentsOf: "null".utf8)
        case .bool(let flag): buffer.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): JSONText.appendNumber(number, to: &buffer)
        case .string(let text): JSONText.appendString(text, to: &buffer)
        case .array(let values):
            buffer.append(UInt8(ascii: "["))
            for (position, value) in values.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                value.appendJSON(to: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members): Self.appendObject(members, to: &buffer)
        }
    }

    /// Appends `members` as a JSON object, keys sorted.
    static func appendObject(_ members: [String: PayloadValue], to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "{"))
        for (position, key) in members.keys.sorted().enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            JSONText.appendString(key, to: &buffer)
            buffer.append(UInt8(ascii: ":"))
            members[key]!.appendJSON(to: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }
}

extension JSONText {
    /// Appends a number: a whole number as an integer, any other as Swift writes a `Double`.
    static func appendNumber(_ value: Double, to buffer: inout [UInt8]) {
        if let integer = PayloadValue.exactInteger(value) {
            buffer.append(contentsOf: String(integer).utf8)
        } else {
            buffer.append(contentsOf: value.description.utf8)
        }
    }
}

extension PayloadValue {
    /// Whether a URL in the value has credentials to redact: a scan for `@` in most payloads.
    var holdsURLCredentials: Bool {
        switch self {
        case .string(let text): text.utf8.contains(UInt8(ascii: "@")) && URLCredentials.redactedIfURL(text) != text
        case .array(let values): values.contains { $0.holdsURLCredentials }
        case .object(let members): members.values.contains { $0.holdsURLCredentials }
        case .null, .bool, .number: false
        }
    }

    /// The value with the credentials of every URL in it redacted (`URLCredentials.redactedIfURL`),
    /// through arrays and objects.
    func redactingURLCredentials() -> PayloadValue {
        switch self {
        case .string(let text): .string(URLCredentials.redactedIfURL(text))
        case .array(let values): .array(values.map { $0.redactingURLCredentials() })
        case .object(let members): .object(members.mapValues { $0.redactingURLCredentials() })
        case .null, .bool, .number: self
        }
    }
}
