import NIOConcurrencyHelpers

/// A snapshot of the counters kept by a ``MockCDNServer``.
///
/// Requests to `/_stats` and `/_stats/reset` are never counted.
public struct MockCDNStats: Sendable, Codable, Equatable {
    /// All requests (excluding `/_stats` ones).
    public var requests: Int
    /// Requests per path WITHOUT query, e.g. `"/media/a.jpg"`.
    public var requestsPerPath: [String: Int]
    /// Requests per path WITH query, exactly as requested, e.g. `"/media/a.jpg?bytes=100"`.
    public var requestsPerURL: [String: Int]
    /// Requests carrying `If-None-Match` or `If-Modified-Since`.
    public var conditionalRequests: Int
    /// Of ``requests``, those that came as HTTP/2 streams (only a TLS server offers HTTP/2).
    public var http2Requests: Int
    /// `304 Not Modified` responses sent.
    public var notModifiedResponses: Int
    /// Response body bytes handed to sockets (framing of chunked encoding excluded).
    public var bytesSent: Int
    /// Connections accepted.
    public var connectionsAccepted: Int
    /// Connections open right now.
    public var currentConnections: Int
    /// Peak number of concurrently open connections.
    public var peakConnections: Int
    /// Responses whose full body was written (bodiless responses count when their head is written).
    public var responsesCompleted: Int
    /// Responses cut short because the client closed/reset the connection before the full body was sent
    /// (deliberate faults are counted in ``faultsInjected`` instead).
    public var responsesAborted: Int
    /// Deliberate faults performed: `truncate_after`, `reset_after` and `stall_after`.
    public var faultsInjected: Int

    /// Creates a snapshot; every counter defaults to zero.
    public init(
        requests: Int = 0,
        requestsPerPath: [String: Int] = [:],
        requestsPerURL: [String: Int] = [:],
        conditionalRequests: Int = 0,
        http2Requests: Int = 0,
        notModifiedResponses: Int = 0,
        bytesSent: Int = 0,
        connectionsAccepted: Int = 0,
        currentConnections: Int = 0,
        peakConnections: Int = 0,
        responsesCompleted: Int = 0,
        responsesAborted: Int = 0,
        faultsInjected: Int = 0
    ) {
        self.requests = requests
        self.requestsPerPath = requestsPerPath
        self.requestsPerURL = requestsPerURL
        self.conditionalRequests = conditionalRequests
        self.http2Requests = http2Requests
        self.notModifiedResponses = notModifiedResponses
        self.bytesSent = bytesSent
        self.connectionsAccepted = connectionsAccepted
        self.currentConnections = currentConnections
        self.peakConnections = peakConnections
        self.responsesCompleted = responsesCompleted
        self.responsesAborted = responsesAborted
        self.faultsInjected = faultsInjected
    }
}

/// Thread-safe owner of the live counters.
final class StatsRecorder: Sendable {
    private let state = NIOLockedValueBox(MockCDNStats())

    func snapshot() -> MockCDNStats {
        state.withLockedValue { $0 }
    }

    /// Zeroes every counter except `currentConnections` (and sets the peak to the current count).
    func reset() {
        state.withLockedValue { stats in
            let current = stats.currentConnections
            stats = MockCDNStats(currentConnections: current, peakConnections: current)
        }
    }

    func connectionOpened() {
        state.withLockedValue { stats in
            stats.connectionsAccepted += 1
            stats.currentConnections += 1
            if stats.currentConnections > stats.peakConnections {
                stats.peakConnections = stats.currentConnections
            }
        }
    }

    func connectionClosed() {
        state.withLockedValue { $0.currentConnections -= 1 }
    }

    /// Counts a request; returns how many requests for this exact URL came before it.
    @discardableResult
    func requestReceived(path: String, url: String, conditional: Bool, http2: Bool) -> Int {
        state.withLockedValue { stats in
            stats.requests += 1
            if http2 { stats.http2Requests += 1 }
            stats.requestsPerPath[path, default: 0] += 1
            stats.requestsPerURL[url, default: 0] += 1
            if conditional { stats.conditionalRequests += 1 }
            return stats.requestsPerURL[url, default: 1] - 1
        }
    }

    func notModifiedSent() {
        state.withLockedValue { $0.notModifiedResponses += 1 }
    }

    func addBytes(_ n: Int) {
        state.withLockedValue { $0.bytesSent += n }
    }

    func responseCompleted() {
        state.withLockedValue { $0.responsesCompleted += 1 }
    }

    /// A write that was counted in advance failed: undo `bytes` and, if it was the last one, the completion.
    func writeFailed(bytes: Int, wasCompleting: Bool) {
        state.withLockedValue { stats in
            stats.bytesSent -= bytes
            if wasCompleting { stats.responsesCompleted -= 1 }
        }
    }

    func responseAborted() {
        state.withLockedValue { $0.responsesAborted += 1 }
    }

    func faultInjected() {
        state.withLockedValue { $0.faultsInjected += 1 }
    }
}
