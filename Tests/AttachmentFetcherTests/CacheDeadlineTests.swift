@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// Deadlines through the cache under load: thousands of payloads, a cache committing entries (and,
/// with a small budget, evicting them) the whole time, and every outcome still within 100 ms of its
/// payload's deadline. Run with the other deadline tests, one at a time (scripts/test.sh): each
/// asserts a 100 ms bound, which its neighbours' work would blur.
@Suite(
    "Cache deadlines: with the cache every outcome comes within deadline + 100 ms, evicting or not",
    .serialized, .timeLimit(.minutes(3)))
struct CacheDeadlineTests {
    /// A payload of the batch and the outcome it must have (a result code: "attached" or a reason).
    struct Planned: Sendable {
        var payload: Data
        var expected: String
    }

    /// The faults a batch mixes in, in turn, each on a URL of its own, with the result each must have.
    /// A stall outlives the deadline (its body is far larger than what it sends), so it alone ends
    /// in `deadline`.
    static let faults: [(query: @Sendable (Int) -> String, expected: String)] = [
        ({ "/media/fault-stall-\($0).jpg?bytes=100000&stall_after=10000" }, "deadline"),
        ({ "/media/fault-reset-\($0).jpg?bytes=100000&reset_after=20000" }, "network"),
        ({ "/media/fault-truncate-\($0).jpg?bytes=100000&truncate_after=20000" }, "network"),
        ({ "/media/fault-404-\($0).jpg?status=404" }, "http-status"),
        ({ "/media/fault-500-\($0).jpg?status=500" }, "http-status"),
        ({ "/media/fault-html-\($0).html?bytes=3000&content_type=image/jpeg" }, "unsupported-type"),
        ({ "/media/fault-lie-\($0).jpg?bytes=50000&content_type=text/html" }, "attached"),
    ]

    /// `count` payloads; payload `i` asks for image `i mod urls` of `bytes` bytes, except every
    /// `100 / faultPercent`-th, which asks for the next fault.
    static func plan(
        _ fixture: Fixture, count: Int, urls: Int, bytes: Int, faultPercent: Int, name: String
    ) -> [Planned] {
        let faultsEvery = faultPercent > 0 ? max(1, 100 / faultPercent) : Int.max
        var faultNumber = 0
        return (0..<count).map { index in
            if index % faultsEvery == faultsEvery - 1 {
                let fault = faults[faultNumber % faults.count]
                faultNumber += 1
                return Planned(payload: fixture.braze(fault.query(index)), expected: fault.expected)
            }
            return Planned(payload: fixture.braze("/media/\(name)-\(index % urls).jpg?bytes=\(bytes)"), expected: "attached")
        }
    }

    /// Processes every payload with `deadline`, at most `inFlight` at once (as `fetch-attachment
    /// --batch` does), each starting as soon as one ends; the outcomes in input order.
    static func run(
        _ planned: [Planned], through fetcher: PushAttachmentFetcher, deadline: Duration, inFlight: Int
    ) async -> [Outcome] {
        await withTaskGroup(of: (Int, Outcome).self) { group in
            var next = 0
            func start() {
                guard next < planned.count else { return }
                let index = next
                let payload = planned[index].payload
                next += 1
                group.addTask { (index, await fetcher.process(payload, timeout: deadline)) }
            }
            for _ in 0..<min(inFlight, planned.count) { start() }
            var outcomes = [Outcome?](repeating: nil, count: planned.count)
            for await (index, outcome) in group {
                outcomes[index] = outcome
                start()
            }
            return outcomes.compactMap { $0 }
        }
    }

