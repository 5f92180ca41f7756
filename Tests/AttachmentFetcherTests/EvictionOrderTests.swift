@testable import AttachmentFetcher
import Foundation
import SystemPackage
import Testing

/// The cache's eviction order: least recently used first, kept incrementally as entries are
/// added, used and removed.
@Suite("Eviction order", .timeLimit(.minutes(2)))
struct EvictionOrderTests {
    private func key(_ number: Int) -> CacheKey {
        CacheKey(hex: String(repeating: "0", count: 48) + String(format: "%016x", number))
    }

    /// An index and its order, changed together as the store changes them.
    private struct Model {
        var state = CacheStore.StoreState()

        mutating func add(_ key: CacheKey, lastUsed: Int64, size: Int = 10) {
            state.setEntry(key, size: size, lastUsed: lastUsed)
        }

        /// Every entry, oldest first, taken out of the order.
        mutating func drain() -> [CacheKey] {
            var keys: [CacheKey] = []
            while let candidate = state.order.popOldest(in: state.index) { keys.append(candidate.key) }
            return keys
        }
    }

    @Test("Entries come out least recently used first, whatever order they were added in")
    func order() {
        var model = Model()
        let times: [Int64] = [50, 10, 40, 20, 30]
        for (number, time) in times.enumerated() { model.add(key(number), lastUsed: time) }
        #expect(model.drain() == [1, 3, 4, 2, 0].map(key))
        #expect(model.state.order.count == 0)
    }

    @Test("A use moves an entry behind the others without a new element; an earlier last use pushes one")
    func touch() {
        var model = Model()
        for number in 0..<4 { model.add(key(number), lastUsed: Int64(10 + number)) }
        model.state.setLastUsed(key(0), to: 100)
        model.state.setLastUsed(key(2), to: 50)
        #expect(model.state.order.count == 4)
        // Key 3's last use moves earlier than everyone's (a look-up found an older change time).
        model.state.setLastUsed(key(3), to: 1)
        #expect(model.state.order.count == 5)
        #expect(model.drain() == [3, 1, 2, 0].map(key))
        #expect(model.state.order.count == 0)
    }

    @Test("A removed entry never comes out; a re-added one comes out once, at its new place")
    func removal() {
        var model = Model()
        for number in 0..<3 { model.add(key(number), lastUsed: Int64(number)) }
        model.state.removeEntry(key(0))
        model.state.removeEntry(key(1))
        #expect(model.state.bytes == 10)
        model.add(key(1), lastUsed: 9)
        #expect(model.drain() == [2, 1].map(key))
        // Using a key the index does not hold records nothing.
        model.state.setLastUsed(key(7), to: 1)
        #expect(model.state.index[key(7)] == nil)
        #expect(model.drain().isEmpty)
    }

    @Test("A candidate taken and kept comes back only when recorded again")
    func keptCandidate() {
        var model = Model()
        for number in 0..<3 { model.add(key(number), lastUsed: Int64(number)) }
        let first = model.state.order.popOldest(in: model.state.index)
        #expect(first?.key == key(0))
        model.state.order.record(key(0), lastUsed: 0, in: model.state.index)
        #expect(model.drain() == [0, 1, 2].map(key))
    }

    @Test("Many uses of few entries keep the order bounded; the order stays right")
    func bounded() {
        var model = Model()
        model.state.order = EvictionOrder(slack: 16)
        let entries = 100
        for number in 0..<entries { model.add(key(number), lastUsed: Int64(number)) }
        var largest = 0
        var time = Int64(entries)
        for round in 0..<100 {
            for number in stride(from: round % 7, to: entries, by: 3) {
                time += 1
                model.state.setLastUsed(key(number), to: time)
                largest = max(largest, model.state.order.count)
            }
        }
        // Uses push nothing: one element per entry.
        #expect(largest == entries)
        let expected = model.state.index.sorted { $0.value.lastUsed < $1.value.lastUsed }.map(\.key)
        #expect(model.drain() == expected)
    }

    @Test("Last uses moved earlier again and again push elements, and the rebuild keeps the heap bounded")
    func rebuiltWhenLarge() {
        var model = Model()
        model.state.order = EvictionOrder(slack: 8)
        let entries = 20
        for number in 0..<entries { model.add(key(number), lastUsed: 1_000_000 + Int64(number)) }
        var largest = 0
        var time: Int64 = 1_000_000
        // Each move to an earlier time pushes an element of its own (a look-up found an older change time).
        for round in 0..<50 {
            for number in 0..<entries {
                time -= 1
                model.state.setLastUsed(key((number + round) % entries), to: time)
                largest = max(largest, model.state.order.count)
            }
        }
        #expect(largest <= 2 * entries + 8 + 1)
        let expected = model.state.index.sorted { $0.value.lastUsed < $1.value.lastUsed }.map(\.key)
        #expect(model.drain() == expected)
    }

