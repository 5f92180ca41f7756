@testable import AttachmentFetcher
import Foundation
import Testing

/// Committing and evicting never delay the timers that end each payload's wait.
///
/// A bound of 100 ms holds when this suite runs alone; beside suites that keep the machine's
/// cores busy it measures them instead, so `scripts/test.sh` runs it in a process of its own
/// (`swift test --filter CacheLoadDeadlineTests`), like the other deadline suites.
@Suite("Cache load: deadlines kept while the cache commits and evicts", .timeLimit(.minutes(2)))
struct CacheLoadDeadlineTests {
    @Test("1,200 payloads, a 2 s deadline, 20 % stalled origins, a budget evicting all along: every outcome by its deadline + 100 ms")
    func deadlinesUnderEviction() async throws {
        try await Fixture.with(cached: true, configure: { $0.cache?.maximumBytes = 1_000_000 }) { fixture in
            let deadline = Duration.seconds(2)
            let slack = Duration.milliseconds(100) * TestTiming.scale
            var payloads: [Data] = []
            for index in 0..<1_200 {
                let fault = index % 5 == 0 ? "&stall_after=1000&stall_ms=4000" : ""
                payloads.append(fixture.braze("/media/load\(index).jpg?bytes=50000\(fault)"))
            }
            let results = await withTaskGroup { group in
                for payload in payloads {
                    group.addTask {
                        let start = ContinuousClock.now
                        let outcome = await fixture.fetcher.process(payload, timeout: deadline)
                        return (outcome, ContinuousClock.now - start)
                    }
                }
                return await group.reduce(into: [(Outcome, Duration)]()) { $0.append($1) }
            }
            let late = results.filter { $0.1 > deadline + slack }
            #expect(late.isEmpty, "\(late.count) late, the latest after \(late.map(\.1).max() ?? .zero)")
            // Stalled origins hold their connections, so many payloads queue behind them and end in
            // `deadline`, on time; the others attach, while the cache evicts.
            #expect(results.contains { $0.0.status == .attached })
            #expect(results.allSatisfy { $0.0.status == .attached || $0.0.reason == .deadline })
            let cache = try await AttachmentCache(configuration: try #require(fixture.fetcher.configuration.cache))
            try await TestTiming.wait(atMost: .seconds(2)) { await cache.statistics().bytes <= 1_000_000 }
            #expect(await cache.statistics().bytes <= 1_000_000)
        }
    }
}
