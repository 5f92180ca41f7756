import DequeModule
import Foundation
import Synchronization
import SystemPackage

/// Downloads through the on-disk cache: one transfer per URL however many payloads ask at once.
///
/// In one process, payloads that need the same URL join one `SharedDownload`; across processes,
/// the key's byte-range lock decides who downloads while the others poll the cache. Each payload
/// waits with its own deadline, and receives its own file (a hard link of the cached body, or a
/// copy where links are impossible), made from a descriptor its waiters hold, so that an entry
/// evicted meanwhile is still theirs.
final class CachedDownloads: Sendable {
    let store: CacheStore
    private let engine: TransferEngine
    private let outputDirectory: String
    /// The budget of a shared transfer, from its start.
    private let transferBudget: Duration
    private let inflight = Locked<[CacheKey: SharedDownload]>([:])
    private let failures = Locked<[CacheKey: (failure: TransferFailure, until: ContinuousClock.Instant)]>([:])
    /// How many failures are remembered at most: a campaign of failing URLs does not grow the
    /// map without end (expired ones go first, then the soonest to expire).
    static let failureCapacity = 4096
    /// Each URL's key, worked out once (see `cacheKey(for:)`).
    private let keys = BoundedMemo<CacheKey>()
    /// Payloads served from a fresh entry without a request.
    let hits = Atomic<Int>(0)
    /// Payloads that joined a transfer another payload had started.
    let coalesced = Atomic<Int>(0)
    /// Revalidations answered `304 Not Modified`.
    let notModified = Atomic<Int>(0)
    /// Shared transfers that may hold their URL's lock (an open file) at once: as many as the
    /// engine runs transfers, so that however many payloads are in flight, waiting leaders hold
    /// no descriptor (see `FileDescriptorBudget`).
    private let leaderSlots: AsyncSlots

    init(
        store: CacheStore, engine: TransferEngine, outputDirectory: String, transferBudget: Duration,
        maximumLeaders: Int
    ) {
        leaderSlots = AsyncSlots(maximumLeaders)
        self.store = store
        self.engine = engine
        self.outputDirectory = outputDirectory
        self.transferBudget = transferBudget
    }

    /// The attachment for `url` as a file of its own in the output directory, by `deadline`.
    func download(_ url: AttachmentURL, deadline: ContinuousClock.Instant) async -> Result<DownloadedFile, TransferFailure> {
        let key = cacheKey(for: url)
        if let remembered = rememberedFailure(key) { return .failure(remembered) }

        // A fresh entry: this payload's own link of it, made here, in the caller's task: a `stat`
        // and a `link`, system calls of microseconds, like those the engine's thread makes for
        // every body. A trip through `BlockingIO` cost more than a quarter of a hit's CPU time and
        // would shield nothing (see there).
        if let entry = store.entry(for: key), entry.isFresh(at: store.clock.date()),
            let hit = store.serve(entry, descriptor: nil, at: finalPath(entry.file, for: url))
        {
            hits.add(1, ordering: .relaxed)
            return Self.checkDeadline(hit, deadline)
        }

        let (shared, isLeader) = inflight.withLock { inflight -> (SharedDownload, Bool) in
            if let existing = inflight[key] { return (existing, false) }
            let created = SharedDownload()
            inflight[key] = created
            return (created, true)
        }
        if isLeader {
            // Not a child of this payload's task: the transfer goes on for the others when this
            // payload's deadline passes or its task is cancelled.
            Task.detached { await self.lead(shared, key: key, url: url) }
        } else {
            coalesced.add(1, ordering: .relaxed)
        }
        guard let result = await shared.wait(until: deadline) else {
            return .failure(TransferFailure(reason: .deadline, detail: "the deadline passed while the shared download went on"))
        }
        switch result {
        case .success(let source): return materialize(source, for: url, deadline: deadline)
        case .failure(let failure): return .failure(failure)
        }
    }

    // MARK: The shared transfer