    @Test("Start-up's scan, merged late, keeps what was stored meanwhile and brings back nothing removed meanwhile")
    func scanMergedLate() {
        var state = CacheStore.StoreState()
        // While the scan ran: key 0 was stored anew, key 1 removed, key 2 removed and stored again.
        state.setEntry(key(0), size: 7, lastUsed: 500)
        state.removeEntry(key(1))
        state.removeEntry(key(2))
        state.setEntry(key(2), size: 9, lastUsed: 600)
        var scanned: [CacheKey: CacheStore.IndexEntry] = [:]
        for number in 0..<4 { scanned[key(number)] = .init(size: 1, lastUsed: Int64(100 + number)) }
        state.mergeIndex(scanned)
        #expect(state.index[key(0)]?.size == 7)
        #expect(state.index[key(1)] == nil)
        #expect(state.index[key(2)]?.size == 9)
        #expect(state.index[key(3)]?.size == 1)
        #expect(state.bytes == 17)
        var merged = Model(state: state)
        #expect(merged.drain() == [3, 0, 2].map(key))
        // Once merged, removals are no longer remembered.
        state.removeEntry(key(3))
        #expect(state.removedBeforeIndexing.isEmpty)
    }

    @Test("An order built from an index holds one element per entry")
    func rebuilt() {
        var index: [CacheKey: CacheStore.IndexEntry] = [:]
        for number in 0..<50 { index[key(number)] = .init(size: 1, lastUsed: Int64(1000 - number)) }
        var state = CacheStore.StoreState()
        state.mergeIndex(index)
        #expect(state.order.count == 50)
        #expect(state.bytes == 50)
        #expect(state.order.popOldest(in: state.index)?.key == key(49))
    }

    // MARK: The store's eviction

    /// A store with `count` entries of 10 bytes, stored 1 ms apart on `clock`, and their keys.
    private func store(
        _ count: Int, in root: String, clock: ManualCacheClock
    ) throws -> (store: CacheStore, entries: [CachedEntry]) {
        // A budget eviction never reaches by itself: the test calls `evict(toFit:)`.
        let store = try CacheStore(configuration: .init(directory: root + "/cache"), clock: clock.clock)
        #expect(store.waitUntilIndexed(timeout: .seconds(30)))
        let entries = try commitTestEntries(count, to: store) { clock.advance(by: .milliseconds(1)) }
        return (store, entries)
    }

    private func kept(_ store: CacheStore, _ entries: [CachedEntry]) -> [Int] {
        let index = store.state.withLock { $0.index }
        return entries.indices.filter {
            index[entries[$0].key] != nil && FileManager.default.fileExists(atPath: entries[$0].bodyPath)
        }
    }

    @Test("Eviction removes the least recently used entries first, counting uses after storing")
    func leastRecentlyUsedFirst() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clock = ManualCacheClock()
        let (store, entries) = try store(6, in: root, clock: clock)
        // Served after being stored, 3 then 0: the order of use is 1, 2, 4, 5, 3, 0.
        for used in [3, 0] {
            #expect(store.serve(entries[used], descriptor: nil, at: root + "/served-\(used).gif") != nil)
            clock.advance(by: .milliseconds(1))
        }
        #expect(store.evict(toFit: 40) == 2)
        #expect(kept(store, entries) == [0, 3, 4, 5])
        #expect(store.evict(toFit: 20) == 2)
        #expect(kept(store, entries) == [0, 3])
        #expect(store.state.withLock { $0.bytes } == 20)
    }

    /// Eviction keeps an entry whose file changed over a second after its last use (another
    /// process used it); a commit that stalled between reading the clock and naming its file
    /// (ThreadSanitizer on a loaded machine) made its own entry look so.
    @Test("A commit held up for over a second after reading the clock still ranks its entry by when it was stored")
    func stalledCommit() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clock = ManualCacheClock()
        let store = try CacheStore(configuration: .init(directory: root + "/cache"), clock: clock.clock)
        #expect(store.waitUntilIndexed(timeout: .seconds(30)))
        clock.stallNextDate(by: .milliseconds(1_200))
        let entries = try commitTestEntries(3, to: store) { clock.advance(by: .milliseconds(1)) }
        #expect(store.evict(toFit: 20) == 1)
        #expect(kept(store, entries) == [1, 2])
    }

    @Test("An entry pinned or locked during a pass is skipped, and evicted by a later pass")
    func skippedEntriesComeBack() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clock = ManualCacheClock()
        let (store, entries) = try store(5, in: root, clock: clock)
        store.pin(entries[0].key)
        let lock = try #require(store.tryLock(entries[1].key))
        #expect(store.evict(toFit: 30) == 2)
        #expect(kept(store, entries) == [0, 1, 4])
        store.unpin(entries[0].key)
        lock.unlock()
        #expect(store.evict(toFit: 10) == 2)
        #expect(kept(store, entries) == [4])
        // Nothing is left in the order but the one entry (and elements gone stale).
        #expect(store.state.withLock { state in state.order.popOldest(in: state.index)?.key } == entries[4].key)
    }
}

