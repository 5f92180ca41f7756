import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Faults: what the origin does wrong becomes a reason, and leaves no file", .timeLimit(.minutes(2)))
struct FaultTests {
    @Test("4xx and 5xx are http-status with the status in the detail", arguments: [403, 404, 500, 503])
    func httpErrors(status: Int) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?status=\(status)")
            #expect(outcome.reason == .httpStatus)
            #expect(outcome.detail?.contains("\(status)") == true)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("An error response with a body: iPhones with Firebase, OneSignal, Airship, CleverTap, Iterable or Customer.io attach it all the same (their extensions check no status), which a warning says, with and without the cache; none for Braze, for an iPhone that runs no extension, or for Android", arguments: [false, true])
    func errorResponseBodies(cached: Bool) async throws {
        try await Fixture.with(cached: cached) { fixture in
            // The mock CDN's 404 is an HTML page (nginx's test has a placeholder image).
            let url = fixture.server.url("/media/placeholder.jpg?status=404")
            func statusWarnings(_ payload: String) async -> [String] {
                let outcome = await fixture.fetcher.process(Data(payload.utf8))
                #expect(outcome.status == .original && outcome.detail?.contains("HTTP 404") == true, "\(payload) \(outcome.detail ?? "")")
                return outcome.warnings.filter { $0.contains("does not check the status") }
            }
            let firebase = await statusWarnings(#"{"aps":{"alert":"x","mutable-content":1},"fcm_options":{"image":"\#(url)"}}"#)
            #expect(firebase == [
                "\(url) answered HTTP 404 with a body served as text/html: Firebase's iOS extension does not check the status, so iPhones attach that body if iOS takes it for an image, a sound or a video (a CDN's placeholder image, say); its body was not downloaded, so whether it is one is not judged"
            ])
            let oneSignal = await statusWarnings(#"{"aps":{"alert":"x","mutable-content":1},"custom":{"i":"n"},"att":{"id":"\#(url)"}}"#)
            #expect(oneSignal.count == 1 && oneSignal[0].contains("OneSignal's iOS extension"))
            let iterable = await statusWarnings(#"{"aps":{"alert":"x","mutable-content":1},"itbl":{"attachment-url":"\#(url)"}}"#)
            #expect(iterable.count == 1 && iterable[0].contains("Iterable's iOS extension"))
            #expect(await statusWarnings(String(decoding: Payloads.braze(url: url), as: UTF8.self)).isEmpty)
            #expect(await statusWarnings(#"{"aps":{"alert":"x"},"fcm_options":{"image":"\#(url)"}}"#).isEmpty, "no service extension runs")
            #expect(await statusWarnings(#"{"message":{"android":{"notification":{"title":"T","image":"\#(url)"}}}}"#).isEmpty, "Android")
        }
    }

    @Test("A 206 to a request for the whole file is attached when its Content-Range names every byte (URLSession hands that on as the file), and is http-status otherwise")
    func partialContent() async throws {
        try await Fixture.with { fixture in
            let whole = await fixture.fetch("/media/whole.jpg?bytes=3000&status=206&content_range=whole")
            #expect(whole.status == .attached, "\(whole.result) \(whole.detail ?? "")")
            #expect(whole.attachments.first?.bytes == 3000)
            for range in ["", "&content_range=bytes%200-2999%2F9000", "&content_range=bytes%200-2999%2F*"] {
                let part = await fixture.fetch("/media/part.jpg?bytes=3000&status=206\(range)")
                #expect(part.reason == .httpStatus, "\(range): \(part.result)")
                #expect(part.detail?.contains("206") == true)
            }
            #expect(fixture.filesLeft().count == 1)
        }
    }

    @Test("A cached file cut at the origin keeps its warning on a hit, in another process's run")
    func cutAtOriginFromCache() async throws {
        try await Fixture.with(cached: true) { fixture in
            let first = await fixture.fetch("/files/photo.jpg?cut_at=867")
            let again = try fixture.anotherFetcher()
            let second = await again.process(fixture.braze("/files/photo.jpg?cut_at=867"))
            await again.shutdown()
            #expect(fixture.server.stats().requests == 1)
            for outcome in [first, second] {
                #expect(outcome.status == .attached, "\(outcome.result) \(outcome.detail ?? "")")
                #expect(outcome.warnings.contains { $0.contains("cut short") && $0.contains("its JPEG end marker") }, "\(outcome.warnings)")
            }
        }
    }

    @Test("A connection reset mid-body is network")
    func reset() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?bytes=300000&reset_after=20000")
            #expect(outcome.reason == .network)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A body shorter than its Content-Length is network")
    func truncated() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?bytes=300000&truncate_after=20000")
            #expect(outcome.reason == .network)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    /// Real files of each checked format, with what a cut body misses.
    static let cutFiles: [(file: String, missing: String)] = [
        ("photo.jpg", "its JPEG end marker"), ("logo.png", "its PNG end chunk (IEND)"), ("animated.gif", "its GIF trailer"),
        ("photo.webp", "the end its RIFF header announces"), ("tone.wav", "the end its RIFF header announces"),
        ("tone.aiff", "the end its FORM header announces"), ("clip.mp4", "the end of its 'mdat' box"),
        ("photo.heic", "the end of its 'mdat' box"), ("photo.bmp", "the size its BMP header announces"),
    ]

    /// A payload for `url`: an FCM message for the types only Android shows (WebP, HEIF, BMP), a
    /// Braze payload for iOS otherwise.
    static func payload(_ url: String, file: String) -> Data {
        guard [".webp", ".heic", ".bmp"].contains(where: file.hasSuffix) else { return Payloads.braze(url: url) }
        return Data(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\#(url)"}"#.utf8)
    }

    @Test("A body without Content-Length or chunked framing (HTTP/1.1) that the connection's close cuts short is network, neither attached nor cached; whole, it is attached", arguments: cutFiles)
    func closeDelimitedCut(item: (file: String, missing: String)) async throws {
        try await Fixture.with(cached: true, configure: { $0.cache?.failureMemory = .zero }) { fixture in
            let size = try RealMediaTests.size(of: item.file)
            let cut = "/files/\(item.file)?no_length=1&truncate_after=\(size * 2 / 3)"
            let fetch = { (path: String) in await fixture.fetcher.process(Self.payload(fixture.server.url(path), file: item.file)) }
            let outcome = await fetch(cut)
            #expect(outcome.reason == .network, "\(outcome.result) \(outcome.detail ?? "")")
            #expect(
                outcome.detail == "the body ended before \(item.missing): nothing vouched for its end (HTTP/1.1 without Content-Length or chunked framing, ended by the connection's close)")
            #expect(fixture.filesLeft().isEmpty)
            // Not cached: the next payload asks the origin again.
            #expect(await fetch(cut).reason == .network)
            #expect(fixture.server.stats().requestsPerURL[cut] == 2)
            let whole = await fetch("/files/\(item.file)?no_length=1")
            #expect(whole.status == .attached, "\(whole.result) \(whole.detail ?? "")")
            #expect(whole.attachments.first?.bytes == size)
        }
    }

    @Test("A gzip or deflate body whose compressed stream is cut inside honest framing is network, neither attached nor cached", arguments: ["gzip", "deflate"])
    func encodedStreamCut(encoding: String) async throws {
        try await Fixture.with(cached: true, configure: { $0.cache?.failureMemory = .zero }) { fixture in
            let encoded = try RealMediaTests.size(of: "logo.png" + (encoding == "gzip" ? ".gz" : ".zz"))
            for cutAt in [encoded / 3, encoded / 2, encoded * 2 / 3] {
                for framing in ["", "&chunked=1"] {
                    let cut = "/files/logo.png?encoding=\(encoding)&cut_at=\(cutAt)\(framing)"
                    let outcome = await fixture.fetch(cut)
                    #expect(outcome.reason == .network, "\(cut): \(outcome.result) \(outcome.detail ?? "")")
                    #expect(
                        outcome.detail == "the body ended before its PNG end chunk (IEND): nothing vouched for its end (a \(encoding) Content-Encoding, whose compressed stream libcurl does not check to its end)",
                        "\(cut)")
                    #expect(await fixture.fetch(cut).reason == .network)
                    #expect(fixture.server.stats().requestsPerURL[cut] == 2, "\(cut)")
                }
            }
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A Content-Encoding libcurl does not know (utf-8, binary: an origin's mistake) is asked once more and taken as it comes, as URLSession and Android pass it on; a known coding that does not decode stays network", arguments: ["utf-8", "binary"])
    func unknownContentCoding(coding: String) async throws {
        try await Fixture.with { fixture in
            let path = "/files/photo.jpg?encoding=\(coding)"
            let outcome = await fixture.fetch(path)
            #expect(outcome.status == .attached, "\(outcome.result) \(outcome.detail ?? "")")
            let size = try RealMediaTests.size(of: "photo.jpg")
            #expect(outcome.attachments.first?.mime == "image/jpeg" && outcome.attachments.first?.bytes == size)
            #expect(fixture.server.stats().requestsPerURL[path] == 2)
            // A coding libcurl knows, whose stream is cut: network, and not asked again.
            let cut = "/files/logo.png?encoding=gzip&cut_at=200"
            let broken = await fixture.fetch(cut)
            #expect(broken.reason == .network, "\(broken.result) \(broken.detail ?? "")")
            #expect(fixture.server.stats().requestsPerURL[cut] == 1)
        }
    }

    @Test("Requests ask for the encodings URLSession asks for, in its words: an origin that picks an encoding by Accept-Encoding serves what an iPhone gets")
    func acceptEncodingAsURLSession() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/a.jpg?bytes=900&require_accept_encoding=gzip%2C%20deflate%2C%20br")
            #expect(outcome.status == .attached, "\(outcome.result) \(outcome.detail ?? "")")
        }
    }

    @Test("A JPEG, PNG or GIF cut at the origin under honest framing (Content-Length, chunked) is attached as it came, as phones draw its top part, with a warning naming its missing end; whole, or from the mock CDN, it has none",
          arguments: [("photo.jpg", 867, "its JPEG end marker"), ("logo.png", 400, "its PNG end chunk (IEND)"), ("animated.gif", 1000, "its GIF trailer")])
    func cutAtOrigin(file: String, cut: Int, missing: String) async throws {
        try await Fixture.with { fixture in
            for framing in ["", "&chunked=1"] {
                let outcome = await fixture.fetch("/files/\(file)?cut_at=\(cut)\(framing)")
                #expect(outcome.status == .attached, "\(outcome.result) \(outcome.detail ?? "")")
                #expect(outcome.attachments.first?.bytes == cut)
                #expect(outcome.warnings.contains { $0.contains("cut short") && $0.contains(missing) }, "\(outcome.warnings)")
            }
            let whole = await fixture.fetch("/files/\(file)")
            #expect(whole.status == .attached && !whole.warnings.contains { $0.contains("cut short") }, "\(whole.warnings)")
            for ext in ["jpg", "png", "gif"] {
                let synthetic = await fixture.fetch("/media/whole.\(ext)?bytes=70000")
                #expect(synthetic.status == .attached && !synthetic.warnings.contains { $0.contains("cut short") }, "\(ext): \(synthetic.warnings)")
            }
        }
    }

    @Test("A header line too long for libcurl is network, and the detail says so rather than out of memory")
    func oversizedHeader() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?bytes=3000&header_bytes=200000")
            #expect(outcome.reason == .network)
            #expect(outcome.detail?.contains("header") == true, "\(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
            // Headers within the limit are no fault.
            let within = await fixture.fetch("/media/x.jpg?bytes=3000&header_bytes=50000")
            #expect(within.status == .attached, "\(within.detail ?? "")")
        }
    }

    @Test("Trailers after a chunked body count with the headers: past 300 KiB the transfer stops as network, within it they are no fault")
    func endlessTrailers() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.png?bytes=3000&trailer_bytes=2000000")
            #expect(outcome.reason == .network, "\(outcome.status) \(outcome.detail ?? "")")
            #expect(outcome.detail?.contains("300 KiB") == true, "\(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
            let within = await fixture.fetch("/media/y.png?bytes=3000&trailer_bytes=20000")
            #expect(within.status == .attached, "\(within.detail ?? "")")
        }
    }

    @Test("A Location on an informational 103 response is no redirect: an Android picture over http is not refused for a scheme change")
    func earlyHintsAreNoRedirect() async throws {
        try await Fixture.with { fixture in
            let url = fixture.server.url("/media/x.png?bytes=3000&early_hints_location=https%3A%2F%2Fcdn.example%2Fy.png")
            let payload = Data(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\#(url)"}"#.utf8)
            let outcome = await fixture.fetcher.process(payload)
            #expect(outcome.status == .attached, "\(outcome.reason.map { "\($0)" } ?? "") \(outcome.detail ?? "")")
            #expect(!outcome.warnings.contains { $0.contains("redirect") }, "\(outcome.warnings)")
        }
    }

    @Test("A redirect to a scheme libcurl does not know (data:, javascript:, mailto:, foo:) is invalid-url, as file: and ftp: are",
        arguments: ["data:image/png;base64,iVBORw0KGgo=", "javascript:alert(1)", "mailto:a@b.example", "foo://bar/x.png", "ftp://127.0.0.1/x.png"])
    func redirectToUnknownScheme(target: String) async throws {
        try await Fixture.with { fixture in
            let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await fixture.fetch("/media/moved.png?redirect_to=\(encoded)")
            #expect(outcome.reason == .invalidURL, "\(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A redirect to a non-ASCII host is followed to its IDNA name, as URLSession follows it, in a process that never set a locale")
    func redirectToInternationalHost() async throws {
        try await Fixture.with { fixture in
            let port = fixture.server.port
            let fetcher = try fixture.anotherFetcher { $0.resolve = ["xn--exmple-cua.test:\(port):127.0.0.1"] }
            let target = "http://exämple.test:\(port)/media/idn.jpg?bytes=900".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await fetcher.process(fixture.braze("/media/moved.jpg?redirect_to=\(target)"))
            await fetcher.shutdown()
            #expect(outcome.status == .attached, "\(outcome.result) \(outcome.detail ?? "")")
            #expect(fixture.server.stats().requestsPerPath["/media/idn.jpg"] == 1)
        }
    }

    @Test("Two different Content-Length headers are network (RFC 9112 6.3), not a body cut to the last; the same length twice is no fault")
    func conflictingContentLengths() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.png?bytes=5000&second_content_length=100")
            #expect(outcome.reason == .network, "\(outcome.status) \(outcome.detail ?? "")")
            #expect(outcome.detail?.contains("two different Content-Length") == true, "\(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
            let same = await fixture.fetch("/media/y.png?bytes=5000&second_content_length=5000")
            #expect(same.status == .attached, "\(same.detail ?? "")")
        }
    }

    @Test("A refused connection is network")
    func refused() async throws {
        try await Fixture.with { fixture in
            // Port 1 on loopback: nothing listens there.
            let outcome = await fixture.fetcher.process(Payloads.braze(url: "http://127.0.0.1:1/x.jpg"))
            #expect(outcome.reason == .network)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("Up to twenty redirects are followed, as URLSession does; a 21st is http-status")
    func redirects() async throws {
        try await Fixture.with { fixture in
            let twenty = await fixture.fetch("/media/x.jpg?bytes=3000&redirects=20")
            #expect(twenty.status == .attached, "\(twenty.detail ?? "")")
            #expect(twenty.attachments.first?.url == fixture.server.url("/media/x.jpg?bytes=3000&redirects=20"))
            let more = await fixture.fetch("/media/x.jpg?bytes=3000&redirects=21")
            #expect(more.reason == .httpStatus)
            #expect(more.detail == "too many redirects (20)")
            #expect(fixture.filesLeft().count == 1)
        }
    }

    @Test("The redirect limit is configurable")
    func configuredRedirects() async throws {
        try await Fixture.with(configure: { $0.maximumRedirects = 2 }) { fixture in
            #expect(await fixture.fetch("/media/x.jpg?bytes=3000&redirects=2").status == .attached)
            let three = await fixture.fetch("/media/x.jpg?bytes=3000&redirects=3")
            #expect(three.reason == .httpStatus)
            #expect(three.detail == "too many redirects (2)")
        }
    }

    @Test("A redirect to file:// is refused as invalid-url", arguments: ["file%3A%2F%2F%2Fetc%2Fpasswd", "ftp%3A%2F%2F127.0.0.1%2Fx.jpg"])
    func redirectToOtherScheme(target: String) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.jpg?redirect_to=\(target)")
            #expect(outcome.reason == .invalidURL)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("An output directory that cannot be made again (a file in its place) is storage, not a crash; one merely gone is made again")
    func storage() async throws {
        try await Fixture.with { fixture in
            try FileManager.default.removeItem(atPath: fixture.directory)
            try Data().write(to: URL(fileURLWithPath: fixture.directory))
            let outcome = await fixture.fetch("/media/x.jpg?bytes=3000")
            #expect(outcome.reason == .storage)
            #expect(fixture.server.stats().requests == 0)
            try FileManager.default.removeItem(atPath: fixture.directory)
            let again = await fixture.fetch("/media/x.jpg?bytes=3000")
            #expect(again.status == .attached, "\(again.detail ?? "")")
        }
    }

    @Test("Every reason code is reachable and stable")
    func reasonCodes() {
        #expect(FallbackReason.all.map(\.code) == [
            "invalid-payload", "no-attachment", "internal-push", "invalid-url", "http-status", "network", "deadline",
            "too-large", "unsupported-type", "storage", "address-refused", "resources",
        ])
    }

    @Test("A configuration out of range is refused with a stable code")
    func invalidConfiguration() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: directory, timeout: .zero)
        #expect(throws: AttachmentFetcherError.self) { try PushAttachmentFetcher(configuration: configuration) }
        configuration.timeout = .seconds(1)
        configuration.trustedCertificatesFile = directory + "/missing.pem"
        #expect {
            try PushAttachmentFetcher(configuration: configuration)
        } throws: { error in
            (error as? AttachmentFetcherError)?.code == .invalidConfiguration
                && (error as? AttachmentFetcherError)?.message.contains("missing.pem is not a readable file") == true
        }
        configuration.trustedCertificatesFile = nil
        // A user agent with a line break would send a header of its own.
        configuration.userAgent = "x\r\nX-Injected: 1"
        #expect {
            try PushAttachmentFetcher(configuration: configuration)
        } throws: { error in
            (error as? AttachmentFetcherError)?.message.contains("userAgent holds a control character") == true
        }
        configuration.userAgent = "AttachmentFetcher/1.0"
        // What the command line refuses, the library refuses too: a platform named twice (two
        // verdicts for one), redirects past 100.
        for (change, message) in [
            ({ (c: inout PushAttachmentFetcher.Configuration) in c.platforms = [.ios, .ios, .android] }, "platforms names ios twice"),
            ({ (c: inout PushAttachmentFetcher.Configuration) in c.maximumRedirects = 1_000_000 }, "maximumRedirects must be between 0 and 100"),
        ] {
            var changed = configuration
            change(&changed)
            #expect {
                try PushAttachmentFetcher(configuration: changed)
            } throws: { error in
                (error as? AttachmentFetcherError)?.message == message
            }
        }
        // The cache's lock file and entries among the user's attachments.
        configuration.cache = .init(directory: directory + "/./")
        #expect {
            try PushAttachmentFetcher(configuration: configuration)
        } throws: { error in
            (error as? AttachmentFetcherError)?.message == "the cache directory is the output directory: give the cache a directory of its own"
        }
        configuration.cache = nil
        configuration.outputDirectory = "/proc/attachment-fetcher-cannot-be-here"
        do {
            _ = try PushAttachmentFetcher(configuration: configuration)
            Issue.record("an unusable directory was accepted")
        } catch {
            #expect(error.code == .outputDirectoryUnusable)
        }
    }

    @Test("A directory that cannot be made says why, in the system's words; a missing one is made with its parents")
    func unusableDirectoriesSayWhy() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/a-file"
        try #require(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        func message(output: String, cache: String? = nil) async -> String? {
            var configuration = PushAttachmentFetcher.Configuration(outputDirectory: output, timeout: .seconds(1))
            if let cache { configuration.cache = .init(directory: cache) }
            do {
                let fetcher = try PushAttachmentFetcher(configuration: configuration)
                await fetcher.shutdown()
                return nil
            } catch {
                // The cache's directory fails with a code of its own.
                #expect(error.code == (error.message.contains("cache") ? .cacheDirectoryUnusable : .outputDirectoryUnusable), "\(error)")
                return error.message
            }
        }
        #expect(await message(output: file) == "\(file) is a file, not a directory")
        #expect(await message(output: file + "/below") == "cannot create \(file)/below: Not a directory")
        #expect(await message(output: directory + "/out", cache: file + "/cache")
            == "cannot create the cache directory \(file)/cache: Not a directory")
        #expect(await message(output: directory + "/one/two", cache: directory + "/three/four") == nil)
        var status = stat()
        #expect(stat(directory + "/one/two", &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR)
        #expect(stat(directory + "/three/four/entries", &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR)
    }

    @Test("A new fetcher removes temporary files that a dead process left in the output directory")
    func orphansRemoved() async throws {
        try await Fixture.with { fixture in
            // Whose a temporary file is, is told by a lock its living writer holds, not by a pid:
            // an old file nobody holds is a crash's leftover; a held one, or one just made (between
            // its writer's close and rename), stays.
            let orphan = fixture.directory + "/.attachment-dead-1.part"
            let foundation = fixture.directory + "/.dat.nosyncA1B2"
            let held = fixture.directory + "/.attachment-held-2.part"
            let fresh = fixture.directory + "/.attachment-fresh-3.part"
            for path in [orphan, foundation, held, fresh] {
                try #require(FileManager.default.createFile(atPath: path, contents: Data("partial".utf8)))
            }
            let old = Date().addingTimeInterval(-120)
            for path in [orphan, foundation, held] { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path) }
            let holder = open(held, O_RDONLY)
            defer { close(holder) }
            #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
            let second = try fixture.anotherFetcher()
            #expect(!FileManager.default.fileExists(atPath: orphan))
            #expect(!FileManager.default.fileExists(atPath: foundation))
            #expect(FileManager.default.fileExists(atPath: held))  // a live process's download stays
            #expect(FileManager.default.fileExists(atPath: fresh))
            await second.shutdown()
        }
    }
}
