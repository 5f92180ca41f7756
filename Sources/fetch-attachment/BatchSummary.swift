import AttachmentFetcher
import Foundation
import Histogram

/// One payload's result, as the summary counts it.
struct BatchRecord: Sendable {
    /// The payload's line, from 0 (blank lines count): JSON's `index`; people are shown it from 1.
    var index: Int
    /// Whether the payload was a line of pretty-printed JSON (`{`, `[`, `}`…): a batch wants one
    /// payload per line.
    var looksPrettyPrinted: Bool
    var attached: Bool
    var reason: FallbackReason?
    var milliseconds: Double
    /// Whether the outcome is a `network` failure whose detail the address policy hid.
    var hidesNetworkDetail: Bool
    /// Whether the payload ran out of time while, or after, waiting in the engine's queue for a
    /// connection to its host: time a phone, fetching alone, would not have lost.
    var waitedForConnection: Bool
    /// Whether what it waited for was one of the transfers of all hosts together (see
    /// `TransferStateMachine.QueueLimit`), not a connection to its own host.
    var waitedForAnyHost: Bool
    /// A preflight's verdicts, a bit per platform (`Platform.allCases` order): which platforms
    /// judged the payload, and which of them show a file. Two bytes, not an array: a batch keeps
    /// a record per payload, millions of them.
    var judgedBy: UInt8
    var shownBy: UInt8

    /// `platform`'s bit in `judgedBy` and `shownBy`.
    static func bit(for platform: Platform) -> UInt8 {
        UInt8(1) << Platform.allCases.firstIndex(of: platform)!
    }

    init(_ outcome: Outcome, at index: Int) {
        self.index = index
        attached = outcome.status == .attached
        reason = outcome.reason
        milliseconds = outcome.elapsedMilliseconds
        hidesNetworkDetail = BatchSummary.hidesNetworkDetail(outcome)
        judgedBy = 0
        shownBy = 0
        for verdict in outcome.verdicts {
            let bit = Self.bit(for: verdict.platform)
            judgedBy |= bit
            if verdict.status == .attached { shownBy |= bit }
        }
        let details = ([outcome.detail] + outcome.failures.map(\.detail)).compactMap { $0 }
        waitedForConnection = details.contains { $0.contains("waiting for a connection") }
        waitedForAnyHost = details.contains { $0.contains("waiting for a connection") && $0.contains("all hosts together") }
        looksPrettyPrinted =
            outcome.reason == .invalidPayload
            && ["{", "[", "}", "]", "},", "],"].contains(
                String(decoding: outcome.payload, as: UTF8.self).trimmingCharacters(in: .whitespaces))
    }
}

/// The closing summary of a batch.
struct BatchSummary {
    var records: [BatchRecord]
    var statistics: PushAttachmentFetcher.Statistics
    var wall: Duration
    /// The platforms a preflight judges (`--platform`): a payload that got no verdict (nothing
    /// was fetched: an internal push, no attachment, an invalid payload) counts as not shown on
    /// each, as the campaign report counts it.
    var platforms: [Platform] = []
    /// The signal that interrupted the batch (see `BatchInterruption`), if one did.
    var interruption: Int32? = nil
    /// The first line of the input that was not processed when it did (0-based); `nil` when
    /// every line had started.
    var firstLineNotProcessed: Int? = nil
    /// Whether reading the input failed before its end (said after the summary).
    var inputFailed = false
    /// The proxy every download went through (`--proxy`), if any: a refused address was its.
    var proxy: String? = nil
    /// The engine's limits, which the hint for payloads that waited in its queue names.
    var connectionPool = PushAttachmentFetcher.Configuration.ConnectionPool()

    /// Said once on standard error when an address was refused: the detail never gives the
    /// address (see `FallbackReason.addressRefused`), so it cannot say which rule refused.
    static let addressRefusedHint =
        "  hint: address-refused: by default only globally reachable addresses are fetched from; --allow-private-networks allows loopback, private and link-local ones too"

    /// The hint for a refused address when downloads go through `proxy`: every connection is
    /// the proxy's, so its address is what was refused, and allowing it alone is the remedy
    /// (not every private network).
    static func addressRefusedHint(proxy: String?) -> String {
        guard let proxy else { return addressRefusedHint }
        let shown = TerminalText.escaped(PushAttachmentFetcher.Configuration.redactedProxy(proxy))
        var host = URLComponents(string: proxy)?.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let remedy =
            if let network = IPNetwork(host) {
                "allow its address alone with --allow-network \(network)"
            } else {
                "allow its address alone with --allow-network ADDRESS/32 (ADDRESS/128 for IPv6), ADDRESS being what \(TerminalText.escaped(host)) resolves to"
            }
        return "  hint: address-refused: every download connects to the proxy \(shown), and the address policy refused its address (by default only globally reachable addresses are connected to): \(remedy)"
    }

