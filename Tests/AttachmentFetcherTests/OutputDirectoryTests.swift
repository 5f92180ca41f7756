@testable import AttachmentFetcher
import Foundation
import Testing

/// A fetcher lives for days in a kiosk or a desktop client; its output directory may be removed
/// meanwhile (a tmp cleaner, a user). It is made again, as the fetcher made it at start.
@Suite("Output directory removed while a fetcher lives")
struct OutputDirectoryTests {
    @Test(
        "An output directory removed between payloads is made again: a cache hit, a miss, and a download without the cache are attached, and no fresh entry is fetched again",
        arguments: [true, false])
    func removedOutputDirectory(cached: Bool) async throws {
        try await Fixture.with(cached: cached) { fixture in
            let first = await fixture.fetch("/media/kept.jpg?bytes=4000")
            #expect(first.status == .attached, "\(first.detail ?? "")")
            // Its permissions as a fetcher found them at start (0700 here, for the fetcher made
            // now on it) come back with it, whatever the umask.
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: fixture.directory)
            await (try fixture.anotherFetcher()).shutdown()
            try FileManager.default.removeItem(atPath: fixture.directory)
            let again = await fixture.fetch("/media/kept.jpg?bytes=4000")
            #expect(again.status == .attached, "\(again.detail ?? "")")
            let other = await fixture.fetch("/media/other.jpg?bytes=5000")
            #expect(other.status == .attached, "\(other.detail ?? "")")
            for outcome in [again, other] {
                let path = try #require(outcome.attachments.first?.path)
                #expect(FileManager.default.fileExists(atPath: path))
            }
            let mode = try FileManager.default.attributesOfItem(atPath: fixture.directory)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(String(mode ?? 0, radix: 8))")
            // With the cache, the fresh entry is served again, not fetched again.
            let requests = fixture.server.stats().requestsPerPath["/media/kept.jpg"]
            #expect(requests == (cached ? 1 : 2), "\(fixture.server.stats().requestsPerPath)")
        }
    }

    @Test("Only the output directory itself is made again: with its parent gone too, a payload is storage")
    func parentGone() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Fixture.with(configure: { $0.outputDirectory = root + "/parent/out" }) { fixture in
            try FileManager.default.removeItem(atPath: root + "/parent")
            let outcome = await fixture.fetch("/media/orphan.jpg?bytes=3000")
            #expect(outcome.reason == .storage, "\(outcome.status) \(outcome.detail ?? "")")
            #expect(!FileManager.default.fileExists(atPath: root + "/parent"))
        }
    }
}
