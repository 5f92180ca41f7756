import Foundation
import Logging

/// Text from payloads and origins made safe to print for a person: control characters (C0,
/// DEL, C1, the Unicode line and paragraph separators) and the backslash are escaped, so that
/// a line break or an escape sequence in a URL, a path or a detail can neither forge a line of
/// output or of a log nor drive the terminal.
enum TerminalText {
    /// `text` with `\n`, `\r`, `\t`, `\\` and `\u{…}` for every other control character and
    /// every bidirectional control (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            case _ where needsEscape(scalar): result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        // C0, backslash, DEL and C1; the line and paragraph separators; the bidirectional
        // marks (Arabic's too), embeddings, overrides and isolates, which would show a line
        // reordered; and the invisible zero-width space, word joiner and byte-order mark (not
        // the joiners emoji sequences need).
        case 0x00..<0x20, 0x5C, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060, 0x2066...0x2069,
            0xFEFF:
            true
        default: false
        }
    }
}

/// `--verbose`: one line per log record on standard error, as swift-log's `StreamLogHandler`
/// writes them (`timestamp level label : metadata [source] message`), with the message and the
/// metadata escaped (see `TerminalText`) and write failures kept (see `StandardStreams`).
struct EscapingLogHandler: LogHandler {
    var label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    /// A batch payload's records name its line (`BatchLineNumber`).
    var metadataProvider: Logger.MetadataProvider? = Logger.MetadataProvider {
        BatchLineNumber.current.map { ["line": "\($0)"] } ?? [:]
    }

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }
            .map { "\(TerminalText.escaped($0.key))=\(TerminalText.escaped("\($0.value)"))" }
            .joined(separator: " ")
        let line = "\(Self.timestamp()) \(event.level) \(label) :\(fields.isEmpty ? "" : " " + fields) [\(event.source)] \(TerminalText.escaped("\(event.message)"))\n"
        StandardStreams.error.write(line)
    }

    private static func timestamp() -> String { Date().formatted(.iso8601) }
}

/// The line of the batch payload being processed, 1-based, for its log records: a task-local
/// value, read by `EscapingLogHandler`'s metadata provider in whatever the library logs while
/// processing it.
enum BatchLineNumber {
    @TaskLocal static var current: Int?
}
