import Foundation
import Synchronization

/// A progress bar on stderr, only when stderr is a terminal and standard output is not.
final class Progress: Sendable {
    /// How many payloads there are, when known (not while reading a pipe).
    let total: Int?
    private let done = Atomic<Int>(0)
    private let enabled = Progress.isEnabled

    /// Whether a bar is drawn: only when stderr is a terminal.
    /// Not when standard output is the same terminal: outcome lines would land inside the bar
    /// (and show the progress themselves).
    static var isEnabled: Bool { CommandSyscalls.isTerminal(.standardError) && !CommandSyscalls.isTerminal(.standardOutput) }

    init(total: Int?) { self.total = total }

    func advance() { done.add(1, ordering: .relaxed) }

    /// Redraws the bar ten times a second until cancelled; `nil` when stderr is not a terminal.
    func startReporting() -> Task<Void, Never>? {
        guard enabled, total != 0 else { return nil }
        return Task {
            while !Task.isCancelled {
                draw()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func finish() {
        guard enabled, total != 0 else { return }
        draw()
        StandardStreams.error.write("\n")
    }

    private func draw() {
        let count = done.load(ordering: .relaxed)
        guard let total else {
            StandardStreams.error.write("\r\(count) done")
            return
        }
        let width = 30
        let filled = total == 0 ? width : count * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        StandardStreams.error.write("\r[\(bar)] \(count)/\(total)")
    }
}