    /// Said once when a line of the batch is only a brace or bracket: pretty-printed JSON.
    static let prettyPrintedHint =
        "  hint: invalid-payload: --batch reads one JSON payload per line (JSON Lines), and a line here is just a brace or bracket: the input looks pretty-printed; write each payload on one line \(LineWrapping.glued("(jq -c . FILE)"))"

    /// Said once when the cache's lock file cannot be used: each process then downloads alone;
    /// and when its directories are not writable: its entries are served, nothing is added.
    static func writeCacheNotes(for fetcher: PushAttachmentFetcher) {
        if let lock = fetcher.cacheLockProblem {
            StandardStreams.error.writeWrapped("  note: \(TerminalText.escaped(lock)): downloads are not shared with other processes using this cache")
        }
        if let store = fetcher.cacheStoreProblem {
            StandardStreams.error.writeWrapped("  note: \(TerminalText.escaped(store)): this cache's entries are served, and no download is added to them")
        }
    }

    /// Said once, after the payloads, when the cache could not take a body (a full disk, a
    /// cache directory removed, no extended attributes): those bodies were downloaded again into
    /// the output directory (each payload's outcome says whether that worked).
    static func writeCacheWriteNote(for fetcher: PushAttachmentFetcher) {
        let evicted = fetcher.statistics.evictedForRoom
        if evicted > 0 {
            StandardStreams.error.writeWrapped(
                "  note: the cache's file system ran out of room: \(evicted) least recently used \(evicted == 1 ? "entry" : "entries") that no output directory links went, whatever the budget, to make room")
        }
        if let problem = fetcher.cacheWriteProblem {
            StandardStreams.error.writeWrapped(
                "  note: \(TerminalText.escaped(problem)): the cache could not take every body; those were downloaded again into the output directory, as without the cache, and not kept")
        }
    }

    /// Said once on standard error when a network failure's detail was hidden by the address
    /// policy (see `FallbackReason.network`).
    static let hiddenNetworkDetailHint =
        "  hint: network: while the address policy is in force, a network failure says only '\(FallbackReason.uniformNetworkDetail)', so that it does not describe the port; to see libcurl's reason for a payload you trust, run it again with --allow-private-networks"

    /// For `count` payloads that ran out of time partly in the engine's queue for a connection
    /// to their host.
    static func queueHint(_ count: Int) -> String {
        "  hint: deadline: \(count) payload\(count == 1 ? "" : "s") ran out of time partly waiting for a connection to their host, which a phone fetching alone would not; that is this batch's queue, not the origin: --max-connections-per-host raises the limit (default 48), a lower --concurrency starts fewer payloads at once"
    }

    /// For `count` payloads that ran out of time partly waiting for one of the `transfersInAll`
    /// the engine runs at once, all hosts together: as many as the open-file limit allows
    /// (`FileDescriptorBudget.concurrency`), or at most `FileDescriptorBudget.maximumConcurrency`.
    static func transferLimitHint(_ count: Int, transfersInAll: Int) -> String {
        let limit =
            if transfersInAll >= FileDescriptorBudget.maximumConcurrency {
                "the most it runs"
            } else {
                "as its open-file limit allows (ulimit -n \(FileDescriptorBudget.softLimit): (limit − \(FileDescriptorBudget.reserve)) / \(FileDescriptorBudget.descriptorsPerTransfer)); a higher ulimit -n raises it"
            }
        return "  hint: deadline: \(count) payload\(count == 1 ? "" : "s") ran out of time partly waiting for a connection, which a phone fetching alone would not; that is this batch's queue, not the origin: this process runs at most \(transfersInAll) transfer\(transfersInAll == 1 ? "" : "s") at once, all hosts together, \(limit); a lower --concurrency starts fewer payloads at once"
    }

    /// Whether `outcome` failed on the network with the detail the address policy leaves.
    static func hidesNetworkDetail(_ outcome: Outcome) -> Bool {
        outcome.reason == .network && outcome.detail == FallbackReason.uniformNetworkDetail
    }

