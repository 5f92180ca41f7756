@testable import AttachmentFetcher
import Crypto
import Foundation
import Logging
import MockCDN
import SystemPackage
import Testing

/// A shared cache directory must not be turned against its users, and its files must be what
/// they claim: planted entries, symbolic links and loose permissions are refused.
@Suite("Cache safety: planted entries, symbolic links, shared directories, lock failures", .timeLimit(.minutes(2)))
struct CacheSafetyTests {
    private static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The entry name (SHA-256 of the fixture's scope and the normalised URL, hex) of `path` on
    /// `fixture`'s server.
    private func key(_ fixture: Fixture, _ path: String) throws -> String {
        let url = try AttachmentURL.parse(fixture.server.url(path)).get()
        return CacheKey(url, scope: fixture.fetcher.configuration.cacheScope).hex
    }

    private func metadataJSON(url: String, mime: String, kind: MediaKind, suffix: String, body: [UInt8], modified: Int64) -> [UInt8] {
        let now = Date()
        let metadata = CacheEntryMetadata(
            size: body.count, modified: modified,
            freshUntil: now.addingTimeInterval(3600), etag: nil, lastModified: nil)
        // The earlier layout's JSON (`<key>.meta`), for a planted entry of that kind.
        guard url != "binary" else { return metadata.encoded() }
        let json: [String: Any] = [
            "url": url, "mime": mime, "kind": kind.rawValue, "fileExtension": suffix, "size": body.count,
            "sha256": Hex.encode(SHA256.hash(data: Data(body))), "storedAt": now.timeIntervalSinceReferenceDate,
            "freshUntil": now.addingTimeInterval(3600).timeIntervalSinceReferenceDate,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: json)) ?? Data())
    }

    @Test("A body planted with metadata under the predictable name is classified, refused, and downloaded for real")
    func plantedEntry() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/planted.jpg?bytes=20000"
            let hex = try key(fixture, path)
            let entries = try #require(fixture.cacheDirectory) + "/entries"
            let html = Array("<!DOCTYPE html><html><body>not an image</body></html>\n".utf8)
            // This layout: the body with its metadata attribute, claiming a JPEG.
            try Data(html).write(to: URL(fileURLWithPath: entries + "/" + hex))
            let file = try FileDescriptor.open(FilePath(entries + "/" + hex), .readOnly)
            let modified = CacheStore.nanoseconds(try file.stat().st_mtim)
            try Syscalls.setAttribute(
                CacheEntryMetadata.attributeName, of: file,
                to: metadataJSON(url: "binary", mime: "image/jpeg", kind: .image, suffix: "jpg", body: html, modified: modified))
            try file.close()
            // The earlier layout too (`<key>.body` + `<key>.meta`), which a cache of that kind served.
            try Data(html).write(to: URL(fileURLWithPath: entries + "/" + hex + ".body"))
            try Data(metadataJSON(url: "", mime: "image/jpeg", kind: .image, suffix: "jpg", body: html, modified: 0))
                .write(to: URL(fileURLWithPath: entries + "/" + hex + ".meta"))

            let outcome = await fixture.fetch(path)
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
            let attached = try #require(outcome.attachments.first?.path)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: attached))) == SyntheticMedia.body(extension: "jpg", size: 20000))
        }
    }

    @Test("A stored validator holding a line break (planted in the attribute) is a damaged entry: dropped, never sent as a header of its own")
    func plantedValidatorWithLineBreak() async throws {
        try await Fixture.with(cached: true) { fixture in
            // Stale at once (max-age=0), with the mock CDN's ETag and Last-Modified: the next
            // payload revalidates it with both.
            let path = "/media/smuggled.jpg?bytes=3000&cache_control=max-age%3D0&reject_header=X-Injected"
            #expect(await fixture.fetch(path).status == .attached)
            let name = try #require(fixture.cacheDirectory) + "/entries/" + (try key(fixture, path))
            let file = try FileDescriptor.open(FilePath(name), .readOnly)
            defer { try? file.close() }
            let stored = try #require(try Syscalls.attribute(CacheEntryMetadata.attributeName, of: file))
            for (etag, lastModified) in [("\"v1\"\r\nX-Injected: 1", nil), (nil, "Tue, 24 Nov 2026 05:00:00 GMT\nX-Injected: 1"), ("\"v\u{0}1\"", nil)] {
                var metadata = try #require(CacheEntryMetadata.decode(stored))
                if let etag { metadata.etag = etag }
                if let lastModified { metadata.lastModified = lastModified }
                #expect(CacheEntryMetadata.decode(metadata.encoded()) == nil, "\(metadata)")
                try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: metadata.encoded())
                let requests = fixture.server.stats().requests
                let outcome = await fixture.fetch(path)
                #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
                #expect(fixture.server.stats().requests == requests + 1)
            }
        }
    }

    @Test("A planted entry larger than any body the cache keeps is dropped unread, not hashed for seconds past the payload's deadline")
    func plantedHugeEntry() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/huge.jpg?bytes=20000"
            let name = try #require(fixture.cacheDirectory) + "/entries/" + (try key(fixture, path))
            // 16 GiB, sparse: a JPEG's first bytes, then nothing; metadata claiming exactly that,
            // with a modification time that differs. Reading it whole (about 40 s here) would
            // take the payload far past its 10 s.
            let head = SyntheticMedia.body(extension: "jpg", size: 4096)
            try Data(head).write(to: URL(fileURLWithPath: name))
            let file = try FileDescriptor.open(FilePath(name), .readWrite)
            let size = 16 << 30
            #expect(ftruncate(file.rawValue, off_t(size)) == 0)
            let metadata = CacheEntryMetadata(
                size: size, modified: 0, freshUntil: Date().addingTimeInterval(3600),
                etag: nil, lastModified: nil)
            try Syscalls.setAttribute(CacheEntryMetadata.attributeName, of: file, to: metadata.encoded())
            try file.close()

            let outcome = await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(10) * TestTiming.scale)
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(outcome.attachments.first?.bytes == 20000)
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("A body fetched under wider rules is served only to fetchers with the same policy, proxy, resolutions, CAs, credentials and redirects")
    func policyScopedEntries() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/internal.png?bytes=3000"
            #expect(await fixture.fetch(path).status == .attached)
            #expect(fixture.server.stats().requests == 1)
            // The default policy refuses loopback: no hit from the wider policy's entry.
            let strict = try fixture.anotherFetcher { $0.addressPolicy = .init() }
            let refused = await strict.process(fixture.braze(path))
            #expect(refused.reason == .addressRefused, "\(refused.reason?.code ?? "attached"): \(refused.detail ?? "")")
            await strict.shutdown()
            // Another wider policy downloads for itself; the same policy again hits.
            let loopback = try #require(IPNetwork("127.0.0.0/8"))
            let listed = try fixture.anotherFetcher { $0.addressPolicy = .init(allowedNetworks: [loopback]) }
            #expect(await listed.process(fixture.braze(path)).status == .attached)
            await listed.shutdown()
            #expect(fixture.server.stats().requests == 2)
            let same = try fixture.anotherFetcher()
            #expect(await same.process(fixture.braze(path)).status == .attached)
            await same.shutdown()
            #expect(fixture.server.stats().requests == 2)
            // A body reached through a redirect is no hit for a fetcher that follows none, nor
            // one that allows credentials for one that refuses them.
            let redirected = "/media/hop.png?bytes=3000&redirects=1"
            #expect(await fixture.fetch(redirected).status == .attached)
            let noRedirects = try fixture.anotherFetcher { $0.maximumRedirects = 0 }
            let stopped = await noRedirects.process(fixture.braze(redirected))
            await noRedirects.shutdown()
            #expect(stopped.reason == .httpStatus, "\(stopped.reason?.code ?? "attached"): \(stopped.detail ?? "")")
            let credentials = try fixture.anotherFetcher { $0.allowsCredentialsInURLs = true }
            #expect(await credentials.process(fixture.braze(path)).status == .attached)
            await credentials.shutdown()
            #expect(fixture.server.stats().requests == 6)  // 2, the redirect and its target, the refused hop, and one for credentials
        }
    }

    @Test("cache commands on a --cache-dir that holds no cache create nothing and remove nothing from its attachments/")
    func notACache() async throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let manager = FileManager.default
        let project = home + "/project"
        try manager.createDirectory(atPath: project + "/attachments", withIntermediateDirectories: true)
        try Data("important".utf8).write(to: URL(fileURLWithPath: project + "/attachments/contract.pdf"))
        let stats = try await CommandRunner.run("fetch-attachment", ["cache", "stats", "--cache-dir", project])
        #expect(stats.status == 0 && stats.stdout.contains("no cache at \(project)"), "\(stats.stdout)\(stats.stderr)")
        for (command, shape) in [
            ("prune", #"{"removed_attachment_bytes":0,"removed_attachments":0,"removed_bytes":0,"removed_entries":0}"#),
            ("clear", #"{"removed_attachment_bytes":0,"removed_attachments":0,"removed_bytes":0,"removed_entries":0}"#),
        ] {
            let result = try await CommandRunner.run("fetch-attachment", ["cache", command, "--cache-dir", project])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("no cache at \(project): nothing removed"), "\(result.stdout)")
            let json = try await CommandRunner.run("fetch-attachment", ["cache", command, "--cache-dir", project, "--json"])
            #expect(json.stdout == shape + "\n", "\(json.stdout)")
        }
        #expect(manager.fileExists(atPath: project + "/attachments/contract.pdf"))
        #expect(try manager.contentsOfDirectory(atPath: project) == ["attachments"])
    }

    @Test("cache clear and prune remove only what the fetcher made: a directory with a file named lock, or an entries/ alone, is no cache; other files in a cache's attachments/ stay")
    func clearRemovesOnlyOurFiles() async throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let manager = FileManager.default
        func write(_ path: String) throws {
            try manager.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        }
        // Somebody's directories, given as --cache-dir by mistake.
        let lockOnly = home + "/lock-only", entriesOnly = home + "/entries-only"
        try write(lockOnly + "/lock")
        try manager.createDirectory(atPath: entriesOnly + "/entries", withIntermediateDirectories: true)
        for directory in [lockOnly, entriesOnly] {
            try write(directory + "/attachments/notes.txt")
            try write(directory + "/attachments/holiday-0a1b2c3d4e5f6.jpg")
            for command in ["clear", "prune"] {
                let run = try await CommandRunner.run("fetch-attachment", ["cache", command, "--cache-dir", directory])
                #expect(run.status == 0 && run.stdout.contains("nothing removed"), "\(command) \(directory): \(run.stdout) \(run.stderr)")
            }
            #expect(try manager.contentsOfDirectory(atPath: directory + "/attachments").sorted() == ["holiday-0a1b2c3d4e5f6.jpg", "notes.txt"])
        }
        // A real cache: of its attachments/, only the files named as the fetcher names them go.
        let cache = home + "/cache"
        let store = try CacheStore(configuration: .init(directory: cache))
        _ = store
        for name in ["notes.txt", "IMG_2041.jpg", "photo-2023.jpg", "photo-1718000000000.jpg", "x-0a1b2c3d4e5f6.jpg", "attachment-1z2y3x4w5v6u7.gif"] {
            try write(cache + "/attachments/" + name)
        }
        let stats = try await CommandRunner.run("fetch-attachment", ["cache", "stats", "--cache-dir", cache])
        #expect(stats.stdout.contains("attachments: 2 files"), "\(stats.stdout)")
        let cleared = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache])
        #expect(cleared.status == 0 && cleared.stdout.contains("; 2 attachment files, "), "\(cleared.stdout) \(cleared.stderr)")
        #expect(try manager.contentsOfDirectory(atPath: cache + "/attachments").sorted() == ["IMG_2041.jpg", "notes.txt", "photo-1718000000000.jpg", "photo-2023.jpg"])
    }

    @Test("The cache's scope names a certificates file by its absolute path and what it holds: one name in two directories, or a file replaced, is two scopes")
    func certificatesScope() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/ca.pem"
        try Data("first".utf8).write(to: URL(fileURLWithPath: path))
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: root + "/out")
        configuration.trustedCertificatesFile = path
        let first = configuration.cacheScope
        #expect(first.contains(path) && first.contains("sha256"))
        try Data("second".utf8).write(to: URL(fileURLWithPath: path))
        #expect(configuration.cacheScope != first)
        var other = configuration
        other.trustedCertificatesFile = root + "/elsewhere/ca.pem"
        #expect(other.cacheScope != configuration.cacheScope)
    }

    @Test("The output directory may not be inside the cache's entries/ or tmp/ (its attachments/ is the command line's default)")
    func outputDirectoryOutsideCacheFiles() {
        func validates(_ output: String) -> Bool {
            var configuration = PushAttachmentFetcher.Configuration(outputDirectory: output)
            configuration.cache = .init(directory: "/srv/cache")
            return (try? configuration.validate()) != nil
        }
        #expect(!validates("/srv/cache/entries") && !validates("/srv/cache/entries/x") && !validates("/srv/cache/tmp"))
        #expect(validates("/srv/cache/attachments") && validates("/srv/cache/entries2") && validates("/srv/out"))
    }

    @Test("Nor through a symbolic link: an output directory that links to the cache's entries/ (or the cache itself, or a directory inside) is refused, where cache clear would remove the attachments")
    func outputDirectoryLinkedIntoCache() throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let manager = FileManager.default
        try manager.createDirectory(atPath: home + "/cache/entries/inner", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: home + "/to-entries", withDestinationPath: home + "/cache/entries")
        try manager.createSymbolicLink(atPath: home + "/to-cache", withDestinationPath: home + "/cache")
        func validates(_ output: String, cache: String = home + "/cache") -> Bool {
            var configuration = PushAttachmentFetcher.Configuration(outputDirectory: output)
            configuration.cache = .init(directory: cache)
            return (try? configuration.validate()) != nil
        }
        #expect(!validates(home + "/to-entries"))
        #expect(!validates(home + "/to-entries/inner/not-yet"))
        #expect(!validates(home + "/to-cache"))
        #expect(!validates(home + "/cache/entries", cache: home + "/to-cache"))
        #expect(validates(home + "/to-cache/attachments") && validates(home + "/out"))
    }

    @Test("Every name the fetcher gives a file is recognised as its own: tags of 13 digits")
    func ownNamesRecognised() {
        for _ in 0..<10_000 {
            let tag = FileNameTag.next()
            #expect(tag.count == FileNameTag.length)
            // A tag of digits alone (about one in six million) is left to its owner: taken for a timestamp.
            let expected = tag.contains { $0.isLetter }
            #expect(AttachmentFiles.isAttachmentName("some_stem-\(tag).jpg") == expected, "\(tag)")
            #expect(AttachmentFiles.isAttachmentName("\(tag).jpg") == false)
        }
        #expect(AttachmentFiles.isAttachmentName(TemporaryFiles.path(in: "/x").split(separator: "/").last.map(String.init) ?? ""))
        #expect(!AttachmentFiles.isAttachmentName("a-0a1b2c3d4e5f6.txt"))
    }

    @Test("cache clear and stats never follow a symbolic link: an attachments/ that links elsewhere is left alone, and only the regular files in it are removed or counted, each inode once")
    func attachmentsDirectoryLinks() async throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let manager = FileManager.default
        let cache = home + "/cache", victim = home + "/victim"
        try manager.createDirectory(atPath: victim + "/sub", withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim + "/keep.txt"))
        try Data("nested".utf8).write(to: URL(fileURLWithPath: victim + "/sub/nested.txt"))
        try manager.createDirectory(atPath: cache, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.createDirectory(atPath: cache + "/entries", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        _ = manager.createFile(atPath: cache + "/lock", contents: nil)
        try manager.createSymbolicLink(atPath: cache + "/attachments", withDestinationPath: victim)

        let refused = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache])
        #expect(refused.status == 1)
        // With --json, what was done is JSON too.
        let refusedJSON = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache, "--json"])
        #expect(refusedJSON.status == 1 && refusedJSON.stdout == #"{"removed_bytes":0,"removed_entries":0}"# + "\n", "\(refusedJSON.stdout)")
        #expect(refused.stderr.contains("\(cache)/attachments is a symbolic link, not a directory: left as it is"), "\(refused.stderr)")
        #expect(manager.fileExists(atPath: victim + "/keep.txt") && manager.fileExists(atPath: victim + "/sub/nested.txt"))
        let stats = try await CommandRunner.run("fetch-attachment", ["cache", "stats", "--cache-dir", cache, "--json"])
        #expect(stats.status == 1)
        #expect(manager.fileExists(atPath: victim + "/keep.txt"))
        // Nor does a fetch write through it.
        let fetch = try await CommandRunner.run(
            "fetch-attachment", ["--cache-dir", cache, "-"], stdin: Data(#"{"aps":{"alert":"B","mutable-content":1},"ab":{}}"#.utf8))
        #expect(fetch.status == 64)
        #expect(fetch.stderr.contains("\(cache)/attachments is a symbolic link, not the cache's output directory"), "\(fetch.stderr)")

        // A real directory: its regular files go (two links of one file count its bytes once);
        // a link to another file and a directory in it stay.
        try manager.removeItem(atPath: cache + "/attachments")
        let attachments = cache + "/attachments"
        try manager.createDirectory(atPath: attachments + "/kept-dir", withIntermediateDirectories: true)
        try Data(repeating: 7, count: 3000).write(to: URL(fileURLWithPath: attachments + "/a-0a1b2c3d4e5f6.jpg"))
        try manager.linkItem(atPath: attachments + "/a-0a1b2c3d4e5f6.jpg", toPath: attachments + "/b-0a1b2c3d4e5f6.jpg")
        try manager.createSymbolicLink(atPath: attachments + "/link.txt", withDestinationPath: victim + "/keep.txt")
        let counted = try await CommandRunner.run("fetch-attachment", ["cache", "stats", "--cache-dir", cache, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(counted.stdout.utf8)) as? [String: Any])
        let files = try #require(object["attachments"] as? [String: Any])
        #expect(files["files"] as? Int == 2 && files["bytes"] as? Int == 3000, "\(counted.stdout)")
        // A relative --cache-dir: the cache and its attachments/ are both named absolute.
        let parent = (cache as NSString).deletingLastPathComponent
        let relative = try await CommandRunner.run(
            "fetch-attachment", ["cache", "stats", "--cache-dir", "./" + (cache as NSString).lastPathComponent, "--json"], workingDirectory: parent)
        let relativeObject = try #require(try JSONSerialization.jsonObject(with: Data(relative.stdout.utf8)) as? [String: Any])
        let resolved = FilePath(cache).lexicallyNormalized().string
        #expect(relativeObject["directory"] as? String == resolved, "\(relative.stdout)")
        #expect((relativeObject["attachments"] as? [String: Any])?["directory"] as? String == resolved + "/attachments", "\(relative.stdout)")
        // prune takes only a file that is its body's one link (no entry holds it any more), and
        // not one just made: a fetch of a no-store body, or without the cache, may be reading it.
        try Data(repeating: 8, count: 500).write(to: URL(fileURLWithPath: attachments + "/alone-0a1b2c3d4e5f6.jpg"))
        let pruned = try await CommandRunner.run("fetch-attachment", ["cache", "prune", "--cache-dir", cache])
        #expect(pruned.stdout.contains("; 0 attachment files no entry holds, 0 bytes"), "\(pruned.stdout) \(pruned.stderr)")
        let aged = try AttachmentCache.removeOutputFiles(in: attachments, unlinkedOnly: true, minimumAge: .zero)
        #expect(aged.files == 1 && aged.bytes == 500, "\(aged)")
        #expect(try manager.contentsOfDirectory(atPath: attachments).sorted() == ["a-0a1b2c3d4e5f6.jpg", "b-0a1b2c3d4e5f6.jpg", "kept-dir", "link.txt"])
        let cleared = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(cleared.stdout.contains("; 2 attachment files, "), "\(cleared.stdout)")
        #expect(try manager.contentsOfDirectory(atPath: attachments).sorted() == ["kept-dir", "link.txt"])
        #expect(manager.fileExists(atPath: victim + "/keep.txt"))

        // The bytes freed: a file's once its last link is gone, whether both links were here or one
        // is elsewhere (an entry's).
        try Data(repeating: 1, count: 700).write(to: URL(fileURLWithPath: attachments + "/x-0a1b2c3d4e5f6.jpg"))
        try manager.linkItem(atPath: attachments + "/x-0a1b2c3d4e5f6.jpg", toPath: attachments + "/x2-0a1b2c3d4e5f6.jpg")
        try Data(repeating: 2, count: 90).write(to: URL(fileURLWithPath: attachments + "/y-0a1b2c3d4e5f6.jpg"))
        try Data(repeating: 3, count: 5000).write(to: URL(fileURLWithPath: home + "/entry"))
        try manager.linkItem(atPath: home + "/entry", toPath: attachments + "/z-0a1b2c3d4e5f6.jpg")
        // A minimum age holds for every file, linked elsewhere or not: files just handed out stay.
        let young = try AttachmentCache.removeOutputFiles(in: attachments, minimumAge: .seconds(3600))
        #expect(young.files == 0, "\(young)")
        let freed = try AttachmentCache.removeOutputFiles(in: attachments)
        #expect(freed.files == 4 && freed.bytes == 790, "\(freed)")
    }

    @Test("A body that is a symbolic link is never followed: removed, and the URL downloaded")
    func symlinkBody() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/linked.jpg?bytes=20000"
            let hex = try key(fixture, path)
            let cache = try #require(fixture.cacheDirectory)
            let entries = cache + "/entries"
            // A private file with a valid JPEG, which the link would expose.
            let secret = cache + "/../secret.jpg"
            let bytes = SyntheticMedia.body(extension: "jpg", size: 5000)
            try Data(bytes).write(to: URL(fileURLWithPath: secret))
            chmod(secret, 0o600)
            try FileManager.default.createSymbolicLink(atPath: entries + "/" + hex, withDestinationPath: secret)
            try FileManager.default.createSymbolicLink(atPath: entries + "/" + hex + ".body", withDestinationPath: secret)
            try Data(metadataJSON(url: "", mime: "image/jpeg", kind: .image, suffix: "jpg", body: bytes, modified: 0))
                .write(to: URL(fileURLWithPath: entries + "/" + hex + ".meta"))

            let outcome = await fixture.fetch(path)
            #expect(outcome.status == .attached)
            #expect(fixture.server.stats().requests == 1)
            let attached = try #require(outcome.attachments.first?.path)
            let attributes = try FileManager.default.attributesOfItem(atPath: attached)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: attached))) == SyntheticMedia.body(extension: "jpg", size: 20000))
        }
    }

    @Test("A lock file that is a symbolic link creates nothing where it points, and the download goes on")
    func symlinkLock() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cache = root + "/cache"
        let path = "/media/l.png?bytes=3000"
        let hex = CacheKey(try AttachmentURL.parse(server.url(path)).get(), scope: "private-networks").hex
        try FileManager.default.createDirectory(atPath: cache + "/locks", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cache + "/lock", withDestinationPath: root + "/made-through-lock")
        try FileManager.default.createSymbolicLink(
            atPath: cache + "/locks/\(hex).lock", withDestinationPath: root + "/made-through-key-lock")
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: root + "/out", timeout: .seconds(10) * TestTiming.scale)
        configuration.cache = .init(directory: cache)
        configuration.addressPolicy.allowsPrivateNetworks = true
        let fetcher = try PushAttachmentFetcher(configuration: configuration)
        let outcome = await fetcher.process(Payloads.braze(url: server.url(path)))
        await fetcher.shutdown()
        try await server.shutdown()
        #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
        #expect(!FileManager.default.fileExists(atPath: root + "/made-through-lock"))
        #expect(!FileManager.default.fileExists(atPath: root + "/made-through-key-lock"))
    }

    @Test("A lock file that cannot be opened is no wait: the download goes on at once")
    func unopenableLock() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cache = root + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        // A directory where the lock file belongs; and, for the earlier layout, a file where its
        // directory of lock files belongs.
        try FileManager.default.createDirectory(atPath: cache + "/lock", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: cache + "/locks"))
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: root + "/out", timeout: .seconds(10) * TestTiming.scale)
        configuration.cache = .init(directory: cache)
        configuration.addressPolicy.allowsPrivateNetworks = true
        let fetcher = try PushAttachmentFetcher(configuration: configuration)
        #expect(fetcher.cacheLockProblem?.contains(cache + "/lock") == true, "\(fetcher.cacheLockProblem ?? "")")
        let outcome = await fetcher.process(Payloads.braze(url: server.url("/media/u.png?bytes=3000")), timeout: .seconds(10) * TestTiming.scale)
        await fetcher.shutdown()
        // The command line says so: each process downloads alone.
        let command = try await CommandRunner.run(
            "fetch-attachment", ["--cache-dir", cache, "--output-dir", root + "/out", "--allow-private-networks"],
            stdin: Payloads.braze(url: server.url("/media/v.png?bytes=3000")))
        try await server.shutdown()
        #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
        #expect(command.status == 0 && command.stderr.unwrapped.contains("downloads are not shared with other processes using this cache"), "\(command.stderr)")
    }

    @Test("When another process lets the URL's lock go with nothing stored, the waiting one downloads without the lock, so that processes waiting with it do not go one after another")
    func heldThenNothingStored() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/unkept.png?bytes=3000&delay_ms=\(1_500 * TestTiming.scale)"
            let other = try CacheStore(configuration: try #require(fixture.fetcher.configuration.cache))
            let key = CacheKey(try AttachmentURL.parse(fixture.server.url(path)).get(), scope: fixture.fetcher.configuration.cacheScope)
            let held = try #require(try other.lock(key).get())
            let waiting = Task { await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(20) * TestTiming.scale) }
            // The fetcher polls the lock (a busy machine may start it late); the other process
            // then lets it go, having stored nothing.
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { fixture.fetcher.cache?.waitsForAnotherProcess(key) == true }
            held.unlock()
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { fixture.server.stats().requests > 0 }
            // While the origin takes its time, the lock is free for the next process.
            let next = other.tryLock(key)
            #expect(next != nil)
            next?.unlock()
            let outcome = await waiting.value
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("A payload whose deadline passes while another process holds its URL's download says so")
    func heldByAnotherProcess() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/held.png?bytes=3000"
            // A second store on the same directory holds the key's lock, as another process would
            // (the locks belong to an open file, not to the process).
            let other = try CacheStore(configuration: try #require(fixture.fetcher.configuration.cache))
            let url = try AttachmentURL.parse(fixture.server.url(path)).get()
            let held = try #require(try other.lock(CacheKey(url, scope: fixture.fetcher.configuration.cacheScope)).get())
            // Long enough for the leader's first try of the lock, which in a run of the whole suite
            // can start seconds late on a busy cooperative pool.
            let outcome = await fixture.fetcher.process(fixture.braze(path), timeout: .seconds(8) * TestTiming.scale)
            held.unlock()
            #expect(outcome.reason == .deadline, "\(outcome.reason?.code ?? "attached")")
            #expect(outcome.detail == "the deadline passed while another process held this URL's download", "\(outcome.detail ?? "")")
            #expect(fixture.server.stats().requests == 0)
        }
    }


    @Test("A payload whose deadline passes before its download starts, with no other process on the cache, does not blame one")
    func deadlineBeforeTheLock() async throws {
        try await Fixture.with(cached: true) { fixture in
            // Deadlines that pass before the leader's first try of the lock, or just after.
            let outcomes = await withTaskGroup(of: Outcome.self) { group in
                for index in 0..<40 {
                    group.addTask { await fixture.fetcher.process(fixture.braze("/media/early\(index).png?bytes=3000"), timeout: .microseconds(index * 50)) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for outcome in outcomes where outcome.status == .original {
                #expect(outcome.reason == .deadline, "\(outcome.reason?.code ?? "")")
                #expect(!(outcome.detail ?? "").contains("another process"), "\(outcome.detail ?? "")")
            }
        }
    }
    @Test("A lock that fails for a reason other than contention is a storage failure at once, not a wait")
    func failingLock() async throws {
        try await Fixture.with(cached: true) { fixture in
            let store = try #require(fixture.fetcher.cache?.store)
            let lockFile = try #require(store.lockFile)
            // The lock file's descriptor now refers to a read-only open file: a write lock on it
            // fails with EBADF, as no contention does.
            let readOnly = open(try #require(fixture.cacheDirectory) + "/entries", O_RDONLY | O_DIRECTORY)
            #expect(readOnly >= 0)
            #expect(dup2(readOnly, lockFile.rawValue) == lockFile.rawValue)
            close(readOnly)
            // A lock failure taken for contention would poll until the deadline and end as
            // `deadline`: the reason tells the two apart whatever the timing. The bound on the
            // time is loose: in a run of the whole suite the leader's task may start seconds late
            // on a cooperative pool busy with the other suites (4.2–4.6 s were seen).
            let start = ContinuousClock.now
            let outcome = await fixture.fetcher.process(fixture.braze("/media/unlockable.png?bytes=3000"), timeout: .seconds(15) * TestTiming.scale)
            #expect(outcome.reason == .storage, "\(outcome.reason?.code ?? "attached"): \(outcome.detail ?? "")")
            #expect(outcome.detail?.contains("cannot lock") == true)
            #expect(ContinuousClock.now - start < .seconds(12) * TestTiming.scale)
            #expect(fixture.server.stats().requests == 0)
        }
    }

    @Test("A cache directory, entries/ or tmp/ that is a symbolic link is refused, and the error says so")
    func symbolicLinkDirectories() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let elsewhere = root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        for (cache, link) in [(root + "/linked", root + "/linked"), (root + "/real", root + "/real/entries"), (root + "/real2", root + "/real2/tmp")] {
            try FileManager.default.createDirectory(atPath: cache == link ? root : cache, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
            var configuration = PushAttachmentFetcher.Configuration(outputDirectory: root + "/out")
            configuration.cache = .init(directory: cache)
            do {
                _ = try PushAttachmentFetcher(configuration: configuration)
                Issue.record("\(link) was followed")
            } catch {
                #expect("\(error)".contains("is a symbolic link, which the cache does not follow"), "\(error)")
                #expect(error.code == .cacheDirectoryUnsafe)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// Whether this process may run the command-line tool as another user (root, with setpriv).
    static func canRunAsNobody() async -> Bool {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let program = CommandRunner.fetchAttachmentPath
        let result = try? await CommandRunner.run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", program, "--version"], timeout: .seconds(30))
        return result?.status == 0
    }

    @Test(
        "Another user's processes on a shared cache serve its entries and download what is missing into their output directory, saying so",
        .enabled("not root, or setpriv cannot run the tool as another user") { await CacheSafetyTests.canRunAsNobody() })
    func anotherUsersCache() async throws {
        try await Fixture.with(cached: true) { fixture in
            let program = CommandRunner.fetchAttachmentPath
            let root = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let cache = root + "/cache", output = root + "/theirs"
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            chmod(root, 0o755)
            chmod(output, 0o777)
            let stored = Payloads.braze(url: fixture.server.url("/media/stored.jpg?bytes=3000"))
            let missing = Payloads.braze(url: fixture.server.url("/media/missing.jpg?bytes=4000"))
            // This user's run makes the cache and stores one entry.
            let own = try await CommandRunner.run(
                "fetch-attachment", ["--cache-dir", cache, "--output-dir", root + "/mine", "--allow-private-networks"], stdin: stored)
            #expect(own.status == 0, "\(own.stderr)")
            for (payload, name) in [(stored, "stored"), (missing, "missing")] {
                let theirs = try await CommandRunner.run(
                    "/usr/bin/setpriv",
                    ["--reuid=65534", "--regid=65534", "--clear-groups", program, "--cache-dir", cache, "--allow-shared-cache-dir",
                     "--output-dir", output, "--allow-private-networks"],
                    stdin: payload)
                #expect(theirs.status == 0, "\(name): \(theirs.stdout)\(theirs.stderr)")
                #expect(theirs.stderr.unwrapped.contains("this cache's entries are served, and no download is added to them"), "\(theirs.stderr)")
            }
            #expect(fixture.server.stats().requestsPerPath["/media/stored.jpg"] == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/entries").count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: output).count == 2)
        }
    }

    @Test("A cache directory other users may write, or another user owns, is refused unless allowed")
    func sharedDirectory() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cache = root + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: root + "/out", timeout: .seconds(10) * TestTiming.scale)
        configuration.cache = .init(directory: cache)

        // Refused as unsafe, a code of its own: not a directory that cannot be used.
        let unsafe = AttachmentFetcherError.Code.cacheDirectoryUnsafe
        chmod(cache, 0o777)
        #expect { _ = try PushAttachmentFetcher(configuration: configuration) } throws: { ($0 as? AttachmentFetcherError)?.code == unsafe }
        chmod(cache, 0o775)
        #expect { _ = try PushAttachmentFetcher(configuration: configuration) } throws: { ($0 as? AttachmentFetcherError)?.code == unsafe }
        chmod(cache, 0o755)
        await (try PushAttachmentFetcher(configuration: configuration)).shutdown()

        // Another user's directory (as root, hand it to an unused uid).
        if geteuid() == 0, chown(cache, 54_321, 54_321) == 0 {
            #expect { _ = try PushAttachmentFetcher(configuration: configuration) } throws: { ($0 as? AttachmentFetcherError)?.code == unsafe }
        }
        chmod(cache, 0o777)
        configuration.cache?.allowsSharedDirectory = true
        await (try PushAttachmentFetcher(configuration: configuration)).shutdown()
        // What the cache makes inside is never writable by others.
        let entries = try FileManager.default.attributesOfItem(atPath: cache + "/entries")
        #expect(((entries[.posixPermissions] as? Int) ?? 0o777) & 0o022 == 0)
    }

    @Test("Entry metadata reads back as written, is small, and a damaged attribute reads as none")
    func metadataEncoding() throws {
        var metadata = CacheEntryMetadata(
            size: 123_456, modified: 1_700_000_000_123_456_789, freshUntil: Date(timeIntervalSince1970: 1_800_000_000.5),
            etag: nil, lastModified: nil)
        #expect(metadata.encoded().count == 29)
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        // The format that kept a 32-byte digest after the freshness still reads, the digest
        // skipped; a version of neither kind does not.
        var earlier = metadata.encoded()
        earlier[0] = 1
        earlier.insert(contentsOf: Array(SHA256.hash(data: Data("x".utf8))), at: 25)
        #expect(CacheEntryMetadata.decode(earlier) == metadata)
        #expect(CacheEntryMetadata.decode(Array(earlier.dropLast())) == nil)
        earlier[0] = 3
        #expect(CacheEntryMetadata.decode(earlier) == nil)
        metadata.etag = "\"v1\""
        metadata.lastModified = "Tue, 24 Nov 2026 04:00:00 GMT"
        let bytes = metadata.encoded()
        #expect(CacheEntryMetadata.decode(bytes) == metadata)
        #expect(CacheEntryMetadata.decode(Array(bytes.dropLast())) == nil)
        #expect(CacheEntryMetadata.decode(Array("{\"url\":\"\"}".utf8)) == nil)
        // A slow download's time follows a flags byte, with the scheme flag or without it; a
        // fast one's is not kept, so the attribute stays as earlier releases wrote it.
        var slow = metadata
        slow.downloadTime = .milliseconds(5_300)
        #expect(slow.encoded().count == bytes.count + 5)
        #expect(CacheEntryMetadata.decode(slow.encoded()) == slow)
        slow.changedScheme = true
        #expect(CacheEntryMetadata.decode(slow.encoded()) == slow)
        #expect(CacheEntryMetadata.decode(Array(slow.encoded().dropLast())) == nil)
        // Flag 4: the suggested file name has no image extension; 8: a redirect set a cookie;
        // an unknown flag is damage.
        #expect(CacheEntryMetadata.decode(bytes + [4])?.unsuffixedName == true)
        #expect(CacheEntryMetadata.decode(bytes + [8])?.redirectSetCookie == true)
        #expect(CacheEntryMetadata.decode(bytes + [16]) == nil)
        // 64: CleverTap's table of MIME types names no file.
        #expect(CacheEntryMetadata.decode(bytes + [64])?.cleverTapUntypedMIME == true)
        // 128: the origin's file is cut short.
        #expect(CacheEntryMetadata.decode(bytes + [128])?.cutAtOrigin == true)
        var fast = metadata
        fast.downloadTime = .milliseconds(999)
        #expect(fast.encoded() == bytes)
    }

    @Test("Cached bodies are read-only, so no payload's file can change another's")
    func readOnlyBodies() async throws {
        try await Fixture.with(cached: true) { fixture in
            let outcome = await fixture.fetch("/media/ro.gif?bytes=4000")
            let attached = try #require(outcome.attachments.first?.path)
            let permissions = try FileManager.default.attributesOfItem(atPath: attached)[.posixPermissions] as? Int
            #expect(permissions == 0o444)
        }
    }

    @Test("Entries checked in a process are remembered up to a bound")
    func verifiedMapIsBounded() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try CacheStore(configuration: .init(directory: root + "/cache"), verifiedCapacity: 100)
        let count = 350
        let media = MediaType(mime: "image/gif", kind: .image, fileExtension: "gif")
        for index in 0..<count {
            let url = try AttachmentURL.parse("http://127.0.0.1/\(index).gif").get()
            let path = TemporaryFiles.path(in: store.temporaryDirectory)
            // Written plainly (Foundation's `Data.write` syncs every file).
            let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate], permissions: .ownerReadWrite)
            _ = try file.closeAfter { try file.writeAll(Array("GIF89a\(index)".utf8)) }
            let body = DownloadedFile(path: path, media: media, byteCount: 6 + "\(index)".utf8.count, effectiveURL: url.string, headerBlock: "")
            let committed = try store.commit(body, key: CacheKey(url), freshness: HTTPFreshness(headers: [])).get()
            try committed.descriptor.close()
        }
        let remembered = store.state.withLock { $0.verified.count }
        #expect(remembered <= 100)
        #expect(store.state.withLock { $0.index.count } == count)
        // `cache clear` leaves the layout and the lock file, and nothing else.
        #expect(store.clear().removed == count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/cache/entries").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/cache/tmp").isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: root + "/cache")) == ["entries", "tmp", "lock"])
    }

    @Test("clear counts the entries it removed: a directory planted under an entry's name is neither removed nor counted")
    func clearCountsWhatWent() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try CacheStore(configuration: .init(directory: root + "/cache"))
        let url = try AttachmentURL.parse("http://127.0.0.1/x.gif").get()
        let path = TemporaryFiles.path(in: store.temporaryDirectory)
        let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate], permissions: .ownerReadWrite)
        _ = try file.closeAfter { try file.writeAll(Array("GIF89a".utf8)) }
        let body = DownloadedFile(
            path: path, media: MediaType(mime: "image/gif", kind: .image, fileExtension: "gif"), byteCount: 6,
            effectiveURL: url.string, headerBlock: "")
        try store.commit(body, key: CacheKey(url), freshness: HTTPFreshness(headers: [])).get().descriptor.close()
        let planted = root + "/cache/entries/" + String(repeating: "ab", count: 32)
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: planted + "/inside"))
        #expect(store.clear().removed == 1)
        #expect(FileManager.default.fileExists(atPath: planted + "/inside"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/cache/entries") == [String(repeating: "ab", count: 32)])
    }

    @Test("Eviction under a small budget takes no entry from its waiting payloads")
    func evictionKeepsWaiters() async throws {
        try await Fixture.with(cached: true, configure: { $0.cache?.maximumBytes = 150_000 }) { fixture in
            var payloads: [Data] = []
            for url in 0..<24 {
                for _ in 0..<8 { payloads.append(fixture.braze("/media/e\(url).jpg?bytes=100000&delay_ms=\(50 + url * 10)")) }
            }
            let outcomes = await withTaskGroup { group in
                for payload in payloads { group.addTask { await fixture.fetcher.process(payload) } }
                return await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
            let lost = outcomes.filter { $0.status != .attached }
            #expect(lost.isEmpty, "\(lost.first?.detail ?? "")")
            #expect(fixture.filesLeft().count == payloads.count)
            for outcome in outcomes.prefix(20) {
                let path = try #require(outcome.attachments.first?.path)
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 100_000)
            }
        }
    }

    @Test("A cache whose tmp/ cannot take a body (gone, full) loses no payload: the body goes to the output directory, is not kept, and the fetcher says so once")
    func unwritableTemporaryDirectory() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.fetcher.configuration.cache).directory
            // More payloads than files made ahead, so that bodies need new files in tmp/, which is
            // now a regular file: every creation there fails, as on a full disk or a removed cache.
            try FileManager.default.removeItem(atPath: cache + "/tmp")
            try Data().write(to: URL(fileURLWithPath: cache + "/tmp"))
            let outcomes = await withTaskGroup(of: Outcome.self) { group in
                for index in 0..<(FileDescriptorBudget.preparedFiles(forConcurrency: 1024) + 40) {
                    group.addTask { await fixture.fetch("/media/unkept-\(index).jpg?bytes=3000") }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failed = outcomes.filter { $0.status != .attached }
            #expect(failed.count == 0, "\(failed.count) not attached, e.g. \(failed.first?.reason?.code ?? ""): \(failed.first?.detail ?? "")")
            for outcome in outcomes {
                let path = try #require(outcome.attachments.first?.path)
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 3000)
            }
            #expect(fixture.fetcher.cacheWriteProblem?.contains("\(cache)/tmp") == true, "\(fixture.fetcher.cacheWriteProblem ?? "nil")")
            // Nothing but attachments in the output directory, once the last user of each
            // unkept body (the download it came from) has let it go.
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { fixture.filesLeft().count == outcomes.count }
            #expect(fixture.filesLeft().count == outcomes.count, "\(fixture.filesLeft().filter { $0.hasPrefix(".") })")
        }
    }

    @Test("A body the cache's tmp/ cannot take streams into a nameless file in the output directory: a kill in the middle leaves nothing named there")
    func fallbackBodyIsNameless() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.fetcher.configuration.cache).directory
            try FileManager.default.removeItem(atPath: cache + "/tmp")
            try Data().write(to: URL(fileURLWithPath: cache + "/tmp"))
            // More payloads than files made ahead: the last ones' bodies need a file in tmp/,
            // fail there, and are downloaded again into the output directory, slowly.
            let count = FileDescriptorBudget.preparedFiles(forConcurrency: 1024) + 4
            async let outcomes = withTaskGroup(of: Outcome.self) { group in
                for index in 0..<count {
                    group.addTask { await fixture.fetch("/media/slow-\(index).jpg?bytes=120000&rate=100000") }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            var named: [String] = []
            for _ in 0..<40 {
                named += fixture.filesLeft().filter { $0.hasPrefix(TemporaryFiles.prefix) }
                try await Task.sleep(for: .milliseconds(25))
            }
            let finished = await outcomes
            #expect(fixture.fetcher.cacheWriteProblem != nil)
            #expect(finished.allSatisfy { $0.status == .attached }, "\(finished.map { $0.detail ?? "" })")
            #expect(named.isEmpty, "\(Set(named))")
        }
    }

    @Test("cache clear leaves a temporary file its living writer holds (a body streaming into attachments/), or one changed in the last minute, and removes it once let go")
    func clearLeavesBodiesBeingWritten() async throws {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let cache = home + "/cache"
        _ = try CacheStore(configuration: .init(directory: cache))
        let attachments = cache + "/attachments"
        try FileManager.default.createDirectory(atPath: attachments, withIntermediateDirectories: true)
        let (file, path) = try TemporaryFiles.create(in: attachments).get()
        _ = try file.writeAll(Data(repeating: 7, count: 1000))
        // A file changed in the last minute stays whatever its lock (its writer may not hold it
        // yet); one older stays while its writer holds the lock.
        let young = attachments + "/" + TemporaryFiles.name()
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: young))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -120)], ofItemAtPath: path)
        let held = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache])
        #expect(FileManager.default.fileExists(atPath: young), "\(held.stdout)")
        #expect(held.status == 0, "\(held.stderr)")
        #expect(FileManager.default.fileExists(atPath: path), "\(held.stdout)")
        try file.close()
        let released = try await CommandRunner.run("fetch-attachment", ["cache", "clear", "--cache-dir", cache])
        #expect(released.stdout.contains("1 attachment files"), "\(released.stdout)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A cache directory swapped for a symbolic link while the fetcher runs: bodies still stream into the cache it opened and are kept there, and nothing is made where the link points")
    func swappedForSymbolicLink() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.cacheDirectory)
            let opened = cache + "-opened", elsewhere = cache + "-elsewhere"
            // Where the link points: a cache's layout, so that every path under the link resolves.
            for name in ["tmp", "entries"] {
                try FileManager.default.createDirectory(atPath: elsewhere + "/" + name, withIntermediateDirectories: true)
            }
            try FileManager.default.moveItem(atPath: cache, toPath: opened)
            try FileManager.default.createSymbolicLink(atPath: cache, withDestinationPath: elsewhere)
            let outcome = await fixture.fetch("/media/swapped.jpg?bytes=30000")
            #expect(outcome.status == .attached, "\(outcome.reason?.code ?? ""): \(outcome.detail ?? "")")
            #expect(fixture.fetcher.cacheWriteProblem == nil, "\(fixture.fetcher.cacheWriteProblem ?? "")")
            #expect(try FileManager.default.contentsOfDirectory(atPath: opened + "/entries").count == 1)
            // The body's file was made on the spot, and its take started a refill of files made
            // ahead: in the cache's tmp/ too (under its new name), none where the link points.
            let files = try #require(fixture.fetcher.cache?.preparedFiles)
            try await TestTiming.wait(atMost: PreparedFilesTests.refillWait) { files.count == files.capacity }
            #expect(files.count == files.capacity)
            // Besides them, the body's own file (made in tmp/) may still be open for a moment after
            // the payload's outcome, until the download it came from lets it go: ThreadSanitizer's
            // run once counted 17 descriptors there.
            try await TestTiming.wait(atMost: PreparedFilesTests.refillWait) { descriptors(in: opened + "/tmp") == files.count }
            #expect(descriptors(in: opened + "/tmp") == files.count)
            #expect(descriptors(in: elsewhere) == 0)
            for name in ["tmp", "entries"] {
                #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere + "/" + name).isEmpty, "\(name)")
            }
            #expect(fixture.server.stats().requests == 1)
        }
    }

    @Test("An entry given a fresh inode at its link limit is copied through tmp/'s descriptor: nothing where a symbolic link put in tmp/'s place points, nothing left in tmp/")
    func reseedThroughDescriptor() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.cacheDirectory)
            let path = "/media/reseeded.jpg?bytes=20000"
            #expect(await fixture.fetch(path).status == .attached)
            let store = try #require(fixture.fetcher.cache?.store)
            let entry = try #require(store.load(CacheKey(hex: try key(fixture, path)), keepingOpen: false)?.entry)
            // Where the link points: on another file system where there is one (/dev/shm), so
            // that a copy made there could not be renamed into entries/ either.
            let shared = FileManager.default.fileExists(atPath: "/dev/shm")
            let elsewhere = shared ? "/dev/shm/attachment-fetcher-tests-" + UUID().uuidString : cache + "-elsewhere"
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            try FileManager.default.moveItem(atPath: cache + "/tmp", toPath: cache + "/tmp-opened")
            try FileManager.default.createSymbolicLink(atPath: cache + "/tmp", withDestinationPath: elsewhere)
            let reseeded = try #require(store.reseed(entry))
            #expect(reseeded.inode != entry.inode)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: cache + "/entries/" + entry.key.hex))) == SyntheticMedia.body(extension: "jpg", size: 20_000))
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/tmp-opened").isEmpty)
            // Served from its new inode.
            let again = await fixture.fetch(path)
            #expect(again.status == .attached && fixture.server.stats().requests == 1)
        }
    }

    @Test("An entry someone may write (its mode no longer 0444, or another user's) is never served: a payload's hard link would share an inode that can be turned into anything after libmagic's check")
    func writableEntry() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/writable.jpg?bytes=20000"
            let entry = try #require(fixture.cacheDirectory) + "/entries/" + (try key(fixture, path))
            #expect(await fixture.fetch(path).status == .attached)
            // Made writable after this process verified it: the next hit does not link it.
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: entry)
            let again = await fixture.fetch(path)
            #expect(again.status == .attached && fixture.server.stats().requests == 2, "\(fixture.server.stats().requests)")
            let attached = try #require(again.attachments.first?.path)
            #expect((try FileManager.default.attributesOfItem(atPath: attached)[.posixPermissions] as? Int) == 0o444)
            // Writable before another process's first use of it: not served there either.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: entry)
            let other = try PushAttachmentFetcher(configuration: fixture.fetcher.configuration, logger: Self.logger)
            let third = await other.process(fixture.braze(path))
            await other.shutdown()
            #expect(third.status == .attached && fixture.server.stats().requests == 3, "\(fixture.server.stats().requests)")
        }
    }

    @Test("An entry its owner made writable for a moment (a 304's refresh as a user other than root: 0644, the attribute, 0444) is not removed by another process's look-up in that moment, and is served once read-only again")
    func refreshWindowKeepsEntry() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/refreshing.jpg?bytes=20000"
            let hex = try key(fixture, path)
            let entry = try #require(fixture.cacheDirectory) + "/entries/" + hex
            #expect(await fixture.fetch(path).status == .attached)
            let inode = try #require(try FileManager.default.attributesOfItem(atPath: entry)[.systemFileNumber] as? Int)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: entry)
            let other = try PushAttachmentFetcher(configuration: fixture.fetcher.configuration, logger: Self.logger)
            let store = try #require(other.cache?.store)
            #expect(store.load(CacheKey(hex: hex), keepingOpen: false) == nil)
            #expect((try FileManager.default.attributesOfItem(atPath: entry)[.systemFileNumber] as? Int) == inode)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: entry)
            let served = await other.process(fixture.braze(path))
            await other.shutdown()
            #expect(served.status == .attached && fixture.server.stats().requests == 1, "\(fixture.server.stats().requests)")
        }
    }

    @Test("A payload served from the entry another process stored while this one waited for its lock counts as a cache hit")
    func hitAfterWaiting() async throws {
        try await Fixture.with(cached: true) { fixture in
            let path = "/media/stored-elsewhere.jpg?bytes=2000&delay_ms=\(800 * TestTiming.scale)"
            let key = CacheKey(try AttachmentURL.parse(fixture.server.url(path)).get(), scope: fixture.fetcher.configuration.cacheScope)
            // Another process, as far as the cache can tell: its own open of the lock file.
            let other = try PushAttachmentFetcher(configuration: fixture.fetcher.configuration, logger: Self.logger)
            let first = Task { await other.process(fixture.braze(path)) }
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { fixture.server.stats().requests == 1 }
            let second = Task { await fixture.fetcher.process(fixture.braze(path)) }
            try await TestTiming.wait(atMost: .seconds(10) * TestTiming.scale) { fixture.fetcher.cache?.waitsForAnotherProcess(key) == true }
            #expect(await first.value.status == .attached)
            #expect(await second.value.status == .attached)
            await other.shutdown()
            #expect(fixture.server.stats().requests == 1)
            #expect(fixture.fetcher.statistics.cacheHits == 1 && fixture.fetcher.statistics.originRequests == 0, "\(fixture.fetcher.statistics)")
        }
    }
}
