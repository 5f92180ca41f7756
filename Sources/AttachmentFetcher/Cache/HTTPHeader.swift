import Foundation

/// One response header.
struct HTTPHeader: Sendable, Hashable {
    /// The lowercased name.
    var name: String
    /// The value, trimmed.
    var value: String

    /// The headers in a block of `Name: value` lines.
    static func parse(_ block: String) -> [HTTPHeader] {
        block.split(whereSeparator: \.isNewline).compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return HTTPHeader(name: line[..<colon].lowercased(), value: value)
        }
    }
}
