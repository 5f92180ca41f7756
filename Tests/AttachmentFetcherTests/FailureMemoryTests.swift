@testable import AttachmentFetcher
import Testing

@Suite("Failure memory: recent failures by key, bounded")
struct FailureMemoryTests {
    private let start = ContinuousClock.now
    private let failure = TransferFailure(reason: .httpStatus, detail: "HTTP 503")

    private func key(_ number: Int) -> CacheKey {
        CacheKey(try! AttachmentURL.parse("https://cdn.example/\(number).jpg").get())
    }

    @Test("A failure is recalled until its instant, then forgotten")
    func expiry() {
        var memory = FailureMemory(capacity: 8)
        memory.remember(failure, for: key(1), until: start + .seconds(2), now: start)
        #expect(memory.recall(key(1), now: start + .seconds(1))?.detail == "HTTP 503")
        #expect(memory.recall(key(2), now: start + .seconds(1)) == nil)
        #expect(memory.recall(key(1), now: start + .seconds(2)) == nil)
        #expect(memory.count == 0)
    }

    @Test("At its capacity the expired failures go first, then the half that expires soonest")
    func bound() {
        var memory = FailureMemory(capacity: 8)
        // Eight failures, the first four expired by the ninth's arrival.
        for number in 0..<8 {
            memory.remember(failure, for: key(number), until: start + .seconds(number < 4 ? 1 : 10 + number), now: start)
        }
        #expect(memory.count == 8)
        memory.remember(failure, for: key(8), until: start + .seconds(30), now: start + .seconds(5))
        #expect(memory.count == 5)
        #expect((4...8).allSatisfy { memory.recall(key($0), now: start + .seconds(5)) != nil })
        // None expired now: the four expiring soonest go.
        for number in 9..<12 { memory.remember(failure, for: key(number), until: start + .seconds(40), now: start + .seconds(5)) }
        #expect(memory.count == 8)
        memory.remember(failure, for: key(12), until: start + .seconds(40), now: start + .seconds(5))
        #expect(memory.count == 5)
        #expect((4...7).allSatisfy { memory.recall(key($0), now: start + .seconds(5)) == nil })
        #expect((8...12).allSatisfy { memory.recall(key($0), now: start + .seconds(5)) != nil })
    }

    @Test("A thousand failing URLs against a capacity of 64 never hold more than 64")
    func manyURLs() {
        var memory = FailureMemory(capacity: 64)
        var most = 0
        for number in 0..<1_000 {
            memory.remember(failure, for: key(number), until: start + .seconds(60 + number), now: start)
            most = max(most, memory.count)
        }
        #expect(most == 64)
        #expect(memory.recall(key(999), now: start) != nil)
    }
}
