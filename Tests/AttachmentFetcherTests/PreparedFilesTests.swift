@testable import AttachmentFetcher
import Foundation
import NIOCore
import SystemPackage
import Testing

/// Nameless files made ahead for the engine (`PreparedFiles`): made off the engine's thread, never
/// named, never waited for, closed with the fetcher; and the cached path takes them. One test at a
/// time: one holds the process's thread for files made ahead, which the others wait on.
@Suite("Prepared files: bodies' files made ahead, off the engine's thread", .serialized, .timeLimit(.minutes(2)))
struct PreparedFilesTests {
    /// How long a refill may take to come: every fetcher's refills in a process share one thread,
    /// and in a full test run on two cores one waited up to 2.3 s in its queue.
    static let refillWait = Duration.seconds(15 * TestTiming.scale)

    private func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    @Test("A take starts a refill up to capacity, off the caller's thread; the files have no name; one refill per half emptied")
    func refillsToCapacity() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = PreparedFiles(directory: directory, capacity: 4)
        #expect(files.count == 0)
        // Nothing is made before the first take, and the first take does not wait for one.
        #expect(files.take() == nil)
        try await TestTiming.wait(atMost: Self.refillWait) { files.count == 4 }
        #expect(files.count == 4)
        #expect(names(in: directory).isEmpty, "\(names(in: directory))")
        #expect(descriptors(in: directory) == 4)

        // A ready file is open for reading and writing, and its receiver may name it.
        let file = try #require(files.take())
        #expect(files.taken.load(ordering: .relaxed) == 1)
        _ = try file.writeAll(Array("body".utf8))
        let name = FilePath("named")
        let directoryHandle = try FileDescriptor.open(FilePath(directory), .readOnly, options: .directory)
        defer { try? directoryHandle.close() }
        try Syscalls.link(file, as: name, in: directoryHandle)
        try file.close()
        #expect(try String(contentsOfFile: directory + "/named", encoding: .utf8) == "body")

