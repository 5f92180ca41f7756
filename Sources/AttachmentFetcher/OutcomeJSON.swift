extension Outcome {
    /// The outcome as one line of JSON: the object `JSONEncoder` makes of it (keys sorted, slashes
    /// unescaped), with an `"index"` field when given, written directly. The batch command prints
    /// one per payload, and `JSONEncoder` cost a sixth of a cache hit.
    public func jsonLine(index: Int? = nil) -> String {
        var text = ""
        // One allocation for the whole line: the fixed part is under 200 bytes.
        text.reserveCapacity(
            200 + (detail?.utf8.count ?? 0) + attachments.reduce(0) { $0 + 64 + $1.url.utf8.count + $1.path.utf8.count }
                + warnings.reduce(0) { $0 + 4 + $1.utf8.count })
        text += #"{"attachments":["#
        for (position, attachment) in attachments.enumerated() {
            if position > 0 { text += "," }
            text += #"{"bytes":\#(attachment.bytes),"mime":"#
            JSONText.appendString(attachment.mime, to: &text)
            text += #","path":"#
            JSONText.appendString(attachment.path, to: &text)
            text += #","url":"#
            JSONText.appendString(attachment.url, to: &text)
            text += "}"
        }
        text += #"],"detail":"#
        JSONText.appendOptionalString(detail, to: &text)
        text += #","elapsed_ms":\#(elapsedMilliseconds)"#
        if let index { text += #","index":\#(index)"# }
        text += #","reason":"#
        JSONText.appendOptionalString(reason?.code, to: &text)
        text += #","status":"\#(status.rawValue)","vendor":"#
        JSONText.appendOptionalString(vendor?.name, to: &text)
        text += #","warnings":["#
        for (position, warning) in warnings.enumerated() {
            if position > 0 { text += "," }
            JSONText.appendString(warning, to: &text)
        }
        text += "]}"
        return text
    }
}

/// JSON string literals (RFC 8259): quotes, backslashes and control characters escaped, all else
/// as UTF-8.
enum JSONText {
    private static let hexDigits = Array("0123456789abcdef".unicodeScalars)

    /// Appends `value` as a JSON string.
    static func appendString(_ value: String, to text: inout String) {
        text.unicodeScalars.append("\"")
        // Paths, URLs and MIME types rarely hold anything to escape: append them whole.
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            text += value
            text.unicodeScalars.append("\"")
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += #"\""#
            case "\\": text += #"\\"#
            case "\n": text += #"\n"#
            case "\r": text += #"\r"#
            case "\t": text += #"\t"#
            case _ where scalar.value < 0x20:
                text += #"\u00"#
                text.unicodeScalars.append(hexDigits[Int(scalar.value >> 4)])
                text.unicodeScalars.append(hexDigits[Int(scalar.value & 0xF)])
            default: text.unicodeScalars.append(scalar)
            }
        }
        text.unicodeScalars.append("\"")
    }

    /// Appends `value` as a JSON string, or `null`.
    static func appendOptionalString(_ value: String?, to text: inout String) {
        if let value { appendString(value, to: &text) } else { text += "null" }
    }
}
