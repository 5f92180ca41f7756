import AttachmentFetcher
import Foundation

/// Prints outcomes as one JSON object each, or as a short human summary.
struct OutcomePrinter {
    /// JSON (one object per line) or text.
    var json: Bool

    /// Writes `outcome` to standard output, at once.
    func print(_ outcome: Outcome, index: Int? = nil) {
        var line: [UInt8] = []
        appendLine(outcome, index: index, to: &line)
        StandardStreams.output.write(line)
    }

    /// What `print` prints, line break included, appended to `buffer`.
    func appendLine(_ outcome: Outcome, index: Int? = nil, to buffer: inout [UInt8]) {
        if json {
            outcome.appendJSONLine(index: index, to: &buffer)
        } else {
            buffer.append(contentsOf: Self.summary(outcome, label: index.map { "#\($0) " } ?? "").utf8)
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    /// A few lines for a person; what came from the payload or the origin is escaped (see
    /// `TerminalText`).
    static func summary(_ outcome: Outcome, label: String = "") -> String {
        let vendor = outcome.vendor.map { "\($0)" } ?? "unknown vendor"
        let timing = String(format: "%.1f ms", outcome.elapsedMilliseconds)
        var lines: [String] = []
        switch outcome.status {
        case .attached:
            for attachment in outcome.attachments {
                lines.append("\(label)attached \(attachment.mime), \(attachment.bytes) bytes: \(TerminalText.escaped(attachment.path))")
                lines.append("  from \(TerminalText.escaped(attachment.url)) (\(vendor), \(timing))")
            }
        case .original:
            let reason = outcome.reason.map { "\($0)" } ?? "unknown"
            lines.append("\(label)original content stands: \(reason): \(TerminalText.escaped(outcome.detail ?? "")) (\(vendor), \(timing))")
        }
        for warning in outcome.warnings { lines.append("  warning: \(TerminalText.escaped(warning))") }
        return lines.joined(separator: "\n")
    }
}
