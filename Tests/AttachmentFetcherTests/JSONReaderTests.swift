@testable import AttachmentFetcher
import Foundation
import Testing

/// The payload reader against Foundation's `JSONSerialization`, the parser it replaced: for each
/// text both either refuse it or read the same value.
@Suite("JSON reader: the same answers as JSONSerialization", .timeLimit(.minutes(2)))
struct JSONReaderTests {
    /// Texts at the edges of the grammar, each accepted or refused by both.
    static let edges: [[UInt8]] = textEdges.map { Array($0.utf8) } + byteEdges + nestingEdges

    static let textEdges: [String] = [
        "", " ", "{}", "[]", " \t\r\n{ } \n", "{\"a\":}", "{\"a\":1,}", "[1,]", "[,1]", "{\"a\" 1}", "{a:1}", "{'a':1}",
        "{\"a\":1}}", "{\"a\":1} x", "[1] [2]", "1", "\"s\"", "null", "true", "01", "[01]", "[-01]", "[-]", "[1.]", "[.5]",
        "[1e]", "[1e+]", "[-0]", "[-0.0e-0]", "[1E5]", "[1e+5]", "[0.5e-3]", "[+1]", "[0x10]", "[NaN]", "[Infinity]",
        "[1e400]", "[-1e400]", "[1e-400]", "[123456789012345678901234567890]", "[9007199254740993]",
        "[-9223372036854775809]", "[18446744073709551616]", "{\"a\":1,\"a\":2}", "[true,false,null]", "[tru]",
        "[nul]", "[falsey]", "[True]", #"["\ud83d\ude00"]"#, #"["\ud83d"]"#, #"["\ud83dx"]"#, #"["\ud83d\u0041"]"#,
        #"["\ude00"]"#, #"["\u00zz"]"#, #"["\u12"]"#, #"["\u0000"]"#, #"["\x"]"#, #"["\/\b\f\n\r\t\"\\"]"#, #"["\"#,
        #"["a"#, "[\"a\u{01}\"]", "[\"a\u{7F}\"]", "[\"tab\there\"]", "[\"caf\u{E9} \u{1F680}\"]", #"{"":""}"#,
        "[[[[[]]]]]", "[{\"a\":[{\"b\":{}}]}]", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", "[1 2]", "[\"a\" \"b\"]",
        "{\"a\":1 \"b\":2}", "[/* c */1]", "[1]//", "[\u{A0}1]", "[\u{0B}1]",
    ]

    static let byteEdges: [[UInt8]] = [
        [0xEF, 0xBB, 0xBF] + Array("{}".utf8),  // UTF-8 byte order mark
        [0x5B, 0x22, 0xFF, 0x22, 0x5D],  // a byte that is never UTF-8
        [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D],  // an overlong encoding
        [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D],  // an encoded surrogate
        [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D],  // a sequence cut short
        [0x5B, 0x00, 0x5D],  // a NUL byte
    ]

    /// As deep as allowed, and one level deeper.
    static let nestingEdges: [[UInt8]] = [512, 513].flatMap { (depth: Int) -> [[UInt8]] in
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let objects = String(repeating: "{\"a\":", count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        return [Array(arrays.utf8), Array(objects.utf8)]
    }

    @Test("Edge cases of the grammar", arguments: edges)
    func edge(text: [UInt8]) {
        expectSameAnswer(text)
    }

    @Test("Generated texts, and the same texts broken one byte at a time")
    func generated() {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<2_000 {
            let text = Array(Self.generateDocument(using: &random).utf8)
            expectSameAnswer(text, mustAccept: true)
            var broken = text
            let mutations = Int.random(in: 1...3, using: &random)
            for _ in 0..<mutations where !broken.isEmpty {
                let index = Int.random(in: 0..<broken.count, using: &random)
                let replacement = Self.awkwardBytes.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: broken.remove(at: index)
                case 1: broken.insert(replacement, at: index)
                default: broken[index] = replacement
                }
            }
            expectSameAnswer(broken)
        }
    }

    @Test("A payload's vendor keys are read through it")
    func payloadObject() throws {
        let payload = Data(#"{"aps":{"mutable-content":1},"ab":{"att":{"url":"http://x/a.jpg","type":"jpg"}}}"#.utf8)
        let object = try #require(JSONValue.object(from: payload))
        #expect(object[path: ["ab", "att", "url"]] == .string("http://x/a.jpg"))
        #expect(object[path: ["aps", "mutable-content"]]?.isSet == true)
        let repeated = try #require(JSONValue.object(from: Data(#"{"b":2,"a":1,"c":3,"a":"last"}"#.utf8)))
        #expect(repeated["a"] == .string("last"))
        #expect(repeated.sortedByKey.map(\.key) == ["a", "b", "c"])
        #expect(repeated.sortedByKey.first?.value == .string("last"))
        #expect(repeated == ["c": .number(3), "b": .number(2), "a": .string("last")])
        #expect(JSONValue.object(from: Data("[1]".utf8)) == nil)
        #expect(JSONValue.object(from: Data("{\"a\":".utf8)) == nil)
    }

    @Test("Keys are compared as bytes: canonically equivalent keys are different keys, as in every other JSON parser")
    func keysAreBytes() throws {
        // "K" (U+004B) and the Kelvin sign (U+212A), "é" precomposed and decomposed: Swift's `==`
        // on `String` holds each pair equal.
        let object = try #require(JSONValue.object(from: Data(#"{"K":1,"\u212A":2,"\u00e9":3,"e\u0301":4}"#.utf8)))
        #expect(object.sortedByKey.map { Array($0.key.utf8) } == [[0x4B], [0x65, 0xCC, 0x81], [0xC3, 0xA9], [0xE2, 0x84, 0xAA]])
        #expect(object.sortedByKey.map(\.value) == [.number(1), .number(4), .number(3), .number(2)])
        #expect(object["K"] == .number(1))
        #expect(object["\u{212A}"] == .number(2))
        #expect(object["\u{E9}"] == .number(3))
        #expect(object["e\u{301}"] == .number(4))
        #expect(object != ["K": .number(2), "\u{212A}": .number(2), "\u{E9}": .number(3), "e\u{301}": .number(4)])
        #expect(object == ["e\u{301}": .number(4), "\u{212A}": .number(2), "\u{E9}": .number(3), "K": .number(1)])
        // A vendor key spelled with a look-alike is not the vendor's key.
        let lookalike = try #require(JSONValue.object(from: Data(#"{"a\u0062":{"att":{"url":"http://x/a.jpg"}}}"#.utf8)))
        #expect(lookalike[path: ["ab", "att", "url"]] == .string("http://x/a.jpg"))
        let kelvin = try #require(JSONValue.object(from: Data(#"{"\u212Aey":1}"#.utf8)))
        #expect(kelvin["Key"] == nil)
    }

    // MARK: Helpers

    private func expectSameAnswer(_ text: [UInt8], mustAccept: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        let data = Data(text)
        let ours: JSONValue? = try? JSONReader.read(data)
        let foundation = (try? JSONSerialization.jsonObject(with: data)).map(Self.value(fromFoundation:))
        let shown = String(decoding: text.prefix(200), as: UTF8.self)
        #expect(Self.same(ours, foundation), "\(ours.map { "\($0)" } ?? "nil") against \(foundation.map { "\($0)" } ?? "nil") for \(shown.debugDescription)", sourceLocation: sourceLocation)
        if mustAccept { #expect(ours != nil, "\(shown.debugDescription)", sourceLocation: sourceLocation) }
    }

    /// Equal values, numbers within a relative 1e-14: `JSONSerialization` is sometimes off in
    /// the last digits of a long number, where `Double`'s parse, used here, rounds correctly.
    private static func same(_ left: JSONValue?, _ right: JSONValue?) -> Bool {
        switch (left, right) {
        case (nil, nil): return true
        case (.number(let a), .number(let b)): return a == b || abs(a - b) <= 1e-14 * max(abs(a), abs(b))
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.object(let a), .object(let b)):
            let (a, b) = (a.sortedByKey, b.sortedByKey)
            return a.count == b.count && zip(a, b).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && same($0.value, $1.value) }
        default: return left == right
        }
    }

    /// What `JSONSerialization` produced, as a `JSONValue`.
    private static func value(fromFoundation value: Any) -> JSONValue {
        switch value {
        case let string as String: .string(string)
        case let object as [String: Any]:
            .object(JSONObject(members: object.map { .init(key: $0.key, value: Self.value(fromFoundation: $0.value)) }))
        case let number as NSNumber:
            String(cString: number.objCType) == "c" ? .bool(number.boolValue) : .number(number.doubleValue)
        case let array as [Any]: .array(array.map(Self.value(fromFoundation:)))
        default: .null
        }
    }

    /// Bytes that break JSON in interesting ways when put anywhere.
    private static let awkwardBytes: [UInt8] = Array("{}[]\",:\\0-+.eEtfnu \n/x1".utf8) + [0x01, 0x7F, 0xC3, 0xFF, 0xED]

    /// A JSON text of an object or an array, with awkward strings, numbers and whitespace.
    private static func generateDocument(using random: inout SplitMix64) -> String {
        Bool.random(using: &random) ? generateObject(depth: 0, using: &random) : generateArray(depth: 0, using: &random)
    }

    private static func generateValue(depth: Int, using random: inout SplitMix64) -> String {
        let choice = Int.random(in: 0..<(depth < 4 ? 8 : 6), using: &random)
        switch choice {
        case 0: return "null"
        case 1: return Bool.random(using: &random) ? "true" : "false"
        case 2, 3: return generateNumber(using: &random)
        case 4, 5: return generateString(using: &random)
        case 6: return generateObject(depth: depth + 1, using: &random)
        default: return generateArray(depth: depth + 1, using: &random)
        }
    }

    private static func generateObject(depth: Int, using random: inout SplitMix64) -> String {
        let members = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            // Few distinct keys, so that some repeat.
            let key = Bool.random(using: &random) ? "\"k\(Int.random(in: 0..<3, using: &random))\"" : generateString(using: &random)
            return space(&random) + key + space(&random) + ":" + generateValue(depth: depth, using: &random) + space(&random)
        }
        return "{" + space(&random) + members.joined(separator: ",") + "}"
    }

