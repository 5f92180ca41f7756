import Foundation

/// Reads one JSON text (RFC 8259, UTF-8) into a `JSONValue`, in one pass over the bytes.
///
/// Why not Foundation's `JSONSerialization`: on a warm cache, where a payload costs a hard link
/// and little else, parsing with it took a fifth of each payload's CPU time (its parser builds a
/// tree of its own, bridges it to `Any`, and each `Any` is cast back). `JSONDecoder` was slower
/// still for values of no fixed shape, and a third-party JSON library would be one more
/// dependency for every user. A differential test (`JSONReaderTests`) holds this reader to `JSONSerialization`'s
/// answers, for valid texts and broken ones.
///
/// It accepts what `JSONSerialization` accepts of UTF-8 text whose top level is an object or an
/// array: RFC 8259's grammar, and, as `JSONSerialization` does, one trailing comma before a
/// closing bracket. No comments, no unescaped control characters, no unpaired surrogate escapes,
/// no number beyond `Double`'s range, valid UTF-8 only, at most 512 levels of nesting; a repeated
/// key keeps its last value. A leading UTF-8 byte order mark is skipped; other encodings are
/// not read.
struct JSONReader {
    /// Why a text is not JSON, and the byte offset where reading stopped.
    struct SyntaxError: Error, Equatable {
        var offset: Int
        var message: String
    }

    /// As deep as `JSONSerialization` goes.
    static let maximumDepth = 512

    /// Where reading is. The text itself, a `Span` (bounds-checked, borrowed for the one call),
    /// is passed to each step.
    private var position = 0
    private var depth = 0
    /// Reused by strings with escapes.
    private var scratch: [UInt8] = []

    /// The JSON text in `data`: an object or an array (as `JSONSerialization` reads it), or with
    /// `fragments` any value, with nothing but whitespace after it.
    static func read(_ data: Data, fragments: Bool = false) throws(SyntaxError) -> JSONValue {
        var reader = JSONReader()
        return try reader.readDocument(data.span, fragments: fragments)
    }

    private mutating func readDocument(_ bytes: Span<UInt8>, fragments: Bool) throws(SyntaxError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        skipWhitespace(bytes)
        guard fragments || peek(bytes) == UInt8(ascii: "{") || peek(bytes) == UInt8(ascii: "[") else {
            throw failure("the top level is not an object or an array")
        }
        let value = try readValue(bytes)
        skipWhitespace(bytes)
        guard position == bytes.count else { throw failure("unexpected bytes after the top-level value") }
        return value
    }

