import Foundation

/// A parsed JSON value, used only to read vendor keys; the payload bytes themselves are never
/// re-serialised.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Parses `data` as one JSON object (see `JSONReader`), or returns `nil`.
    static func object(from data: Data) -> JSONObject? {
        (try? JSONReader.read(data))?.object
    }

    /// The object, if this is one.
    var object: JSONObject? {
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

/// A JSON object: its members in the order of the text, a repeated key's last value winning.
///
/// Keys are compared as bytes (their UTF-8), as every other JSON parser compares them: not with
/// `String`'s `==`, under which canonically equivalent keys ("K" and the Kelvin sign U+212A,
/// a precomposed "é" and "e" with a combining accent) would be one key.
///
/// Not a `Dictionary`: a payload's objects hold a handful of keys, read once or twice each, and
/// building a hash table (an allocation and a hash per key, another per lookup) was nearly half
/// of reading a payload on a warm cache. A lookup compares the keys from the last, one byte
/// comparison per member (the lengths first): for one object of 94,000 keys filling 1 MiB (a
/// `maximumPayloadBytes` far above the default 4,096), where every vendor's lookups miss, 30–35 ms
/// from bytes to outcome, against 51–57 ms with dictionaries.
struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// One `"key": value` of the text.
    struct Member: Sendable, Equatable {
        var key: String
        var value: JSONValue

        static func == (lhs: Self, rhs: Self) -> Bool { sameKey(lhs.key, rhs.key) && lhs.value == rhs.value }
    }

    /// Every member, repeated keys included, in the order of the text.
    private(set) var members: [Member]

    init(members: [Member] = []) { self.members = members }

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    /// Whether two keys are the same bytes.
    static func sameKey(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Whether `lhs` comes before `rhs` in the byte order of their UTF-8 (which is also the
    /// order of their Unicode scalars).
    static func keyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// The value of `key` (the same bytes): the last one when the key is repeated.
    subscript(key: String) -> JSONValue? {
        members.last { Self.sameKey($0.key, key) }?.value
    }

    /// The value at a dotted path of object keys, e.g. `["ab", "att", "url"]`.
    subscript(path path: [String]) -> JSONValue? {
        var current: JSONValue = .object(self)
        for key in path {
            guard let next = current.object?[key] else { return nil }
            current = next
        }
        return current
    }

    /// Whether the object has no members.
    var isEmpty: Bool { members.isEmpty }

    /// Each key once, with its value (the last, when repeated), in ascending byte order of the
    /// keys. A sort, not a lookup per key: that would compare every key with every other.
    var sortedByKey: [Member] {
        // By key, and among equal keys by position, so that the last of each run is the value.
        let order = members.indices.sorted { left, right in
            let (a, b) = (members[left].key, members[right].key)
            return Self.keyPrecedes(a, b) || (!Self.keyPrecedes(b, a) && left < right)
        }
        var sorted: [Member] = []
        sorted.reserveCapacity(order.count)
        for (position, index) in order.enumerated()
        where position + 1 == order.count || !Self.sameKey(members[order[position + 1]].key, members[index].key) {
            sorted.append(members[index])
        }
        return sorted
    }

    /// Adds a member; a key already present keeps its place but reads as this value.
    mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    /// Equal when every key (as bytes) has an equal value, whatever the order and repetitions in
    /// the text.
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.sortedByKey == rhs.sortedByKey }
}
