import Foundation

/// One check of a scenario: behaviour checks decide load-test's exit status, targets never do.
struct Check: Codable, Sendable {
    /// What is checked.
    var name: String
    /// "behaviour" (correctness; failing makes the exit status 1), "target" (speed or size;
    /// reported only) or "finding" (what a baseline did wrong; reported only).
    var kind: String
    /// The measured value, as text.
    var value: String
    /// The target, as text.
    var target: String
    /// Whether the value meets the target.
    var passed: Bool

    /// Behaviour checks every contender gets: it ran to completion and delivered what was expected.
    /// With `lossesAreFindings` (a baseline's own failed transfers), missing results are reported
    /// as kind "finding", which never decides the exit status.
    static func completion(_ runs: [RunMetrics], label: String, lossesAreFindings: Bool = false) -> [Check] {
        let timedOut = runs.filter { $0.child.timedOut }.count
        var checks = [
            Check(
                name: "\(label): every run finished before its timeout", kind: "behaviour",
                value: "\(runs.count - timedOut) of \(runs.count)", target: "all", passed: timedOut == 0),
            Check(
                name: "\(label): payloads without a result", kind: lossesAreFindings ? "finding" : "behaviour",
                value: runs.map { String($0.missing) }.joined(separator: ", "), target: "0",
                passed: runs.allSatisfy { $0.missing == 0 }),
        ]
        if runs.contains(where: { $0.mismatches != nil }) {
            checks.append(Check(
                name: "\(label): outcomes other than expected", kind: "behaviour",
                value: runs.map { String($0.mismatches ?? 0) }.joined(separator: ", "), target: "0",
                passed: runs.allSatisfy { ($0.mismatches ?? 0) == 0 }))
        }
        return checks
    }
}

/// One contender's runs in one scenario.
struct ContenderReport: Codable, Sendable {
    /// "fetch-attachment", "fetch-attachment --no-cache", "curl", "urlsession", "hardlink-floor",
    /// "fetch-attachment (warm-up)".
    var name: String
    /// The first run's command line.
    var command: String
    /// Every run.
    var runs: [RunMetrics]
    /// Medians and ranges.
    var summary: ContenderSummary
}

/// Everything one scenario produced.
struct ScenarioReport: Codable, Sendable {
    /// The scenario's name.
    var name: ScenarioName
    /// One line about it.
    var summary: String
    /// Payloads per run.
    var payloads: Int
    /// The contenders, fetch-attachment first.
    var contenders: [ContenderReport]
    /// Behaviour checks and targets.
    var checks: [Check]
    /// Extra lines for the report (ratios and the like).
    var notes: [String]
}

/// `a / b` of the medians, when both exist and b is not zero.
func ratio(_ a: Spread?, _ b: Spread?) -> Double? {
    guard let a, let b, b.median > 0 else { return nil }
    return a.median / b.median
}

/// "1.23×", or "n/a".
func times(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "n/a" }
    return value >= 10 ? String(format: "%.1f×", value) : String(format: "%.2f×", value)
}

/// "attached 90, deadline 1, …" with attached/ok first.
func formatOutcomes(_ outcomes: [String: Int]) -> String {
    let first = ["attached", "ok"]
    return outcomes.sorted { a, b in
        let ia = first.firstIndex(of: a.key) ?? 9, ib = first.firstIndex(of: b.key) ?? 9
        return ia != ib ? ia < ib : a.key < b.key
    }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
}