    /// A signal as the summary and the report name it.
    static func signalName(_ signal: Int32) -> String {
        signal == SIGINT ? "SIGINT (Ctrl-C)" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }

    /// The first line an interrupted batch did not process: every line before it was (lines are
    /// started in order, and those started all end).
    static func firstLineNotProcessed(_ records: [BatchRecord]) -> Int { (records.last?.index ?? -1) + 1 }

    var text: String {
        let attached = records.filter(\.attached).count
        var byReason: [String: Int] = [:]
        for record in records { if let reason = record.reason { byReason[reason.code, default: 0] += 1 } }
        let seconds = wall.timeInterval
        let rate = seconds > 0 ? Double(records.count) / seconds : 0
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        for record in records { _ = latency.record(UInt64(max(1, min(3_600_000_000, (record.milliseconds * 1_000).rounded())))) }
        // The histogram's values are its buckets' upper edges, up to 0.1 % above what was
        // recorded: a payload ended at its 30 s deadline would read 30,031 ms. No percentile is
        // shown above the largest value recorded, printed as it was.
        let largest = records.lazy.map(\.milliseconds).max() ?? 0
        func percentile(_ p: Double) -> String {
            guard !records.isEmpty else { return "-" }
            return String(format: "%.1f", min(largest, Double(latency.valueAtPercentile(p * 100)) / 1_000))
        }
        let glued = LineWrapping.glued
        var lines = [
            "batch: \(records.count) payload\(records.count == 1 ? "" : "s")"
                + " in \(glued(String(format: "%.2f s", seconds)))"
                + String(format: " (%.0f/s): %d attached, %d original", rate, attached, records.count - attached)
        ]
        if records.isEmpty, interruption == nil, !inputFailed { lines.append("  the input holds no payload (no line but blank ones): exit status 1") }
        // Each judged platform's own count says what its devices would show of every payload.
        let unjudged = records.lazy.filter { $0.judgedBy == 0 }.count
        let byPlatform = Platform.allCases.compactMap { platform -> String? in
            let bit = BatchRecord.bit(for: platform)
            let judged = records.lazy.filter { $0.judgedBy & bit != 0 }.count + (platforms.contains(platform) ? unjudged : 0)
            guard judged > 0 else { return nil }
            let shown = records.lazy.filter { $0.shownBy & bit != 0 }.count
            return "\(platform.rawValue) \(shown) attached, \(judged - shown) original"
        }
        if !byPlatform.isEmpty { lines.append("  by platform: " + byPlatform.joined(separator: "; ")) }
        if !byReason.isEmpty {
            lines.append("  original by reason: " + byReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if byReason[FallbackReason.addressRefused.code] != nil { lines.append(Self.addressRefusedHint(proxy: proxy)) }
        if records.contains(where: \.hidesNetworkDetail) { lines.append(Self.hiddenNetworkDetailHint) }
        let waitedForAll = records.filter(\.waitedForAnyHost).count
        let waitedForHost = records.filter(\.waitedForConnection).count - waitedForAll
        if waitedForHost > 0 { lines.append(Self.queueHint(waitedForHost)) }
        if waitedForAll > 0 { lines.append(Self.transferLimitHint(waitedForAll, transfersInAll: connectionPool.maximumConcurrentTransfers)) }
        if records.contains(where: \.looksPrettyPrinted) { lines.append(Self.prettyPrintedHint) }
        if let interruption {
            lines.append(
                "  interrupted by \(Self.signalName(interruption)): no payload was started after it; those in flight ended by their deadlines; "
                    + (firstLineNotProcessed.map { "the input from line \($0 + 1) on was not processed" } ?? "every line of the input had started"))
        }
        lines.append(
            "  \(glued("origin requests \(statistics.originRequests)")) \(glued("(conditional \(statistics.conditionalRequests),")) \(glued("not modified \(statistics.notModified)")))," +
                " \(glued("cache hits \(statistics.cacheHits)")), \(glued("coalesced \(statistics.coalesced)")), \(glued("bytes downloaded \(statistics.bytesDownloaded)"))")
        lines.append(
            "  latency ms: \(glued("p50 \(percentile(0.5))"))  \(glued("p90 \(percentile(0.9))"))  \(glued("p99 \(percentile(0.99))"))  \(glued("max \(records.isEmpty ? "-" : String(format: "%.1f", largest))"))")
        return lines.joined(separator: "\n")
    }
}