    private static func generateArray(depth: Int, using random: inout SplitMix64) -> String {
        let elements = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            space(&random) + generateValue(depth: depth, using: &random) + space(&random)
        }
        return "[" + space(&random) + elements.joined(separator: ",") + "]"
    }

    private static func generateNumber(using random: inout SplitMix64) -> String {
        var text = Bool.random(using: &random) ? "-" : ""
        text += Int.random(in: 0..<4, using: &random) == 0 ? "0" : String(UInt64.random(in: 1...UInt64.max >> Int.random(in: 0..<64, using: &random), using: &random))
        if Bool.random(using: &random) { text += "." + String(Int.random(in: 0...99_999, using: &random)) }
        if Int.random(in: 0..<3, using: &random) == 0 {
            text += ["e", "E"].randomElement(using: &random)! + ["", "+", "-"].randomElement(using: &random)!
                + String(Int.random(in: 0...280, using: &random))  // within Double's range: see `edges` for beyond
        }
        return text
    }

    private static func generateString(using random: inout SplitMix64) -> String {
        let pieces = [
            "a", "Z", " ", "é", "🚀", "中", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9",
            "\\u4e2d", "\\ud83d\\ude80", "\\uD83D\\uDE80", "http://127.0.0.1/a.jpg?x=1&y=2", "\u{7F}",
        ]
        return "\"" + (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() + "\""
    }

    private static func space(_ random: inout SplitMix64) -> String {
        [" ", "", "", "\n", "\t", "\r\n "].randomElement(using: &random)!
    }
}

/// A small seeded generator, so that a failing text can be found again.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
