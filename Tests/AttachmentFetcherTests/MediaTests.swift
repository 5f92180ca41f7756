import AttachmentFetcher
import Foundation
import MockCDN
import Testing

@Suite("Media: the real bytes decide type, name and size limit", .timeLimit(.minutes(2)))
struct MediaTests {
    @Test(
        "Every type iOS accepts is attached under its real suffix",
        arguments: [
            ("jpg", "image/jpeg", "jpg"), ("png", "image/png", "png"), ("gif", "image/gif", "gif"),
            ("mp3", "audio/mpeg", "mp3"), ("m4a", "audio/x-m4a", "m4a"), ("wav", "audio/x-wav", "wav"),
            ("aiff", "audio/x-aiff", "aiff"), ("mp4", "video/mp4", "mp4"), ("mpg", "video/mpeg", "mpg"),
            ("avi", "video/x-msvideo", "avi"),
        ])
    func acceptedTypes(served: String, mime: String, suffix: String) async throws {
        try await Fixture.with { fixture in
            // Served under a misleading name and Content-Type: only the bytes count.
            let outcome = await fixture.fetch("/media/file.\(served)?bytes=70000&content_type=text/plain")
            #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
            let attachment = try #require(outcome.attachments.first)
            #expect(attachment.mime == mime)
            #expect(attachment.bytes == 70000)
            #expect(attachment.path.hasSuffix(".\(suffix)"))
            #expect(attachment.path.hasPrefix(fixture.directory + "/"))
            let data = try Data(contentsOf: URL(fileURLWithPath: attachment.path))
            #expect(Array(data) == SyntheticMedia.body(extension: served, size: 70000))
            #expect(fixture.filesLeft() == [URL(fileURLWithPath: attachment.path).lastPathComponent])
        }
    }

    @Test(
        "Types iOS refuses are unsupported-type, with the detected MIME type in the detail",
        arguments: [("html", "text/html"), ("webp", "image/webp"), ("heic", "image/heic"), ("svg", "image/svg+xml"), ("txt", "text/plain"), ("bin", "application/octet-stream")])
    func refusedTypes(served: String, mime: String) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.\(served)?bytes=30000&content_type=image/jpeg", type: "jpg")
            #expect(outcome.reason == .unsupportedType)
            #expect(outcome.detail?.contains(mime) == true, "\(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    /// Sent at 2 MB/s, as a network would (over bare loopback the whole body can arrive in the
    /// millisecond libmagic's answer takes): refused once the first bytes are typed.
    @Test("HTML served as image/jpeg is refused after its first bytes, not downloaded whole")
    func lyingContentTypeAbortsEarly() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/page.html?bytes=5000000&content_type=image/jpeg&rate=2000000")
            #expect(outcome.reason == .unsupportedType)
            #expect(fixture.server.stats().bytesSent < 5_000_000)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("An empty 2xx body (a 200 with nothing in it, a 204) is http-status: the origin sent no file")
    func emptyBody() async throws {
        try await Fixture.with { fixture in
            let empty = await fixture.fetch("/media/x.jpg?bytes=0")
            #expect(empty.reason == .httpStatus)
            #expect(empty.detail == "HTTP 200 with an empty body")
            let noContent = await fixture.fetch("/media/x.jpg?status=204")
            #expect(noContent.reason == .httpStatus)
            #expect(noContent.detail == "HTTP 204 with an empty body")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A payload that says jpg for PNG bytes gets a .png and a warning")
    func wrongTypeHint() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/photo.jpg.png?bytes=2000", type: "jpg")
            #expect(outcome.status == .attached)
            #expect(outcome.attachments.first?.path.hasSuffix(".png") == true)
            #expect(outcome.warnings.contains { $0.contains("'jpg'") && $0.contains("image/png") })
        }
    }

    @Test("The payload's type can never place a file outside the output directory")
    func typeCannotEscape() async throws {
        try await Fixture.with { fixture in
            let evil = "/tmp/evil-" + UUID().uuidString
            let outcome = await fixture.fetch("/media/x.jpg?bytes=2000", type: "/../../../.." + evil)
            // Braze's iOS extension would save the file with that suffix, which iOS attaches nothing under.
            #expect(outcome.status == .original && outcome.reason == .unsupportedType, "\(outcome.detail ?? "")")
            #expect(!FileManager.default.fileExists(atPath: evil))
            #expect(fixture.filesLeft().isEmpty)
            // With a suffix iOS attaches, the file is named by its bytes, in the output directory.
            let named = await fixture.fetch("/media/y.png?bytes=2000", type: "jpg")
            let path = try #require(named.attachments.first?.path)
            #expect(URL(fileURLWithPath: path).deletingLastPathComponent().path == fixture.directory)
            #expect(path.hasSuffix(".png"))
            #expect(fixture.filesLeft().count == 1)
        }
    }

