@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// Another process holding a URL's lock: waited for while it shows it is alive, however slow its
/// origin; not waited for once it stops (SIGSTOP, a frozen container), though the origin is fine.
@Suite("Cache lock holders: a stopped one is not waited for, a slow live one is", .timeLimit(.minutes(2)))
struct CacheHolderTests {
    /// Runs `fetch-attachment` on `fixture`'s cache for `path` (its deadline 60 s), and `body` once
    /// the origin has seen its request, which it sends holding the URL's lock. The process is
    /// continued and killed when `body` ends, however it ends; returns its status and `body`'s value.
    private func withHolder<Value: Sendable>(
        _ fixture: Fixture, _ path: String, requestSeen: @escaping @Sendable (MockCDNStats) -> Bool,
        _ body: @Sendable (RunningProgram) async throws -> Value
    ) async throws -> (status: Int32, value: Value) {
        let cache = try #require(fixture.cacheDirectory)
        let server = fixture.server
        return try await CommandRunner.withRunning(
            "fetch-attachment",
            ["-", "--cache-dir", cache, "--output-dir", fixture.directory + "/holder", "--deadline", "60", "--allow-private-networks"],
            stdin: fixture.braze(path)
        ) { program in
            // SIGKILL ends a stopped process too; SIGCONT first all the same, so that nothing is
            // left stopped whatever the kernel does with the kill. `withRunning` reaps it.
            defer {
                program.send(SIGCONT)
                program.send(SIGKILL)
            }
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { requestSeen(server.stats()) }
            try #require(requestSeen(server.stats()), "the holder's request never reached the origin")
            return try await body(program)
        }
    }

    /// A fresh waiter's verdicts on `marks`, each seen at its offset from one start.
    private func verdicts(_ marks: [(HolderMark, Duration)]) -> [Bool] {
        var liveness = HolderLiveness()
        let start = ContinuousClock.now
        return marks.map { liveness.isStopped(showing: $0.0, at: start + $0.1) }
    }

    @Test("A waiter judges a holder stopped only once its mark has stayed the same for the whole stillness, seen without gaps")
    func livenessJudgement() {
        let poll = Duration.milliseconds(50)
        let polls = Int(HolderLiveness.stillness / poll)
        // One mark throughout: stopped at the stillness, not a poll before.
        let still = verdicts((0...polls).map { (.shared, poll * $0) })
        #expect(still.dropLast().allSatisfy { !$0 } && still.last == true)
        // A mark that changes every heartbeat period: never stopped.
        let live = verdicts((0..<(4 * polls)).map { index in
            let beats = Int(poll * index / Heartbeat.period)
            return (beats == 0 ? .none : beats % 2 == 1 ? .shared : .exclusive, poll * index)
        })
        #expect(live.allSatisfy { !$0 })
        // A waiter held up longer than the gap starts again: the mark it sees may have changed and
        // changed back meanwhile.
        let late = verdicts([(.exclusive, .zero), (.exclusive, HolderLiveness.gap + .milliseconds(1)),
                             (.exclusive, HolderLiveness.stillness + .milliseconds(1))])
        #expect(late == [false, false, false])
        // A change restarts the count.
        let changed = verdicts((0..<polls).map { (.shared, poll * $0) } + (polls...(2 * polls)).map { (.exclusive, poll * $0) })
        #expect(changed.dropLast().allSatisfy { !$0 } && changed.last == true)
    }

    @Test("A store holding a key's lock beats: another open of the lock file sees a slot named for the key, changing type, and nothing once the lock goes")
    func heartbeatAcrossDescriptions() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let configuration = PushAttachmentFetcher.Configuration.Cache(directory: root + "/cache")
        let holder = try CacheStore(configuration: configuration)
        let waiter = try CacheStore(configuration: configuration)
        let key = CacheKey(hex: String(repeating: "ab", count: 32))
        #expect(waiter.holderMark(of: key) == HolderMark.none)
        let lock = try #require(try holder.lock(key).get())
        // A quick download names no slot; a longer one's key names the holder's slot from its
        // fourth beat on, whose type changes at each. The marks seen, each change once, until four
        // are (a test held up on a busy machine may miss a beat or two: only changes are counted).
        var seen: [HolderMark] = [.none]
        let end = ContinuousClock.now + Heartbeat.period * 40 * TestTiming.scale
        while seen.count < 4, ContinuousClock.now < end {
            if let mark = waiter.holderMark(of: key), mark != seen.last { seen.append(mark) }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(seen.count == 4 && seen.dropFirst().allSatisfy { $0 != HolderMark.none }, "\(seen)")
        // The holder's own view: its own locks are not reported.
        #expect(holder.holderMark(of: key) == HolderMark.none)
        lock.unlock()
        #expect(waiter.holderMark(of: key) == HolderMark.none)
        #expect(waiter.tryLock(key) != nil)
    }

    @Test("A process stopped while it holds a URL's download (SIGSTOP) costs a payload waiting for it about 2 s, not its deadline: it downloads on its own and keeps nothing")
    func stoppedHolder() async throws {
        try await Fixture.with(cached: true) { fixture in
            // The holder's request stalls after 50,000 bytes (its process holds the URL's lock
            // meanwhile); any later request for the URL is served at once.
            let path = "/media/stopped.jpg?bytes=200000&stall_after=50000&fault_once=1"
            let (status, outcome) = try await withHolder(fixture, path, requestSeen: { $0.bytesSent >= 50_000 }) { program in
                program.send(SIGSTOP)
                return await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(20) * TestTiming.scale)
            }
            #expect(status == SIGKILL)
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            let file = try #require(outcome.attachments.first?.path)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: file))) == SyntheticMedia.body(extension: "jpg", size: 200_000))
            #expect(fixture.server.stats().requests == 2)
            #expect(fixture.fetcher.cache?.stoppedHolders.load(ordering: .relaxed) == 1)
            // Not kept: the stopped process still holds the URL's lock.
            #expect(try FileManager.default.contentsOfDirectory(atPath: try #require(fixture.cacheDirectory) + "/entries").isEmpty)
        }
    }

    @Test("A live process whose origin takes 4 s to answer is waited for: one origin request, and the waiting payload is served from its entry")
    func slowLiveHolder() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/slow-holder.jpg?bytes=20000&delay_ms=4000"
            let (status, outcome) = try await withHolder(fixture, path, requestSeen: { $0.requests >= 1 }) { _ in
                await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(20) * TestTiming.scale)
            }
            #expect(status == SIGKILL || status == 0)
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
            #expect(fixture.fetcher.cache?.stoppedHolders.load(ordering: .relaxed) == 0)
            #expect(fixture.fetcher.statistics.cacheHits == 1, "\(fixture.fetcher.statistics)")
        }
    }
}