    /// Checks every outcome's time and result; the comments name how many were late, by how much
    /// at worst, and which results differ from the plan.
    static func check(_ outcomes: [Outcome], _ planned: [Planned], deadline: Duration) {
        #expect(outcomes.count == planned.count)
        let bound = deadline + .milliseconds(100) * TestTiming.scale
        var late: [String: Int] = [:]
        for (outcome, plan) in zip(outcomes, planned) where outcome.elapsed > bound {
            late["\(plan.expected) -> \(outcome.result)", default: 0] += 1
        }
        let worst = outcomes.map(\.elapsed).max() ?? .zero
        #expect(late.isEmpty, "\(late.values.reduce(0, +)) of \(outcomes.count) outcomes later than \(bound) (\(late)); slowest \(worst)")
        var unexpected: [String: Int] = [:]
        var examples: [String: String] = [:]
        for (outcome, plan) in zip(outcomes, planned) where outcome.result != plan.expected {
            unexpected["\(plan.expected) -> \(outcome.result)", default: 0] += 1
            examples["\(plan.expected) -> \(outcome.result)"] = outcome.detail ?? ""
        }
        // A deadline comes only where the plan has one (a stalled body), never from waiting on the cache.
        let deadlines = zip(outcomes, planned).filter { $0.0.reason == .deadline }
        #expect(unexpected.isEmpty, "results other than planned: \(unexpected); for example \(examples)")
        #expect(deadlines.allSatisfy { $0.1.expected == "deadline" })
    }

    @Test("12,000 payloads, 2 s deadline, 20 % faults, through a cache that keeps everything")
    func fieldSpike() async throws {
        let deadline = Duration.seconds(2) * TestTiming.scale
        // Enough connections that the stalled bodies (one payload in 35, each holding its connection
        // until its deadline) never take them all: a payload may wait for the cache, not for a socket.
        try await Fixture.with(cached: true, configure: { $0.connectionPool.maximumConnectionsPerHost = 160 }) { fixture in
            let planned = Self.plan(fixture, count: 12_000, urls: 3_000, bytes: 30_000, faultPercent: 20, name: "spike")
            let outcomes = await Self.run(planned, through: fixture.fetcher, deadline: deadline, inFlight: 128)
            Self.check(outcomes, planned, deadline: deadline)
            // The cache was in the way of most payloads: each image was downloaded at most once.
            let statistics = fixture.fetcher.statistics
            #expect(statistics.cacheHits + statistics.coalesced >= 9_600 - 3_000)
        }
    }

    @Test("8,000 payloads over 4,000 URLs through a cache a third their size: evicting all along")
    func evicting() async throws {
        let deadline = Duration.seconds(2) * TestTiming.scale
        let urls = 4_000
        let bytes = 4_000
        // Room for 1,333 entries: every eviction has over a thousand entries to choose from.
        let budget = urls * bytes / 3
        try await Fixture.with(cached: true, configure: { $0.cache?.maximumBytes = budget }) { fixture in
            // Each URL twice, a whole pass apart: by the second pass its entry has been evicted.
            let planned = Self.plan(fixture, count: 2 * urls, urls: urls, bytes: bytes, faultPercent: 0, name: "evict")
            let outcomes = await Self.run(planned, through: fixture.fetcher, deadline: deadline, inFlight: 128)
            Self.check(outcomes, planned, deadline: deadline)
            // Evicting indeed: far more origin requests than URLs, and the entries kept within the budget.
            #expect(fixture.server.stats().requests > urls * 3 / 2)
            let statistics = try await AttachmentCache(configuration: try #require(fixture.fetcher.configuration.cache)).statistics()
            #expect(statistics.entries < urls)
            #expect(statistics.bytes <= budget)
        }
    }

    @Test("600 payloads whose URLs another process holds: each ends at its deadline, and its wait for the lock ends with it")
    func heldElsewhere() async throws {
        let deadline = Duration.seconds(1) * TestTiming.scale
        try await Fixture.with(cached: true) { fixture in
            let planned = (0..<600).map { Planned(payload: fixture.braze("/media/held-\($0).jpg?bytes=1000"), expected: "deadline") }
            // A second store on the same directory holds every key's lock, as another process
            // downloading them would (the locks belong to an open file, not to the process).
            let other = try CacheStore(configuration: try #require(fixture.fetcher.configuration.cache))
            let scope = fixture.fetcher.configuration.cacheScope
            let held = try (0..<600).map { index in
                let url = try AttachmentURL.parse(fixture.server.url("/media/held-\(index).jpg?bytes=1000")).get()
                return try #require(try other.lock(CacheKey(url, scope: scope)).get())
            }
            defer { for lock in held { lock.unlock() } }
            let outcomes = await Self.run(planned, through: fixture.fetcher, deadline: deadline, inFlight: 600)
            Self.check(outcomes, planned, deadline: deadline)
            #expect(fixture.server.stats().requests == 0)
        }
    }
}
