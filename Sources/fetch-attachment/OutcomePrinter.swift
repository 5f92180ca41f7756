import AttachmentFetcher
import Foundation

/// Prints outcomes as one JSON object each, or as a short human summary.
struct OutcomePrinter {
    /// JSON (one object per line) or text.
    var json: Bool

    func print(_ outcome: Outcome, index: Int? = nil) {
        Swift.print(text(outcome, index: index))
    }

    /// What `print` prints, without the final line break.
    func text(_ outcome: Outcome, index: Int? = nil) -> String {
        json ? outcome.jsonLine(index: index) : Self.summary(outcome, label: label(index))
    }

    /// The bytes of `text(_:index:)` followed by a line break, appended to `buffer`.
    func appendLine(_ outcome: Outcome, index: Int? = nil, to buffer: inout [UInt8]) {
        if json {
            outcome.appendJSONLine(index: index, to: &buffer)
        } else {
            buffer.append(contentsOf: Self.summary(outcome, label: label(index)).utf8)
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    private func label(_ index: Int?) -> String { index.map { "#\($0) " } ?? "" }

    /// A few lines for a person.
    static func summary(_ outcome: Outcome, label: String = "") -> String {
        let vendor = outcome.vendor.map { "\($0)" } ?? "unknown vendor"
        let timing = String(format: "%.1f ms", outcome.elapsedMilliseconds)
        var lines: [String] = []
        switch outcome.status {
        case .attached:
            for attachment in outcome.attachments {
                lines.append("\(label)attached \(attachment.mime), \(attachment.bytes) bytes: \(attachment.path)")
                lines.append("  from \(attachment.url) (\(vendor), \(timing))")
            }
        case .original:
            let reason = outcome.reason.map { "\($0)" } ?? "unknown"
            lines.append("\(label)original content stands: \(reason): \(outcome.detail ?? "") (\(vendor), \(timing))")
        }
        for warning in outcome.warnings { lines.append("  warning: \(warning)") }
        return lines.joined(separator: "\n")
    }
}