    @Test("A URL path full of dots, slashes and odd characters still gives a plain file name")
    func urlCannotEscape() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/..%2F..%2Fetc%2Fpasswd%00.jpg?bytes=2000")
            let path = try #require(outcome.attachments.first?.path, "\(outcome.detail ?? "")")
            #expect(URL(fileURLWithPath: path).deletingLastPathComponent().path == fixture.directory)
        }
    }

    /// Each class at its limit and one byte over, announced (Content-Length) and not (chunked).
    @Test(
        "Each type class is accepted at its size limit and refused one byte over",
        arguments: [("jpg", 10_000_000), ("mp3", 5_000_000), ("mp4", 50_000_000)], [false, true])
    func sizeLimits(type: (served: String, limit: Int), chunked: Bool) async throws {
        let (served, limit) = type
        try await Fixture.with { fixture in
            let suffix = chunked ? "&chunked=1" : ""
            let atLimit = await fixture.fetch("/media/at.\(served)?bytes=\(limit)\(suffix)")
            #expect(atLimit.status == .attached, "\(atLimit.detail ?? "")")
            #expect(atLimit.attachments.first?.bytes == limit)

            fixture.server.resetStats()
            let over = await fixture.fetch("/media/over.\(served)?bytes=\(limit + 1)\(suffix)")
            #expect(over.reason == .tooLarge)
            #expect(fixture.filesLeft().count == 1)  // only the at-limit file
        }
    }

    /// Both bodies are sent at 20 MB/s, as a network would (over bare loopback 40 MB can arrive
    /// before the type's answer).
    @Test("An oversized body is aborted early: the server sees the connection close before it sent it all")
    func oversizedAbortsEarly() async throws {
        try await Fixture.with { fixture in
            // Announced: refused as soon as the first bytes show the type.
            let announced = await fixture.fetch("/media/big.jpg?bytes=40000000&rate=20000000")
            #expect(announced.reason == .tooLarge)
            #expect(announced.detail == "the body is larger than the image limit, 10000000 bytes")
            // Not announced: refused once more than the limit has arrived.
            let chunked = await fixture.fetch("/media/big2.jpg?bytes=40000000&chunked=1&rate=20000000")
            #expect(chunked.reason == .tooLarge)
            #expect(chunked.detail == announced.detail)  // one wording, whichever check found it
            // Let the server notice both closed connections.
            try await TestTiming.wait(atMost: .seconds(2)) { fixture.server.stats().responsesAborted >= 2 }
            let stats = fixture.server.stats()
            #expect(stats.responsesAborted == 2)
            #expect(stats.responsesCompleted == 0)
            #expect(stats.bytesSent < 80_000_000)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    /// The classifier's answer is held back 5 s, as a busy classifier queue may hold it: past
    /// the smallest limit (audio's, 5 MB) a body of unknown type is typed on the engine's thread
    /// rather than let in up to the largest (video's, 50 MB).
    @Test("A body whose type is slow to come stops at its own type's limit, not at the largest")
    func oversizedWhileTypeIsPending() async throws {
        try await Fixture.with(typeAnswerDelay: .seconds(5)) { fixture in
            let announced = await fixture.fetch("/media/big.jpg?bytes=40000000&rate=20000000")
            #expect(announced.reason == .tooLarge)
            #expect(announced.detail == "the body is larger than the image limit, 10000000 bytes")
            let chunked = await fixture.fetch("/media/big2.jpg?bytes=40000000&chunked=1&rate=20000000")
            #expect(chunked.reason == .tooLarge)
            #expect(chunked.detail == announced.detail)
            try await TestTiming.wait(atMost: .seconds(2)) { fixture.server.stats().responsesAborted >= 2 }
            let stats = fixture.server.stats()
            #expect(stats.responsesCompleted == 0)
            // Each stopped near its limit (5 MB announced, 10 MB not), plus what was in flight.
            #expect(stats.bytesSent < 2 * 20_000_000)
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A larger limit from the configuration is honoured")
    func configurableLimits() async throws {
        try await Fixture.with(configure: { $0.sizeLimits.image = 1_000 }) { fixture in
            #expect(await fixture.fetch("/media/x.jpg?bytes=1000").status == .attached)
            #expect(await fixture.fetch("/media/x.jpg?bytes=1001").reason == .tooLarge)
            // Without a Content-Length, and whole before its type is known (shorter than the
            // sniffed prefix): checked against its type's limit once the type is in.
            #expect(await fixture.fetch("/media/x.jpg?bytes=1001&chunked=1").reason == .tooLarge)
            #expect(await fixture.fetch("/media/x.mp3?bytes=1001").status == .attached)
        }
    }
}