        // 3 left of 4: more than half, no refill yet. 2 left: refilled to 4.
        #expect(files.count == 3)
        _ = try #require(files.take()).close()
        try await TestTiming.wait(atMost: Self.refillWait) { files.count == 4 }
        #expect(files.count == 4)
        #expect(files.taken.load(ordering: .relaxed) == 2)
        files.close()
    }

    @Test("A refill makes at most `capacity` files: a consumer that takes each file as it is made cannot keep the thread every fetcher's refills share")
    func refillIsBounded() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The consumer takes each file on the refill's thread, as soon as it is ready: as an
        // engine busier than the refill is fast does. Bounded: it stops taking after 1,000.
        let made = Locked(0)
        let box = Locked<PreparedFiles?>(nil)
        let files = PreparedFiles(directory: directory, capacity: 4, afterEachFile: {
            let count = made.withLock { made -> Int in
                made += 1
                return made
            }
            if count < 1_000 { try? box.withLock { $0 }?.take()?.close() }
        })
        box.withLock { $0 = files }
        #expect(files.take() == nil)
        try await TestTiming.wait(atMost: Self.refillWait) { made.withLock { $0 } >= 4 && !files.isRefilling }
        // One refill's worth, and then the thread is free for the next refill in line; the next
        // take starts this one's next.
        #expect(made.withLock { $0 } == 4)
        #expect(files.count == 0)
        #expect(files.take() == nil)
        try await TestTiming.wait(atMost: Self.refillWait) { made.withLock { $0 } >= 8 && !files.isRefilling }
        #expect(made.withLock { $0 } == 8)
        box.withLock { $0 = nil }
        files.close()
    }

    @Test("Refills never stand in line before the blocking pool's other work: a commit does not wait for files made ahead")
    func refillsDoNotDelayCommits() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Refills held at their first file until the gate opens: more of them than the blocking
        // pool has threads (as when several fetchers' engines each want files).
        let gate = DispatchSemaphore(value: 0)
        let held = System.coreCount + 1
        let sets = (0..<held).map { _ in PreparedFiles(directory: directory, capacity: 2, afterEachFile: { gate.wait(); gate.signal() }) }
        for files in sets { #expect(files.take() == nil) }
        let opened = Locked(false)
        let open = {
            if !opened.withLock({ opened in defer { opened = true }; return opened }) { gate.signal() }
        }
        let ranBeforeTheGateOpened = await withTaskGroup(of: Bool?.self) { group -> Bool in
            group.addTask { await BlockingIO.run { !opened.withLock { $0 } } }
            group.addTask {
                // Bounded: the gate opens after this, and the job then runs after all.
                try? await Task.sleep(for: .seconds(5 * TestTiming.scale))
                return nil
            }
            var answer: Bool?
            while answer == nil, let next = await group.next() {
                if let ran = next { answer = ran } else { open() }
            }
            group.cancelAll()
            open()
            return answer ?? false
        }
        #expect(ranBeforeTheGateOpened)
        try await TestTiming.wait(atMost: Self.refillWait) { sets.allSatisfy { !$0.isRefilling } }
        for files in sets { files.close() }
    }

    @Test("close() closes every file held; later takes answer nil and make nothing")
    func closeReleasesEverything() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = PreparedFiles(directory: directory, capacity: 3)
        _ = files.take()
        try await TestTiming.wait(atMost: Self.refillWait) { files.count == 3 }
        #expect(descriptors(in: directory) == 3)
        files.close()
        #expect(files.count == 0)
        #expect(descriptors(in: directory) == 0)
        #expect(files.take() == nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(files.count == 0)
        #expect(descriptors(in: directory) == 0)
    }

    @Test("A directory that cannot take files: takes answer nil, nothing is held; capacity 0 makes none")
    func unusableDirectoryAndNoCapacity() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = PreparedFiles(directory: directory + "/missing", capacity: 4)
        for _ in 0..<3 { #expect(missing.take() == nil) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(missing.count == 0)

        let none = PreparedFiles(directory: directory, capacity: 0)
        #expect(none.take() == nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(none.count == 0)
        #expect(descriptors(in: directory) == 0)
    }

    @Test("Placing a body: a nameless one is linked, a named one (no O_TMPFILE) renamed; the descriptor is closed either way, and on failure")
    func placing() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let media = MediaType(mime: "image/jpeg", kind: .image, fileExtension: "jpg")
        let url = try AttachmentURL.parse("http://127.0.0.1/photo.jpg").get()
        func body(anonymous: Bool) throws -> DownloadedFile {
            let (file, path) = try TemporaryFiles.create(in: directory, anonymous: anonymous, permissions: 0o644).get()
            _ = try file.writeAll(Array("jpeg".utf8))
            #expect(TemporaryFiles.isAnonymous(path) == anonymous)
            return DownloadedFile(path: path, media: media, byteCount: 4, effectiveURL: url.string, headerBlock: "", descriptor: file)
        }

        let nameless = try AttachmentFiles.place(try body(anonymous: true), in: directory, namedAfter: url).get()
        #expect(nameless.descriptor == nil)
        #expect(try String(contentsOfFile: nameless.path, encoding: .utf8) == "jpeg")
        let named = try AttachmentFiles.place(try body(anonymous: false), in: directory, namedAfter: url).get()
        #expect(try String(contentsOfFile: named.path, encoding: .utf8) == "jpeg")
        // The two attachments, and no temporary name left behind.
        #expect(names(in: directory).count == 2, "\(names(in: directory))")
        #expect(names(in: directory).allSatisfy { !TemporaryFiles.isTemporary($0) })
        #expect(descriptors(in: directory) == 0)

        // A directory that cannot be (a file in its path): `storage`, and the descriptor still
        // closed. (A directory merely gone is made again: OutputDirectoryTests.)
        try Data().write(to: URL(fileURLWithPath: directory + "/blocker"))
        let orphan = try body(anonymous: true)
        guard case .failure(let failure) = AttachmentFiles.place(orphan, in: directory + "/blocker/gone", namedAfter: url) else {
            Issue.record("placed into a missing directory")
            return
        }
        #expect(failure.reason == .storage)
        #expect(descriptors(in: directory) == 0)
    }

    @Test("The budget keeps an eighth of the transfers' worth of files ready, at most 16, none at 1 transfer")
    func budget() {
        #expect(FileDescriptorBudget.preparedFiles(forConcurrency: 1024) == 16)
        #expect(FileDescriptorBudget.preparedFiles(forConcurrency: 160) == 16)
        #expect(FileDescriptorBudget.preparedFiles(forConcurrency: 22) == 2)
        #expect(FileDescriptorBudget.preparedFiles(forConcurrency: 1) == 0)
    }

    /// The process's umask, from /proc (reading it with umask(2) would change it meanwhile).
    private func umask() throws -> mode_t {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try #require(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
    }

    @Test("Without a cache: the body streams into a file made ahead in the output directory, named there 0644 less the umask, no other name ever")
    func directDownloadTakesPreparedFile() async throws {
        try await Fixture.with(cached: false) { fixture in
            let files = fixture.fetcher.preparedFiles
            #expect(files.directory == fixture.directory)
            #expect(files.capacity > 0)
            #expect(await fixture.fetcher.process(fixture.braze("/media/first.png?bytes=30000")).status == .attached)
            try await TestTiming.wait(atMost: Self.refillWait) { files.count == files.capacity }
            #expect(files.count == files.capacity)
            #expect(descriptors(in: fixture.directory) == files.capacity)

            let second = await fixture.fetcher.process(fixture.braze("/media/second.png?bytes=40000"))
            #expect(second.status == .attached)
            #expect(files.taken.load(ordering: .relaxed) == 1)
            let path = try #require(second.attachments.first?.path)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.size] as? NSNumber)?.intValue == 40_000)
            #expect((attributes[.posixPermissions] as? NSNumber)?.uint32Value == UInt32(0o644 & ~(try umask())))
            // Only the two attachments, under their final names.
            #expect(fixture.filesLeft().count == 2, "\(fixture.filesLeft())")
            #expect(fixture.filesLeft().contains((path as NSString).lastPathComponent))
            #expect(fixture.filesLeft().allSatisfy { !$0.hasPrefix(".") })

            await fixture.fetcher.shutdown()
            #expect(files.count == 0)
            try await TestTiming.wait(atMost: .seconds(2 * TestTiming.scale)) { descriptors(in: fixture.directory) == 0 }
            #expect(descriptors(in: fixture.directory) == 0)
        }
    }

    @Test("The cache's test of extended attributes leaves nothing in tmp/, on a nameless file or a named one (no O_TMPFILE), and finds them kept here")
    func attributeProbeLeavesNothing() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let handle = try Syscalls.open(FilePath(directory), flags: O_RDONLY | O_DIRECTORY)
        defer { try? handle.close() }
        for anonymous in [true, false] {
            #expect(CacheStore.attributeProblem(in: handle, path: directory, anonymous: anonymous) == nil)
            #expect(names(in: directory).isEmpty, "anonymous: \(anonymous)")
        }
    }

    @Test("Files made through an open directory stay in it when its path is swapped for a symbolic link: nameless ones, named ones (no O_TMPFILE) and their removal")
    func madeThroughDescriptor() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/tmp", moved = root + "/moved", elsewhere = root + "/elsewhere"
        for path in [directory, elsewhere] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let files = PreparedFiles(
            directory: directory, handle: try Syscalls.open(FilePath(directory), flags: O_RDONLY | O_DIRECTORY), capacity: 0)
        try FileManager.default.moveItem(atPath: directory, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: directory, withDestinationPath: elsewhere)
        let (nameless, _) = try files.file().get()
        #expect(descriptors(in: moved) == 1 && descriptors(in: elsewhere) == 0)
        try nameless.close()
        // Named, as where the file system has no `O_TMPFILE`: its path says `directory`, its
        // name is in the directory that was opened.
        let handle = try Syscalls.open(FilePath(moved), flags: O_RDONLY | O_DIRECTORY)
        defer { try? handle.close() }
        let (named, path) = try TemporaryFiles.create(in: directory, relativeTo: handle).get()
        try named.close()
        #expect(path.hasPrefix(directory + "/"))
        #expect(names(in: moved) == [String(path.dropFirst(directory.count + 1))] && names(in: elsewhere).isEmpty)
        // Removed as made: through the descriptor, whatever the path names now.
        try Data().write(to: URL(fileURLWithPath: elsewhere + "/" + String(path.dropFirst(directory.count + 1))))
        files.remove(path)
        #expect(names(in: moved).isEmpty && names(in: elsewhere).count == 1)
    }

    @Test("A cached download takes a file made ahead: the body lands in it, the cache's tmp stays empty, shutdown closes the rest")
    func cachedDownloadTakesPreparedFile() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.fetcher.cache)
            let files = cache.preparedFiles
            #expect(files.capacity > 0)
            // The first body's file is made on the spot; its take starts the refill.
            #expect(await fixture.fetcher.process(fixture.braze("/media/first.png?bytes=30000")).status == .attached)
            try await TestTiming.wait(atMost: Self.refillWait) { files.count == files.capacity }
            #expect(files.count == files.capacity)
            #expect(files.taken.load(ordering: .relaxed) == 0)

            let second = await fixture.fetcher.process(fixture.braze("/media/second.png?bytes=40000"))
            #expect(second.status == .attached)
            #expect(files.taken.load(ordering: .relaxed) == 1)
            let path = try #require(second.attachments.first?.path)
            #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue == 40_000)
            #expect(fixture.server.stats().requests == 2)
            #expect(names(in: cache.store.temporaryDirectory).isEmpty)

            await fixture.fetcher.shutdown()
            #expect(files.count == 0)
            // The bodies' own descriptors go with the tasks that served them, a moment later.
            try await TestTiming.wait(atMost: .seconds(2 * TestTiming.scale)) { descriptors(in: cache.store.temporaryDirectory) == 0 }
            #expect(descriptors(in: cache.store.temporaryDirectory) == 0)
        }
    }
}
