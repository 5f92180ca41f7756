import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Concurrency: one fetcher, many payloads, one content handler call each", .timeLimit(.minutes(2)))
struct ConcurrencyTests {
    @Test("200 payloads in flight at once through one fetcher each get their own file")
    func twoHundredAtOnce() async throws {
        try await Fixture.with { fixture in
            let count = 200
            let outcomes = await withTaskGroup { group in
                for index in 0..<count {
                    // A delay keeps every request in flight at the same time.
                    let payload = fixture.braze("/media/p\(index).jpg?bytes=\(20_000 + index)&delay_ms=300")
                    group.addTask { (index, await fixture.fetcher.process(payload)) }
                }
                return await group.reduce(into: [Int: Outcome]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes.count == count)
            for (index, outcome) in outcomes {
                #expect(outcome.status == .attached, "\(index): \(outcome.detail ?? "")")
                #expect(outcome.attachments.first?.bytes == 20_000 + index)
            }
            let paths = Set(outcomes.values.compactMap { $0.attachments.first?.path })
            #expect(paths.count == count)
            #expect(fixture.filesLeft().count == count)
            let stats = fixture.server.stats()
            #expect(stats.requests == count)
            // Per-host limit (48 by default) is respected, and connections are reused.
            #expect(stats.peakConnections <= 48)
            #expect(stats.connectionsAccepted < count)
        }
    }

    /// The engine hands the first bytes of all bodies that arrive in one turn of its loop to the
    /// classifier together, and the answers come back in batches: each must reach its own body.
    @Test("96 bodies of 12 types arriving together each get the type detected in their own bytes")
    func mixedTypesTogether() async throws {
        let accepted = [
            ("jpg", "image/jpeg"), ("png", "image/png"), ("gif", "image/gif"), ("mp3", "audio/mpeg"),
            ("m4a", "audio/x-m4a"), ("wav", "audio/x-wav"), ("aiff", "audio/x-aiff"), ("mp4", "video/mp4"),
            ("mpg", "video/mpeg"), ("avi", "video/x-msvideo"),
        ]
        let refused = [("html", "text/html"), ("webp", "image/webp")]
        let types = accepted + refused
        try await Fixture.with { fixture in
            let count = 96
            let outcomes = await withTaskGroup { group in
                for index in 0..<count {
                    // The same delay for all, so that the bodies arrive within a few milliseconds.
                    let served = types[index % types.count].0
                    let payload = fixture.braze("/media/t\(index).\(served)?bytes=\(9_000 + index)&delay_ms=200")
                    group.addTask { (index, await fixture.fetcher.process(payload)) }
                }
                return await group.reduce(into: [Int: Outcome]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes.count == count)
            for (index, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
                let (served, mime) = types[index % types.count]
                if index % types.count < accepted.count {
                    #expect(outcome.status == .attached, "\(index): \(outcome.detail ?? "")")
                    #expect(outcome.attachments.first?.mime == mime, "\(index)")
                    #expect(outcome.attachments.first?.bytes == 9_000 + index)
                    #expect(outcome.attachments.first?.path.hasSuffix(".\(served)") == true, "\(index)")
                } else {
                    #expect(outcome.reason == .unsupportedType, "\(index)")
                    #expect(outcome.detail?.contains(mime) == true, "\(index): \(outcome.detail ?? "")")
                }
            }
            #expect(fixture.filesLeft().count == count / types.count * accepted.count)
        }
    }

    @Test("2,000 payloads on 2,000 connections at once: the mock CDN holds them all, each payload gets its file")
    func twoThousandConnections() async throws {
        // Two sockets per connection live in this process (client and server): make room.
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 5_000 {
            limit.rlim_cur = min(limit.rlim_max, 5_000)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        let enough = limit.rlim_cur >= 5_000
        withKnownIssue("the hard limit on open files is below 5,000 here") { #expect(enough) } when: { !enough }
        guard enough else { return }

        let count = 2_000
        try await Fixture.with(timeout: .seconds(60) * TestTiming.scale, configure: { configuration in
            configuration.connectionPool = .init(maximumConnectionsPerHost: count, maximumConcurrentTransfers: count)
        }) { fixture in
            let outcomes = await withTaskGroup { group in
                for index in 0..<count {
                    // The delay holds every connection open at the same time. It must outlast
                    // opening all 2,000: once the first response is in, libcurl would reuse its
                    // connection for a transfer not yet started. On a loaded CI machine opening
                    // them took about 5 s (2.5 s was too short there: 1,999 connections).
                    let payload = fixture.braze("/media/c\(index).gif?bytes=2000&delay_ms=15000")
                    group.addTask { await fixture.fetcher.process(payload) }
                }
                return await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.status == .attached }.count == count)
            let stats = fixture.server.stats()
            #expect(stats.requests == count)
            #expect(stats.connectionsAccepted == count)
            #expect(stats.peakConnections == count)
        }
    }

    @Test(
        "Chunked bodies of any size arrive byte for byte, 20 at once through reused handles",
        arguments: [100_000, 1_048_576, 1_048_577, 3_000_000])
    func chunkedBodiesByteForByte(bytes: Int) async throws {
        try await Fixture.with { fixture in
            // Chunked, so nothing tells the engine the size in advance.
            let outcomes = await withTaskGroup { group in
                for index in 0..<20 {
                    let payload = fixture.braze("/media/m\(index).mp4?bytes=\(bytes)&chunked=1")
                    group.addTask { await fixture.fetcher.process(payload) }
                }
                return await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
            let expected = Data(SyntheticMedia.body(extension: "mp4", size: bytes))
            for outcome in outcomes {
                #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
                let path = try #require(outcome.attachments.first?.path)
                #expect(FileManager.default.contents(atPath: path) == expected)
            }
            #expect(fixture.filesLeft().count == 20)
        }
    }

    @Test("Two payloads for one URL in one fetcher get two separate files")
    func sameURLTwice() async throws {
        try await Fixture.with { fixture in
            async let first = fixture.fetch("/media/same.gif?bytes=4000")
            async let second = fixture.fetch("/media/same.gif?bytes=4000")
            let (a, b) = await (first, second)
            #expect(a.status == .attached && b.status == .attached)
            #expect(a.attachments.first?.path != b.attachments.first?.path)
        }
    }

    @Test("Transfers one after another reuse one libcurl handle, and each starts clean: no headers, error or bytes of the last")
    func reusedHandleStartsClean() async throws {
        try await Fixture.with(cached: true) { fixture in
            // One payload at a time: each transfer gets the handle the previous one left. Both URLs
            // share an ETag, so a conditional header left over on the handle would turn the second
            // URL's first (unconditional) request into a 304.
            let revalidated = "/media/r1.jpg?bytes=3000&etag=shared&cache_control=no-cache"
            let steps: [(path: String, bytes: Int?, mime: String?)] = [
                (revalidated, 3000, "image/jpeg"),
                (revalidated, 3000, "image/jpeg"),  // conditional request, answered 304
                ("/media/r2.jpg?bytes=4000&etag=shared", 4000, "image/jpeg"),
                ("/media/r3.jpg?bytes=50000&reset_after=1000", nil, nil),  // a reset mid-body
                ("/media/r4.png?bytes=6000", 6000, "image/png"),
                ("/media/r5.jpg?bytes=2000&redirects=2", 2000, "image/jpeg"),
                ("/media/r6.gif?bytes=7000", 7000, "image/gif"),
            ]
            for (index, step) in steps.enumerated() {
                let outcome = await fixture.fetcher.process(fixture.braze(step.path))
                if let bytes = step.bytes {
                    #expect(outcome.status == .attached, "step \(index): \(outcome.detail ?? "")")
                    #expect(outcome.attachments.first?.bytes == bytes, "step \(index)")
                    #expect(outcome.attachments.first?.mime == step.mime, "step \(index)")
                    #expect(outcome.warnings.allSatisfy { !$0.contains("not attached") }, "step \(index)")
                } else {
                    #expect(outcome.reason == .network, "step \(index): \(outcome.reason.map { "\($0)" } ?? "attached")")
                }
            }
            let stats = fixture.server.stats()
            #expect(stats.conditionalRequests == 1)
            #expect(stats.notModifiedResponses == 1)
        }
    }

    @Test("The adapter calls the content handler exactly once when the download finishes")
    func adapterCompletes() async throws {
        try await Fixture.with { fixture in
            let adapter = NotificationServiceAdapter(fetcher: fixture.fetcher)
            let calls = Locked<[Outcome]>([])
            await withCheckedContinuation { continuation in
                adapter.didReceive(fixture.braze("/media/x.png?bytes=3000")) { outcome in
                    calls.withLock { $0.append(outcome) }
                    continuation.resume()
                }
            }
            adapter.serviceExtensionTimeWillExpire()  // too late: must not call again
            try await Task.sleep(for: .milliseconds(50))
            let outcomes = calls.withLock { $0 }
            #expect(outcomes.count == 1)
            #expect(outcomes.first?.status == .attached)
            #expect(fixture.filesLeft().count == 1)
        }
    }

    @Test("serviceExtensionTimeWillExpire delivers the original at once, exactly once, and leaves no file")
    func adapterExpires() async throws {
        try await Fixture.with { fixture in
            let adapter = NotificationServiceAdapter(fetcher: fixture.fetcher)
            let calls = Locked<[Outcome]>([])
            let payload = fixture.braze("/media/x.jpg?bytes=400000&stall_after=1000")
            adapter.didReceive(payload) { outcome in calls.withLock { $0.append(outcome) } }
            try await Task.sleep(for: .milliseconds(200))
            adapter.serviceExtensionTimeWillExpire()
            #expect(calls.withLock { $0.count } == 1)
            // The cancelled download finishes in the background; it must not call the handler again.
            try await TestTiming.wait(atMost: .seconds(1)) { fixture.filesLeft().isEmpty }
            try await Task.sleep(for: .milliseconds(100))
            let outcomes = calls.withLock { $0 }
            #expect(outcomes.count == 1)
            #expect(outcomes.first?.reason == .deadline)
            #expect(outcomes.first?.payload == payload)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test(
        "A payload that ran out of time in the engine's queue names what held it: its host's connections, or the transfers of all hosts together",
        arguments: [(1, 10, "(at most 1 per host at once)"), (10, 1, "(at most 1 transfer at once, all hosts together)")])
    func queueLimitNamed(perHost: Int, inAll: Int, said: String) async throws {
        let unit = Duration.seconds(1) * TestTiming.scale
        try await Fixture.with(timeout: unit * 4, configure: {
            $0.connectionPool.maximumConnectionsPerHost = perHost
            $0.connectionPool.maximumConcurrentTransfers = inAll
        }) { fixture in
            // Each answer takes 2.5 units against a 4-unit deadline: the second waits for the
            // first, and then cannot finish in time. A unit of room either way for a loaded machine.
            let outcomes = await withTaskGroup(of: Outcome.self) { group in
                for index in 0..<2 {
                    group.addTask { await fixture.fetch("/media/held\(index).jpg?bytes=2000&delay_ms=\(Int(unit.timeInterval * 2_500))") }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let late = outcomes.filter { $0.reason == .deadline }
            #expect(late.count == 1 && late.allSatisfy { $0.detail?.contains("waiting for a connection \(said)") == true }, "\(outcomes.map { $0.detail ?? "attached" })")
        }
    }
}