/// Opening a cache: its entries are indexed on the eviction thread, not in the caller's.
@Suite("Cache start-up", .timeLimit(.minutes(2)))
struct CacheStartupTests {
    /// Fills `root/cache` with `count` entries of 10 bytes through a store that is then closed.
    private func fill(_ count: Int, in root: String) throws {
        _ = try commitTestEntries(count, to: try CacheStore(configuration: .init(directory: root + "/cache")))
    }

    @Test("Opening a cache returns before its entries are indexed; the index then holds every entry")
    func indexedInTheBackground() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try fill(20, in: root)
        // The indexing waits (at most 5 s) for the store's initialiser to have returned.
        let opened = DispatchSemaphore(value: 0)
        let waitedInVain = Locked<Bool?>(nil)
        let store = try CacheStore(
            configuration: .init(directory: root + "/cache"),
            beforeIndexing: { waitedInVain.withLock { $0 = opened.wait(timeout: .now() + 5) == .timedOut } })
        opened.signal()
        #expect(store.waitUntilIndexed(timeout: .seconds(30)))
        #expect(waitedInVain.withLock { $0 } == false)
        #expect(store.state.withLock { $0.index.count } == 20)
        #expect(store.state.withLock { $0.bytes } == 200)
    }

    @Test("A cache over its budget when opened is trimmed to 90 % of it without waiting for a download")
    func trimmedWhenOpened() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try fill(10, in: root)
        var configuration = PushAttachmentFetcher.Configuration.Cache(directory: root + "/cache")
        configuration.maximumBytes = 50
        let store = try CacheStore(configuration: configuration)
        #expect(store.waitUntilIndexed(timeout: .seconds(30)))
        // Eviction follows the indexing on the same thread: bounded wait for it to end.
        let entries = root + "/cache/entries"
        for _ in 0..<300 {
            guard ((try? FileManager.default.contentsOfDirectory(atPath: entries))?.count ?? 0) > 4 else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: entries).count == 4)
        #expect(store.state.withLock { $0.bytes } == 40)
    }

    @Test("cache stats with a budget smaller than the cache removes nothing; cache prune applies it, with every entry indexed first")
    func maintenanceOpensWithoutTrimming() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try fill(10, in: root)
        let cache = root + "/cache", entries = root + "/cache/entries"
        let stats = try await CommandRunner.run("fetch-attachment", ["cache", "stats", "--cache-dir", cache, "--cache-max-bytes", "50", "--json"])
        #expect(stats.status == 0 && stats.stdout.contains(#""entries":10"#), "\(stats.stdout) \(stats.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: entries).count == 10)
        let prune = try await CommandRunner.run("fetch-attachment", ["cache", "prune", "--cache-dir", cache, "--cache-max-bytes", "50", "--json"])
        #expect(prune.status == 0 && prune.stdout.contains(#""removed_entries":5"#), "\(prune.stdout) \(prune.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: entries).count == 5)
    }
}

/// Stores `count` entries of 10 bytes (GIF bodies of `http://127.0.0.1/N.gif`) in `store`,
/// calling `afterEach` after each; the entries, in order.
private func commitTestEntries(_ count: Int, to store: CacheStore, afterEach: () -> Void = {}) throws -> [CachedEntry] {
    let media = MediaType(mime: "image/gif", kind: .image, fileExtension: "gif")
    var entries: [CachedEntry] = []
    for index in 0..<count {
        let url = try AttachmentURL.parse("http://127.0.0.1/\(index).gif").get()
        let path = TemporaryFiles.path(in: store.temporaryDirectory)
        let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate], permissions: .ownerReadWrite)
        _ = try file.closeAfter { try file.writeAll(Array(String(format: "GIF89a%04d", index).utf8)) }
        let body = DownloadedFile(path: path, media: media, byteCount: 10, effectiveURL: url.string, headerBlock: "")
        let committed = try store.commit(body, key: CacheKey(url), freshness: HTTPFreshness(headers: [])).get()
        try committed.descriptor.close()
        entries.append(committed.entry)
        afterEach()
    }
    return entries
}