    private func lead(_ shared: SharedDownload, key: CacheKey, url: AttachmentURL) async {
        let deadline = ContinuousClock.now.advanced(by: transferBudget)
        await leaderSlots.acquire()
        let result = await fetch(key: key, url: url, deadline: deadline)
        leaderSlots.release()
        if case .failure(let failure) = result, Self.isRemembered(failure), store.configuration.failureMemory > .zero {
            let now = store.clock.instant()
            let until = now.advanced(by: store.configuration.failureMemory)
            failures.withLock { failures in
                if failures.count >= Self.failureCapacity {
                    failures = failures.filter { $0.value.until > now }
                    if failures.count >= Self.failureCapacity {
                        let soonest = failures.sorted { $0.value.until < $1.value.until }.prefix(Self.failureCapacity / 2)
                        for (old, _) in soonest { failures[old] = nil }
                    }
                }
                failures[key] = (failure, until)
            }
        }
        shared.resolve(result)
        inflight.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Takes the key's lock (polling while another process holds it, and serving its result as
    /// soon as it is stored), then serves a fresh entry, revalidates a stale one, or downloads.
    private func fetch(
        key: CacheKey, url: AttachmentURL, deadline: ContinuousClock.Instant
    ) async -> Result<SharedSource, TransferFailure> {
        let store = self.store
        var pause = Duration.milliseconds(2)
        for _ in 0..<100_000 where ContinuousClock.now < deadline {
            let (locking, found) = await BlockingIO.run {
                () -> (Result<CacheLock?, TransferFailure>, (entry: CachedEntry, descriptor: FileDescriptor?)?) in
                let locking = store.lock(key)
                return (locking, store.load(key, keepingOpen: true))
            }
            let lock: CacheLock?
            switch locking {
            case .success(let held): lock = held
            case .failure(let failure):
                try? found?.descriptor?.close()
                return .failure(failure)
            }
            if let found, found.entry.isFresh(at: store.clock.date()) {
                lock?.unlock()
                return .success(SharedSource(entry: found.entry, descriptor: found.descriptor, store: store))
            }
            try? found?.descriptor?.close()
            let entry = found?.entry
            if let lock {
                let result = await download(key: key, url: url, revalidating: entry, deadline: deadline)
                lock.unlock()
                return result
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return .failure(TransferFailure(reason: .deadline, detail: "another process held this URL's download until the deadline"))
    }

    private func download(
        key: CacheKey, url: AttachmentURL, revalidating stale: CachedEntry?, deadline: ContinuousClock.Instant
    ) async -> Result<SharedSource, TransferFailure> {
        var headers: [String] = []
        if let stale {
            if let etag = stale.metadata.etag { headers.append("If-None-Match: \(etag)") }
            if let lastModified = stale.metadata.lastModified { headers.append("If-Modified-Since: \(lastModified)") }
        }
        let result = await engine.download(
            TransferRequest(
                url: url.string, headers: headers, hostKey: url.hostKey, deadline: deadline,
                temporaryDirectory: store.temporaryDirectory, place: { .success($0) }, hashesBody: true, anonymousBody: true))
        let store = self.store
        switch result {
        case .failure(let failure):
            return .failure(failure)
        case .success(.notModified(let headerBlock)):
            guard let stale else {
                return .failure(TransferFailure(reason: .httpStatus, detail: "HTTP 304 to an unconditional request"))
            }
            notModified.add(1, ordering: .relaxed)
            let freshness = HTTPFreshness(headers: HTTPHeader.parse(headerBlock))
            return await BlockingIO.run { store.refresh(stale, freshness: freshness).map { SharedSource(entry: $0, descriptor: nil, store: store) } }
        case .success(.file(let body)):
            let freshness = HTTPFreshness(headers: HTTPHeader.parse(body.headerBlock))
            if freshness.noStore || body.byteCount > store.configuration.maximumBytes {
                // Not kept: the payloads waiting now link the temporary file, removed with its last user.
                return .success(SharedSource(body: body))
            }
            return await BlockingIO.run {
                switch store.commit(body, key: key, freshness: freshness) {
                case .success(let committed):
                    return .success(SharedSource(entry: committed.entry, descriptor: committed.descriptor, store: store))
                case .failure:
                    // Not kept (a full disk, a file system without extended attributes): the
                    // payloads waiting now are served all the same.
                    return .success(SharedSource(body: body))
                }
            }
        }
    }

    // MARK: Each payload's own file

    private func materialize(
        _ source: SharedSource, for url: AttachmentURL, deadline: ContinuousClock.Instant
    ) -> Result<DownloadedFile, TransferFailure> {
        // One `link`, made in the caller's task as a cache hit's is.
        let path = finalPath(source.file, for: url)
        let result: Result<DownloadedFile, TransferFailure>
        if let entry = source.entry {
            result = store.serve(entry, descriptor: source.descriptor, at: path)
                ?? .failure(TransferFailure(reason: .storage, detail: "the cache entry for \(url.string) went before it was linked"))
        } else if let descriptor = source.descriptor {
            var placed = source.file
            placed.path = path
            placed.descriptor = nil
            result = AttachmentFiles.link(descriptor, at: path, temporaryDirectory: outputDirectory).map { placed }
        } else {
            result = AttachmentFiles.link(source.file, in: outputDirectory, namedAfter: url)
        }
        // Keep the source (its descriptor, its pin) alive until this payload has its own file.
        withExtendedLifetime(source) {}
        return Self.checkDeadline(result, deadline)
    }

    private func finalPath(_ file: DownloadedFile, for url: AttachmentURL) -> String {
        AttachmentFiles.finalPath(for: file, in: outputDirectory, namedAfter: url)
    }

    /// A file made after the deadline is removed: the caller has its `deadline` outcome.
    private static func checkDeadline(
        _ result: Result<DownloadedFile, TransferFailure>, _ deadline: ContinuousClock.Instant
    ) -> Result<DownloadedFile, TransferFailure> {
        if case .success(let file) = result, ContinuousClock.now >= deadline {
            TemporaryFiles.remove(file.path)
            return .failure(TransferFailure(reason: .deadline, detail: "the deadline passed as the file was made"))
        }
        return result
    }

    /// The key of `url`, remembered for the most recent URLs: a campaign asks for the same few
    /// URLs over and over, and normalising and hashing each time is most of a cache hit's work.
    private func cacheKey(for url: AttachmentURL) -> CacheKey {
        if let known = keys.remembered(url.string) { return known }
        let key = CacheKey(url)
        keys.remember(key, for: url.string)
        return key
    }

    private func rememberedFailure(_ key: CacheKey) -> TransferFailure? {
        failures.withLock { failures -> TransferFailure? in
            guard let remembered = failures[key] else { return nil }
            guard store.clock.instant() < remembered.until else {
                failures[key] = nil
                return nil
            }
            return TransferFailure(
                reason: remembered.failure.reason, detail: "\(remembered.failure.detail) (a recent failure, not retried yet)")
        }
    }

    /// Failures that say something about the origin; deadlines, local storage trouble and running
    /// out of file descriptors (`resources`) do not.
    static func isRemembered(_ failure: TransferFailure) -> Bool {
        [.httpStatus, .network, .tooLarge, .unsupportedType, .invalidURL].contains(failure.reason)
    }
}

/// Where waiting payloads take their file from: a cache entry, pinned and held open until the
/// last of them has its file (eviction, here or in another process, takes nothing from them),
/// or a body that is not kept (`no-store`, larger than the whole budget, or not storable),
/// removed when the last payload using it is done.
final class SharedSource: Sendable {
    /// The validated file.
    let file: DownloadedFile
    /// The entry, when the file is one.
    let entry: CachedEntry?
    /// The body, open: an entry's, or a nameless transient body.
    let descriptor: FileDescriptor?
    private let isTransient: Bool
    private let store: CacheStore?

    init(entry: CachedEntry, descriptor: FileDescriptor?, store: CacheStore) {
        self.entry = entry
        self.descriptor = descriptor
        self.store = store
        file = entry.file
        isTransient = false
        store.pin(entry.key)
    }

    init(body: DownloadedFile) {
        file = body
        entry = nil
        descriptor = body.descriptor
        store = nil
        isTransient = true
        // Every payload's link shares this inode: read-only, so none can change the others'.
        if let descriptor { try? Syscalls.setPermissions(of: descriptor, 0o444) }
    }

    deinit {
        try? descriptor?.close()
        if let entry { store?.unpin(entry.key) }
        if isTransient { TemporaryFiles.remove(file.path) }
    }
}

/// One transfer that several payloads wait for, each until its own deadline.
final class SharedDownload: Sendable {
    typealias Outcome = Result<SharedSource, TransferFailure>

    private struct State {
        var result: Outcome?
        var waiters: [UInt64: CheckedContinuation<Outcome?, Never>] = [:]
        var abandoned: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())

    /// The result, or `nil` when `deadline` (or the task's cancellation) comes first. The
    /// transfer itself is not affected.
    func wait(until deadline: ContinuousClock.Instant) async -> Outcome? {
        await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await self.value() }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Hands `result` to every waiter, and to every later one.
    func resolve(_ result: Outcome) {
        let waiters = state.withLock { state in
            state.result = result
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume(returning: result) }
    }

    private func value() async -> Outcome? {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome?, Never>) in
                let immediate: Outcome?? = state.withLock { state in
                    if let result = state.result { return .some(result) }
                    if state.abandoned.remove(id) != nil { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Outcome?, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if state.result == nil { state.abandoned.insert(id) }
                return nil
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// A counting semaphore for tasks: `acquire()` waits, without blocking a thread, until one of
/// `limit` slots is free; waiters are served in order.
final class AsyncSlots: Sendable {
    private struct State {
        var available: Int
        var waiters = Deque<CheckedContinuation<Void, Never>>()
    }

    private let state: Locked<State>

    init(_ limit: Int) { state = Locked(State(available: max(1, limit))) }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                guard state.available > 0 else {
                    state.waiters.append(continuation)
                    return false
                }
                state.available -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiters.popFirst() { return waiter }
            state.available += 1
            return nil
        }
        next?.resume()
    }
}
