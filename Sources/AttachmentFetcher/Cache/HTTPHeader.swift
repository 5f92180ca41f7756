/// One response header.
struct HTTPHeader: Sendable, Hashable {
    /// The lowercased name.
    var name: String
    /// The value, trimmed.
    var value: String

    /// The headers in a block of `Name: value` lines, ended by line feeds (with or without a
    /// carriage return): a vertical tab, form feed or NEL, which Swift calls newlines too, stays
    /// inside its value. A name ends at the line's first colon.
    ///
    /// Trims what `CharacterSet.whitespaces` holds, in Swift: Foundation's trimming, through
    /// `NSString`, was half of this parse's cost, paid for every body the cache stores.
    static func parse(_ block: String) -> [HTTPHeader] {
        block.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).compactMap { line in
            // The first colon among the line's scalars: a Character holds a colon and the
            // combining marks after it, and would be no colon.
            let scalars = line.unicodeScalars
            guard let colon = scalars.firstIndex(of: ":") else { return nil }
            return HTTPHeader(name: String(scalars[..<colon]).lowercased(), value: trimmed(scalars[scalars.index(after: colon)...]))
        }
    }

    /// A `Content-Type` value's media type, its parameters dropped, trimmed and lower-cased (as
    /// `URLResponse.mimeType` gives it); empty for no value.
    static func mediaType(of contentType: String?) -> String {
        guard let contentType else { return "" }
        return contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }

    private static func trimmed(_ scalars: Substring.UnicodeScalarView) -> String {
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isBlank($0) }) ?? first
        return String(scalars[first...last])
    }

    /// The members of `CharacterSet.whitespaces` on Linux: tab, space, no-break space, Ogham
    /// space mark, U+2000 to U+200B, narrow no-break, medium mathematical and ideographic space.
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