    private mutating func readValue(_ bytes: Span<UInt8>) throws(SyntaxError) -> JSONValue {
        skipWhitespace(bytes)
        guard let byte = peek(bytes) else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return .object(try readObject(bytes))
        case UInt8(ascii: "["): return .array(try readArray(bytes))
        case UInt8(ascii: "\""): return .string(try readString(bytes))
        case UInt8(ascii: "t"):
            try expectLiteral("true", bytes)
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false", bytes)
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null", bytes)
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber(bytes))
        default: throw failure("unexpected character")
        }
    }

    private mutating func readObject(_ bytes: Span<UInt8>) throws(SyntaxError) -> JSONObject {
        try enterContainer()
        skipWhitespace(bytes)
        if peek(bytes) == UInt8(ascii: "}") {
            leaveContainer()
            return [:]
        }
        // Room for the few keys of a payload's objects without growing.
        var object = JSONObject()
        object.reserveCapacity(6)
        while true {
            skipWhitespace(bytes)
            guard peek(bytes) == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try readString(bytes)
            skipWhitespace(bytes)
            guard peek(bytes) == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            position += 1
            object.append(key, try readValue(bytes))
            if try closes(UInt8(ascii: "}"), bytes, otherwise: "expected ',' or '}' in an object") { return object }
        }
    }

    private mutating func readArray(_ bytes: Span<UInt8>) throws(SyntaxError) -> [JSONValue] {
        try enterContainer()
        var array: [JSONValue] = []
        skipWhitespace(bytes)
        if peek(bytes) == UInt8(ascii: "]") {
            leaveContainer()
            return array
        }
        while true {
            array.append(try readValue(bytes))
            if try closes(UInt8(ascii: "]"), bytes, otherwise: "expected ',' or ']' in an array") { return array }
        }
    }

    /// After a member or an element: steps over a comma (`false`: another follows) or over the
    /// closing bracket, also after one trailing comma (`true`: the container ends).
    private mutating func closes(
        _ closing: UInt8, _ bytes: Span<UInt8>, otherwise message: String
    ) throws(SyntaxError) -> Bool {
        skipWhitespace(bytes)
        if peek(bytes) == UInt8(ascii: ",") {
            position += 1
            skipWhitespace(bytes)
            guard peek(bytes) == closing else { return false }
        } else if peek(bytes) != closing {
            throw failure(message)
        }
        leaveContainer()
        return true
    }

    /// Steps over an opening bracket, one level deeper.
    private mutating func enterContainer() throws(SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("more than \(Self.maximumDepth) levels of nesting") }
        position += 1
    }

    /// Steps over a closing bracket, one level up.
    private mutating func leaveContainer() {
        depth -= 1
        position += 1
    }

    /// A string, from its opening quote: the bytes between the quotes as they are when nothing
    /// is escaped (the common case), else decoded into `scratch`.
    private mutating func readString(_ bytes: Span<UInt8>) throws(SyntaxError) -> String {
        position += 1
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let string = try makeString(bytes.extracting(start..<position), offset: start)
                position += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { return try readEscapedString(bytes, from: start) }
            if byte < 0x20 { throw failure("an unescaped control character in a string") }
            position += 1
        }
        throw failure("a string without its closing quote")
    }

    private mutating func readEscapedString(_ bytes: Span<UInt8>, from start: Int) throws(SyntaxError) -> String {
        scratch.removeAll(keepingCapacity: true)
        for index in start..<position { scratch.append(bytes[index]) }
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try makeString(scratch.span, offset: start)
            case UInt8(ascii: "\\"):
                guard position + 1 < bytes.count else { throw failure("a string without its closing quote") }
                let escape = bytes[position + 1]
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    position += 2
                    try appendUnicodeEscape(bytes)
                    continue
                default: throw failure("an invalid escape in a string")
                }
                position += 2
            case 0..<0x20:
                throw failure("an unescaped control character in a string")
            default:
                scratch.append(byte)
                position += 1
            }
        }
        throw failure("a string without its closing quote")
    }

    /// After `\u`: four hex digits, and for a high surrogate the `\uXXXX` of its low one.
    private mutating func appendUnicodeEscape(_ bytes: Span<UInt8>) throws(SyntaxError) {
        let first = try readHexQuad(bytes)
        var scalarValue = UInt32(first)
        if (0xD800..<0xDC00).contains(first) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { throw failure("a high surrogate escape without its low surrogate") }
            position += 2
            let second = try readHexQuad(bytes)
            guard (0xDC00..<0xE000).contains(second) else {
                throw failure("a high surrogate escape without its low surrogate")
            }
            scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        }
        // Fails only for a low surrogate without its high one.
        guard let scalar = Unicode.Scalar(scalarValue) else { throw failure("a low surrogate escape without its high surrogate") }
        scratch.append(contentsOf: UTF8.encode(scalar)!)
    }

    private mutating func readHexQuad(_ bytes: Span<UInt8>) throws(SyntaxError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw failure("a \\u escape without four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape without four hex digits")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    private func makeString(_ utf8: Span<UInt8>, offset: Int) throws(SyntaxError) -> String {
        guard let validated = try? UTF8Span(validating: utf8) else {
            throw SyntaxError(offset: offset, message: "a string that is not valid UTF-8")
        }
        return String(copying: validated)
    }

    /// A number as RFC 8259 has it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func readNumber(_ bytes: Span<UInt8>) throws(SyntaxError) -> Double {
        let start = position
        if peek(bytes) == UInt8(ascii: "-") { position += 1 }
        if peek(bytes) == UInt8(ascii: "0") {
            position += 1
        } else {
            guard skipDigits(bytes) > 0 else { throw failure("a number without digits") }
        }
        if peek(bytes) == UInt8(ascii: ".") {
            position += 1
            guard skipDigits(bytes) > 0 else { throw failure("a number without digits after its decimal point") }
        }
        if peek(bytes) == UInt8(ascii: "e") || peek(bytes) == UInt8(ascii: "E") {
            position += 1
            if peek(bytes) == UInt8(ascii: "+") || peek(bytes) == UInt8(ascii: "-") { position += 1 }
            guard skipDigits(bytes) > 0 else { throw failure("a number without digits in its exponent") }
        }
        // ASCII by the grammar above, all of which `Double` parses (rounding correctly, where
        // `JSONSerialization` can be off in the last digits).
        let text = try makeString(bytes.extracting(start..<position), offset: start)
        guard let number = Double(text), number.isFinite else {
            position = start
            throw failure("a number out of range")
        }
        return number
    }

    private mutating func skipDigits(_ bytes: Span<UInt8>) -> Int {
        let start = position
        while let byte = peek(bytes), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position - start
    }

    private mutating func expectLiteral(_ literal: String, _ bytes: Span<UInt8>) throws(SyntaxError) {
        var index = 0
        for expected in literal.utf8 {
            guard position + index < bytes.count, bytes[position + index] == expected else {
                throw failure("unexpected character")
            }
            index += 1
        }
        position += index
    }

    private mutating func skipWhitespace(_ bytes: Span<UInt8>) {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
            default: return
            }
        }
    }

    private func peek(_ bytes: Span<UInt8>) -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private func failure(_ message: String) -> SyntaxError { SyntaxError(offset: position, message: message) }
}
