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
    /// Nameless files made ahead in the cache's `tmp` for the bodies to come, off the engine's
    /// thread (see `PreparedFiles`).
    let preparedFiles: PreparedFiles
    private let inflight = Locked<[CacheKey: SharedDownload]>([:])
    /// Ends each payload's wait for a shared download at its deadline.
    private let waiters = DeadlineWatch()
    /// Recent failures (bounded: a campaign of failing URLs does not grow it without end).
    private let failures = Locked(FailureMemory())
    /// Each URL's key, worked out once (see `cacheKey(for:)`).
    private let keys = BoundedMemo<CacheKey>()
    /// Payloads served from a fresh entry without a request.
    let hits = Atomic<Int>(0)
    /// Payloads that joined a transfer another payload had started.
    let coalesced = Atomic<Int>(0)
    /// Revalidations answered `304 Not Modified`.
    let notModified = Atomic<Int>(0)
    /// Downloads made without the key's lock, not kept, because the process holding it had
    /// stopped showing it was alive (`HolderLiveness`).
    let stoppedHolders = Atomic<Int>(0)
    /// Entries evicted, the budget aside, to make room on a file system that had run out of it.
    let evictedForRoom = Atomic<Int>(0)

    /// What the keys are scoped by (`Configuration.cacheScope`).
    private let keyScope: String

    /// Downloads through `store` with `engine`, bodies streaming into `preparedFiles`, which must
    /// make its files in `bodyDirectory` (the store's `tmp`, or the output directory when this
    /// process cannot add entries: `store.storeProblem`); keys scoped by `keyScope`.
    init(
        store: CacheStore, engine: TransferEngine, outputDirectory: String, preparedFiles: PreparedFiles, keyScope: String
    ) {
        self.keyScope = keyScope
        self.store = store
        self.engine = engine
        self.outputDirectory = outputDirectory
        self.preparedFiles = preparedFiles
        bodyDirectory = store.storeProblem == nil ? store.temporaryDirectory : outputDirectory
        unkeptFiles = PreparedFiles(directory: outputDirectory, capacity: 0, permissions: 0o644)
    }

    /// Where bodies stream: the store's `tmp`, or the output directory when no entry can be added.
    private let bodyDirectory: String

    /// The files of bodies downloaded again into the output directory when the cache's `tmp`
    /// could not take them (`downloadUnkept`): made when needed, none ahead.
    private let unkeptFiles: PreparedFiles

    /// The first time a body could not be written in the cache's `tmp` (a full disk, no inodes
    /// left, a cache directory removed) or kept as an entry (no extended attributes), and until
    /// when bodies skip `tmp` for the output directory, unkept, as without the cache.
    private let writeProblem = Locked<(detail: String?, skipUntil: ContinuousClock.Instant?)>((nil, nil))

    /// How long bodies skip the cache's `tmp` after a write there failed, before it is tried
    /// again (eviction, or another process, may have made room).
    static let writeProblemPause = Duration.seconds(10)

    /// The least room made for a body that ran out of it (`download`): one that had barely
    /// begun, without a `Content-Length`, says little of its size.
    static let minimumRoom = 256 << 10

    /// What went wrong the first time the cache could not take a body, if it ever did.
    var writeProblemDetail: String? { writeProblem.withLock { $0.detail } }

    private func noteWriteProblem(_ detail: String, skippingTemporaryDirectory: Bool) {
        let now = ContinuousClock.now
        writeProblem.withLock { problem in
            if problem.detail == nil { problem.detail = detail }
            if skippingTemporaryDirectory { problem.skipUntil = now.advanced(by: Self.writeProblemPause) }
        }
    }

    /// Whether bodies skip the cache's `tmp` for now.
    private var skipsTemporaryDirectory: Bool {
        guard let until = writeProblem.withLock({ $0.skipUntil }) else { return false }
        return ContinuousClock.now < until
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
            // A download every payload gave up on is being cancelled: this payload starts anew.
            if let existing = inflight[key], existing.join(until: deadline) { return (existing, false) }
            let created = SharedDownload(deadline: deadline, watch: waiters)
            inflight[key] = created
            return (created, true)
        }
        if isLeader {
            // Not a child of this payload's task: the transfer goes on for the others when this
            // payload's deadline passes or its task is cancelled, and is cancelled once no payload
            // waits for it any more.
            let leader = Task.detached { await self.lead(shared, key: key, url: url) }
            shared.onAbandon { leader.cancel() }
        } else {
            coalesced.add(1, ordering: .relaxed)
        }
        guard let result = await shared.wait(until: deadline) else {
            let detail = shared.isHeldElsewhere
                ? "the deadline passed while another process held this URL's download" : "the deadline passed before the download finished"
            return .failure(TransferFailure(reason: .deadline, detail: detail))
        }
        switch result {
        case .success(let source): return materialize(source, for: url, deadline: deadline)
        case .failure(let failure): return .failure(failure)
        }
    }

    /// Whether this process's download of `key` waits for another process that holds its lock.
    func waitsForAnotherProcess(_ key: CacheKey) -> Bool {
        inflight.withLock { $0[key]?.isHeldElsewhere ?? false }
    }

    // MARK: The shared transfer

    private func lead(_ shared: SharedDownload, key: CacheKey, url: AttachmentURL) async {
        let result = await fetch(key: key, url: url, deadline: shared.deadline, shared: shared)
        if case .failure(let failure) = result, !Task.isCancelled, Self.isRemembered(failure),
            store.configuration.failureMemory > .zero
        {
            let now = store.clock.instant()
            let until = now.advanced(by: store.configuration.failureMemory)
            failures.withLock { $0.remember(failure, for: key, until: until, now: now) }
        }
        // Out of the map before its result goes out: a payload that comes once this one has its
        // result looks at the cache anew (and revalidates an entry fresh for no time at all)
        // rather than taking a result it did not wait for.
        inflight.withLock { inflight in
            if inflight[key] === shared { inflight[key] = nil }
        }
        shared.resolve(result)
    }

    /// Takes the key's lock (polling while another process holds it, and serving its result as
    /// soon as it is stored), then serves a fresh entry, revalidates a stale one, or downloads.
    /// When the process that held the lock let it go with nothing fresh stored (a response not
    /// to keep, such as `no-store` or a redirect without freshness, or a failure), this one
    /// downloads without the lock and keeps nothing (asking conditionally when it found a stale
    /// entry, which a 304 serves), so that every process that waited does so
    /// at once, as without the cache, rather than one after another, each holding the lock. So
    /// does this one, without waiting for the lock to go, once the process that holds it has shown
    /// no heartbeat for `HolderLiveness.stillness` (stopped, or frozen): a live one is waited for,
    /// however slow its origin.
    ///
    /// The lock (one `fcntl`) and the look-up (an `openat`, answered from the directory cache
    /// on a miss; for an entry another process stored, its first classification in this
    /// process, as a hit's look-up makes it) are made here, in the leader's task, as a hit's
    /// `link` is: on a miss a trip through `BlockingIO` cost more than both. So are the commit
    /// of a body (`fstat`, `fsetxattr`, `fchmod`, `linkat`) and the refresh after a 304 (one
    /// `fsetxattr`): metadata calls of microseconds that never wait for the disk's writes, as the
    /// hit's `link`; the trip there and back cost 5 % of a cached miss's CPU time on tmpfs.
    /// What may take long (eviction, making files ahead) runs on threads of its own.
    private func fetch(
        key: CacheKey, url: AttachmentURL, deadline: ExtendableDeadline, shared: SharedDownload
    ) async -> Result<SharedSource, TransferFailure> {
        let store = self.store
        var pause = Duration.milliseconds(2)
        var waitedForAnother = false
        var holder = HolderLiveness()
        // Bounded by the deadline (and, besides, in count); a `where` clause would only skip the
        // rest of the count, spinning on the clock after the deadline.
        var tries = 0
        while tries < 100_000, ContinuousClock.now < deadline.current, !Task.isCancelled {
            tries += 1
            let locking = store.lock(key)
            let found = store.load(key, keepingOpen: true)
            let lock: CacheLock?
            switch locking {
            case .success(let held): lock = held
            case .failure(let failure):
                try? found?.descriptor?.close()
                return .failure(failure)
            }
            if let found, found.entry.isFresh(at: store.clock.date()) {
                lock?.unlock()
                // Stored meanwhile (by the process whose lock this one waited for): a hit.
                hits.add(1, ordering: .relaxed)
                return .success(SharedSource(entry: found.entry, descriptor: found.descriptor, store: store))
            }
            if let lock {
                shared.noteHeldElsewhere(false)
                if waitedForAnother {
                    // Revalidated still, when there is a stale entry: a 304 (the other process's
                    // answer too, for a `no-cache` entry) costs the origin no body.
                    lock.unlock()
                    return await download(key: key, url: url, revalidating: found, deadline: deadline, keeping: false)
                }
                // A stale entry stays open while it is revalidated: a 304 serves it from there,
                // whether or not its name is still there.
                let result = await download(key: key, url: url, revalidating: found, deadline: deadline)
                lock.unlock()
                return result
            }
            waitedForAnother = true
            try? found?.descriptor?.close()
            // Another process holds this URL, and has stopped (SIGSTOP, a frozen container): this
            // one downloads on its own, without the lock, and keeps nothing.
            if let mark = store.holderMark(of: key), holder.isStopped(showing: mark, at: .now) {
                stoppedHolders.add(1, ordering: .relaxed)
                shared.noteHeldElsewhere(false)
                return await download(key: key, url: url, revalidating: nil, deadline: deadline, keeping: false)
            }
            // Another process downloads this URL: a payload whose deadline passes meanwhile says so.
            shared.noteHeldElsewhere(true)
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        if Task.isCancelled { return .failure(TransferStateMachine.cancellation) }
        // Another process is named only when one held the lock: the deadline may have passed
        // before the first try (a payload that waited its whole time in line).
        return .failure(
            TransferFailure(
                reason: .deadline,
                detail: waitedForAnother
                    ? "the deadline passed while another process held this URL's download" : "the deadline passed before the download started"))
    }

    /// Downloads `url` for `key`, conditionally when a `stale` entry (open, when its descriptor
    /// comes too) has validators; this function closes or hands on that descriptor. Without
    /// `keeping` (and without the key's lock) the body is served and not stored.
    private func download(
        key: CacheKey, url: AttachmentURL, revalidating found: (entry: CachedEntry, descriptor: FileDescriptor?)?,
        deadline: ExtendableDeadline, keeping: Bool = true, afterMakingRoom: Bool = false
    ) async -> Result<SharedSource, TransferFailure> {
        let stale = found?.entry
        var staleDescriptor = found?.descriptor
        defer { try? staleDescriptor?.close() }
        if bodyDirectory != outputDirectory, skipsTemporaryDirectory { return await downloadUnkept(url, deadline: deadline) }
        var headers: [String] = []
        if let stale {
            if let etag = stale.metadata.etag { headers.append("If-None-Match: \(etag)") }
            if let lastModified = stale.metadata.lastModified { headers.append("If-Modified-Since: \(lastModified)") }
        }
        let result = await engine.download(
            TransferRequest(
                url: url.string, headers: headers, hostKey: url.hostKey, deadline: deadline.current, laterDeadline: deadline,
                temporaryDirectory: bodyDirectory, place: { .success($0) },
                preparedFiles: preparedFiles))
        let store = self.store
        switch result {
        case .failure(let failure):
            // The engine writes nothing here but the body, in `bodyDirectory`: a storage failure
            // is the cache's `tmp` failing (a full disk, no inodes, a cache removed). The payloads
            // lose nothing by it: downloaded again into the output directory, as without the
            // cache, and not kept; so are the next bodies for a while.
            if failure.reason == .storage, bodyDirectory != outputDirectory, !Task.isCancelled, ContinuousClock.now < deadline.current {
                // Out of room: the least recently used entries that hold blocks of their own go
                // (off the tasks' threads) until they held twice the body's size; once the body's
                // own size is free, it is fetched again into the cache, once.
                if let wanted = failure.roomWanted, !afterMakingRoom {
                    let room = 2 * max(wanted, Self.minimumRoom)
                    let quota = failure.roomIsQuota
                    let indexWait = ContinuousClock.now.duration(to: deadline.current)
                    let (evicted, freed, available) = await BlockingIO.run { store.makeRoom(room, quota: quota, indexWait: indexWait) }
                    evictedForRoom.add(evicted, ordering: .relaxed)
                    if freed >= wanted || available > wanted {
                        return await download(
                            key: key, url: url, revalidating: nil, deadline: deadline, keeping: keeping, afterMakingRoom: true)
                    }
                }
                noteWriteProblem(failure.detail, skippingTemporaryDirectory: true)
                return await downloadUnkept(url, deadline: deadline)
            }
            return .failure(failure)
        case .success(.notModified(let headerBlock, let redirected)):
            guard let stale else {
                return .failure(TransferFailure(reason: .httpStatus, detail: "HTTP 304 to an unconditional request"))
            }
            // The URL now redirects, and its target answered the validators the redirect carried
            // there: they were the stored body's, not the target's. Fetched again, whole.
            if redirected { return await download(key: key, url: url, revalidating: nil, deadline: deadline, keeping: keeping) }
            let freshness = HTTPFreshness(headers: HTTPHeader.parse(headerBlock))
            // A 304 naming another strong ETag answers for another body (RFC 9111 4.3.4): fetched
            // again, whole.
            if let named = freshness.etag, let kept = stale.metadata.etag, !named.hasPrefix("W/"), !kept.hasPrefix("W/"), named != kept {
                return await download(key: key, url: url, revalidating: nil, deadline: deadline, keeping: keeping)
            }
            notModified.add(1, ordering: .relaxed)
            let descriptor = staleDescriptor
            staleDescriptor = nil
            // `no-store` on the 304: served this once from the entry it revalidated, which goes
            // (by the holder of the key's lock only: another process may be storing it anew).
            if freshness.noStore {
                if keeping { store.remove(key) }
                return .success(SharedSource(entry: stale, descriptor: descriptor, store: store))
            }
            switch store.refresh(stale, through: descriptor, freshness: freshness) {
            case .success(let refreshed): return .success(SharedSource(entry: refreshed, descriptor: descriptor, store: store))
            case .failure(let failure):
                // The 304 vouches for the body held open: served all the same. The entry stays
                // stale (a read-only cache, another user's entry), and is asked about again.
                noteWriteProblem(failure.detail, skippingTemporaryDirectory: false)
                return .success(SharedSource(entry: stale, descriptor: descriptor, store: store))
            }
        case .success(.file(var body)):
            let headers = HTTPHeader.parse(body.headerBlock)
            let freshness = HTTPFreshness(headers: headers).bounded(by: body.redirects, defaultLifetime: store.configuration.defaultFreshness)
            // A body stale at once with nothing to revalidate it by (behind a redirect without
            // freshness of its own, say) would only be downloaded again: not kept either.
            let reusable = freshness.lifetime != .zero || freshness.etag != nil || freshness.lastModified != nil
            if !keeping || freshness.noStore || !reusable || body.byteCount > store.configuration.maximumBytes || store.storeProblem != nil {
                // Not kept: the payloads waiting now link the temporary file, removed with its last user.
                return .success(SharedSource(body: body, madeBy: preparedFiles))
            }
            // Worked out from the headers parsed here, for the entry's metadata.
            body.unsuffixedReason = SuggestedFileName.unsuffixed(url: body.effectiveURL, headers: headers)
            body.unsuffixedName = body.unsuffixedReason != nil
            let contentType = headers.last { $0.name == "content-type" }?.value
            body.oneSignalUntypedMIME = VendorFileNaming.oneSignalMIMEExtension(contentType) == nil
            body.cleverTapUntypedMIME = VendorFileNaming.cleverTapMIMEExtension(contentType) == nil
            body.airshipUntypedMIME = !VendorFileNaming.airshipMIMEHints(contentType)
            let kept = body
            switch store.commit(kept, key: key, freshness: freshness) {
            case .success(let committed):
                return .success(SharedSource(entry: committed.entry, descriptor: committed.descriptor, store: store))
            case .failure(let failure):
                // Not kept (a full disk, a file system without extended attributes): the
                // payloads waiting now are served all the same.
                self.noteWriteProblem(failure.detail, skippingTemporaryDirectory: false)
                return .success(SharedSource(body: kept, madeBy: self.preparedFiles))
            }
        }
    }

    /// `url` downloaded into the output directory and not kept, as without the cache: into a
    /// nameless file there, which a kill leaves nothing of.
    private func downloadUnkept(_ url: AttachmentURL, deadline: ExtendableDeadline) async -> Result<SharedSource, TransferFailure> {
        let files = unkeptFiles
        return await engine.downloadFile(
            UnconditionalRequest(
                url: url.string, hostKey: url.hostKey, deadline: deadline.current, laterDeadline: deadline,
                temporaryDirectory: outputDirectory, place: { .success($0) }, preparedFiles: files)
        ).map { SharedSource(body: $0, madeBy: files) }
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
            result = AttachmentFiles.link(descriptor, at: path).map { placed }
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
        let key = CacheKey(url, scope: keyScope)
        keys.remember(key, for: url.string)
        return key
    }

    private func rememberedFailure(_ key: CacheKey) -> TransferFailure? {
        let now = store.clock.instant()
        // The whole failure, so that each platform judges it again as it judged the download.
        return failures.withLock({ $0.recall(key, now: now) })?.remembered()
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
    /// What made a transient body's file, which removes it as it made it (`PreparedFiles.remove`).
    private let files: PreparedFiles?

    init(entry: CachedEntry, descriptor: FileDescriptor?, store: CacheStore) {
        self.entry = entry
        self.descriptor = descriptor
        self.store = store
        file = entry.file
        files = nil
        isTransient = false
        store.pin(entry.key)
    }

    /// A body not kept, made by `files` (or in the output directory, when `nil`).
    init(body: DownloadedFile, madeBy files: PreparedFiles? = nil) {
        file = body
        entry = nil
        descriptor = body.descriptor
        store = nil
        self.files = files
        isTransient = true
        // Every payload's link shares this inode: read-only, so none can change the others'.
        if let descriptor { try? Syscalls.setPermissions(of: descriptor, CacheStore.bodyMode) }
    }

    deinit {
        try? descriptor?.close()
        if let entry { store?.unpin(entry.key) }
        if isTransient {
            if let files { files.remove(file.path) } else { TemporaryFiles.remove(file.path) }
        }
    }
}

/// One transfer that several payloads wait for, each until its own deadline; cancelled (through
/// `onAbandon`) when every payload that joined it has left without its result.
final class SharedDownload: Sendable {
    typealias Outcome = Result<SharedSource, TransferFailure>

    /// When the transfer gives up: the latest deadline of the payloads that joined it, moved
    /// later as each later one joins, so that none is cut short by an earlier payload's. Each
    /// payload's wait still ends at its own deadline (`watch`): what follows the transfer (the
    /// commit, a wait for another process) is bounded by nothing else.
    let deadline: ExtendableDeadline

    private enum Waiter {
        case parked(CheckedContinuation<Outcome?, Never>)
        /// Left without the result, perhaps before it parked.
        case left
    }

    private struct State {
        var result: Outcome?
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        /// Payloads that joined and have not left; the one that creates the download counts.
        /// Only a leave before the result lowers it, so at 0 the download is abandoned.
        var joined = 1
        var cancel: (@Sendable () -> Void)?
        /// Whether the leader found the key locked by another process (and polls the cache).
        var heldElsewhere = false

        var abandoned: Bool { joined == 0 }
    }

    private let state = Locked(State())

    /// What ends each waiting payload's wait at its deadline.
    private let watch: DeadlineWatch

    /// A download for a payload whose deadline is `deadline`; `watch` ends each wait at its
    /// payload's deadline.
    init(deadline: ContinuousClock.Instant, watch: DeadlineWatch) {
        self.deadline = ExtendableDeadline(deadline)
        self.watch = watch
    }

    /// Whether another process held the key's lock when the leader last tried it.
    var isHeldElsewhere: Bool { state.withLock { $0.heldElsewhere } }

    /// Records whether another process holds the key's lock.
    func noteHeldElsewhere(_ held: Bool) { state.withLock { $0.heldElsewhere = held } }

    /// Counts one more waiting payload, whose deadline is `until`: the transfer's deadline moves
    /// there if it is later. `false` once the download is abandoned, or its deadline has passed
    /// (the engine has given it up, or is about to): that payload starts another.
    func join(until payloadDeadline: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            guard !state.abandoned, ContinuousClock.now < deadline.current else { return false }
            state.joined += 1
            deadline.extend(to: payloadDeadline)
            return true
        }
    }

    /// What cancels the transfer once no payload waits for it; run at once if none does already.
    func onAbandon(_ cancel: @escaping @Sendable () -> Void) {
        let abandoned = state.withLock { state -> Bool in
            if !state.abandoned { state.cancel = cancel }
            return state.abandoned
        }
        if abandoned { cancel() }
    }

    /// The result, or `nil` when `payloadDeadline` (or the task's cancellation) comes first; each
    /// payload that joined calls this once. The transfer goes on while another payload waits.
    func wait(until payloadDeadline: ContinuousClock.Instant) async -> Outcome? {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        // Ended at its deadline by the watch, which nothing else the fetcher does can hold up.
        let watched = watch.watch(until: payloadDeadline) { [self] in leave(id) }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome?, Never>) in
                let immediate: Outcome?? = state.withLock { state in
                    if let result = state.result { return .some(result) }
                    if case .left = state.waiters[id] { return .some(nil) }
                    state.waiters[id] = .parked(continuation)
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            leave(id)
        }
        watch.unwatch(watched)
        return outcome
    }

    /// Hands `result` to every waiter, and to every later one.
    func resolve(_ result: Outcome) {
        let waiters = state.withLock { state in
            state.result = result
            defer { state.waiters = [:] }
            return state.waiters
        }
        for case .parked(let waiter) in waiters.values { waiter.resume(returning: result) }
    }

    /// Waiter `id` leaves without the result; the last to leave cancels the transfer.
    private func leave(_ id: UInt64) {
        let (waiter, cancel) = state.withLock { state -> (CheckedContinuation<Outcome?, Never>?, (@Sendable () -> Void)?) in
            guard state.result == nil else { return (nil, nil) }
            let waiter: CheckedContinuation<Outcome?, Never>?
            switch state.waiters[id] {
            case .left: return (nil, nil)
            case .parked(let continuation): waiter = continuation
            case nil: waiter = nil
            }
            state.waiters[id] = .left
            state.joined -= 1
            guard state.abandoned else { return (waiter, nil) }
            defer { state.cancel = nil }
            return (waiter, state.cancel)
        }
        waiter?.resume(returning: nil)
        cancel?()
    }
}
