import Synchronization

/// Counts of what an engine did, readable from any thread.
final class TransferCounters: Sendable {
    private let requests = Atomic<Int>(0)
    private let conditional = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)

    /// Requests sent to origins (each attempt that sent one, counted as it ends; redirects not
    /// counted).
    var originRequests: Int { requests.load(ordering: .relaxed) }
    /// Of those, conditional ones (revalidations).
    var conditionalRequests: Int { conditional.load(ordering: .relaxed) }
    /// Body bytes received, whether kept or not.
    var bytesReceived: Int { bytes.load(ordering: .relaxed) }

    func requestSent(conditional isConditional: Bool) {
        requests.add(1, ordering: .relaxed)
        if isConditional { conditional.add(1, ordering: .relaxed) }
    }

    func received(bytes count: Int) { bytes.add(count, ordering: .relaxed) }
}
