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
            try FileManager.default.removeItem(atPath: fixture.directory)
            let again = await fixture.fetch("/media/kept.jpg?bytes=4000")
            #expect(again.status == .attached, "\(again.detail ?? "")")
            let other = await fixture.fetch("/media/other.jpg?bytes=5000")
            #expect(other.status == .attached, "\(other.detail ?? "")")
            for outcome in [again, other] {
                let path = try #require(outcome.attachments.first?.path)
                #expect(FileManager.default.fileExists(atPath: path))
            }
            // With the cache, the fresh entry is served again, not fetched again.
            let requests = fixture.server.stats().requestsPerPath["/media/kept.jpg"]
            #expect(requests == (cached ? 1 : 2), "\(fixture.server.stats().requestsPerPath)")
        }
    }
}
