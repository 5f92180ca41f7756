extension Outcome {
    /// The outcome as one line of JSON: the object `JSONEncoder` makes of it (keys sorted, slashes
    /// unescaped), with an `"index"` field when given, written directly. The batch command prints
    /// one per payload, and `JSONEncoder` cost a sixth of a cache hit.
    package func jsonLine(index: Int? = nil) -> String {
        var line: [UInt8] = []
        appendJSONLine(index: index, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of `jsonLine(index:)` to `buffer`, without a line break: for
    /// writers that print many outcomes and need no `String` of each.
    package func appendJSONLine(index: Int? = nil, to buffer: inout [UInt8]) {
        // One allocation for the whole line: the fixed part is under 200 bytes.
        buffer.reserveCapacity(
            buffer.count + 200 + (detail?.utf8.count ?? 0)
                + attachments.reduce(0) { $0 + 64 + $1.url.utf8.count + $1.path.utf8.count }
                + warnings.reduce(0) { $0 + 4 + $1.utf8.count })
        buffer.append(contentsOf: #"{"attachments":["#.utf8)
        for (position, attachment) in attachments.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            attachment.appendJSON(to: &buffer)
        }
        buffer.append(contentsOf: #"],"detail":"#.utf8)
        JSONText.appendOptionalString(detail, to: &buffer)
        buffer.append(contentsOf: #","elapsed_ms":"#.utf8)
        buffer.append(contentsOf: elapsedMilliseconds.description.utf8)
        buffer.append(contentsOf: #","failures":["#.utf8)
        for (position, failure) in failures.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: #"{"detail":"#.utf8)
            JSONText.appendString(failure.detail, to: &buffer)
            if let file = failure.file {
                buffer.append(contentsOf: #","file":"#.utf8)
                file.appendJSON(to: &buffer)
            }
            if let payloadURL = failure.payloadURL {
                buffer.append(contentsOf: #","payload_url":"#.utf8)
                JSONText.appendString(payloadURL, to: &buffer)
            }
            buffer.append(contentsOf: #","reason":"#.utf8)
            JSONText.appendString(failure.reason.code, to: &buffer)
            buffer.append(contentsOf: #","url":"#.utf8)
            JSONText.appendString(failure.url, to: &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
        buffer.append(UInt8(ascii: "]"))
        if let index {
            buffer.append(contentsOf: #","index":"#.utf8)
            buffer.append(contentsOf: String(index).utf8)
        }
        buffer.append(contentsOf: #","notification":"#.utf8)
        if let notification {
            notification.appendJSON(to: &buffer)
        } else {
            buffer.append(contentsOf: "null".utf8)
        }
        if !otherPlatformNotifications.isEmpty {
            buffer.append(contentsOf: #","other_platform_notifications":["#.utf8)
            for (position, other) in otherPlatformNotifications.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                other.appendJSON(to: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        }
        buffer.append(contentsOf: #","reason":"#.utf8)
        JSONText.appendOptionalString(reason?.code, to: &buffer)
        buffer.append(contentsOf: #","status":"#.utf8)
        JSONText.appendString(status.rawValue, to: &buffer)
        buffer.append(contentsOf: #","vendor":"#.utf8)
        JSONText.appendOptionalString(vendor?.name, to: &buffer)
        if !verdicts.isEmpty {
            buffer.append(contentsOf: #","verdicts":["#.utf8)
            for (position, verdict) in verdicts.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                buffer.append(contentsOf: #"{"detail":"#.utf8)
                JSONText.appendOptionalString(verdict.detail, to: &buffer)
                buffer.append(contentsOf: #","path":"#.utf8)
                JSONText.appendOptionalString(verdict.path, to: &buffer)
                buffer.append(contentsOf: #","platform":"#.utf8)
                JSONText.appendString(verdict.platform.rawValue, to: &buffer)
                buffer.append(contentsOf: #","reason":"#.utf8)
                JSONText.appendOptionalString(verdict.reason?.code, to: &buffer)
                buffer.append(contentsOf: #","status":"#.utf8)
                JSONText.appendString(verdict.status.rawValue, to: &buffer)
                buffer.append(UInt8(ascii: "}"))
            }
            buffer.append(UInt8(ascii: "]"))
        }
        buffer.append(contentsOf: #","warnings":["#.utf8)
        for (position, warning) in warnings.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            JSONText.appendString(warning, to: &buffer)
        }
        buffer.append(contentsOf: "]}".utf8)
    }
}

/// JSON string literals (RFC 8259): quotes, backslashes and control characters escaped, all else
/// as UTF-8.
enum JSONText {
    /// Appends `value` as a JSON string.
    static func appendString(_ value: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        let utf8 = value.utf8.span
        // Paths, URLs and MIME types rarely hold anything to escape: append them whole.
        guard utf8.indices.contains(where: { needsEscape(utf8[$0]) }) else {
            buffer.append(contentsOf: value.utf8)
            buffer.append(UInt8(ascii: "\""))
            return
        }
        for position in utf8.indices {
            let byte = utf8[position]
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): buffer.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): buffer.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): buffer.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): buffer.append(contentsOf: #"\t"#.utf8)
            case ..<0x20:
                buffer.append(contentsOf: #"\u00"#.utf8)
                Hex.append(byte, to: &buffer)
            default: buffer.append(byte)  // multi-byte UTF-8 passes through whole
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends `value` as a JSON string, or `null`.
    static func appendOptionalString(_ value: String?, to buffer: inout [UInt8]) {
        if let value { appendString(value, to: &buffer) } else { buffer.append(contentsOf: "null".utf8) }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}

extension Attachment {
    /// The object `JSONEncoder` makes of it, keys sorted, appended to `buffer`.
    func appendJSON(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: #"{"bytes":"#.utf8)
        buffer.append(contentsOf: String(bytes).utf8)
        buffer.append(contentsOf: #","mime":"#.utf8)
        JSONText.appendString(mime, to: &buffer)
        buffer.append(contentsOf: #","path":"#.utf8)
        JSONText.appendString(path, to: &buffer)
        if let payloadURL {
            buffer.append(contentsOf: #","payload_url":"#.utf8)
            JSONText.appendString(payloadURL, to: &buffer)
        }
        buffer.append(contentsOf: #","url":"#.utf8)
        JSONText.appendString(url, to: &buffer)
        buffer.append(UInt8(ascii: "}"))
    }
}
