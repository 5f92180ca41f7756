@testable import AttachmentFetcher
import Foundation
import Testing

/// ext4 allows 65,000 hard links to one inode; a campaign of more payloads than that on one cache
/// entry must still give every payload its own file.
@Suite("Link limit: a cache body past the file system's hard-link limit", .timeLimit(.minutes(2)))
struct LinkLimitTests {
    @Test("Concurrent links past the limit reseed the body and all succeed")
    func linksPastTheLimit() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let body = root + "/entry.body", output = root + "/out", temporary = root + "/tmp"
        for directory in [output, temporary] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try #require(FileManager.default.createFile(atPath: body, contents: Data(SyntheticJPEG.bytes)))
        // Use up the body's links (bounded: a file system without a small limit stops at 70,000).
        var made = 0
        while made < 70_000, link(body, root + "/filler-\(made)") == 0 { made += 1 }
        let limited = errno == EMLINK
        withKnownIssue("this file system has no hard-link limit below 70,000 (tmpfs): nothing to reseed") {
            #expect(limited)
        } when: { !limited }
        guard limited else { return }

        let media = MediaType(mime: "image/jpeg", kind: .image, fileExtension: "jpg")
        let source = DownloadedFile(path: body, media: media, byteCount: SyntheticJPEG.bytes.count, effectiveURL: "", headerBlock: "")
        let url = try AttachmentURL.parse("http://127.0.0.1/x.jpg").get()
        let results = await withTaskGroup { group in
            for _ in 0..<64 {
                group.addTask {
                    await BlockingIO.run {
                        AttachmentFiles.link(source, in: output, namedAfter: url, reseed: {
                            AttachmentFiles.copy(body, to: body).map { true }.get(or: false)
                        })
                    }
                }
            }
            return await group.reduce(into: [Result<DownloadedFile, TransferFailure>]()) { $0.append($1) }
        }
        for result in results {
            if case .failure(let failure) = result { Issue.record("\(failure.reason): \(failure.detail)") }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: output)
        #expect(files.count == 64)
        for file in files {
            #expect(FileManager.default.contents(atPath: output + "/" + file) == Data(SyntheticJPEG.bytes))
        }
    }
}

private enum SyntheticJPEG {
    static let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 2_000) + [0xFF, 0xD9]
}

extension Result {
    fileprivate func get(or fallback: Success) -> Success {
        (try? get()) ?? fallback
    }
}
