@testable import AttachmentFetcher
import Foundation
import Testing

/// Files made by real encoders (`Tests/Fixtures/make-media.sh`), served as they are: the verdict
/// an iPhone would give on each.
@Suite("Real media")
struct RealMediaTests {
    /// Files iOS accepts: the MIME type libmagic finds and the suffix the file gets.
    static let accepted: [(file: String, mime: String, suffix: String)] = [
        ("photo.jpg", "image/jpeg", "jpg"),
        ("logo.png", "image/png", "png"),
        ("animated.gif", "image/gif", "gif"),
        ("tone.mp3", "audio/mpeg", "mp3"),
        // ID3v2 tags of 13,252 and 6,102 bytes (cover art, tagger padding): libmagic sees only
        // tag in a body's first 4 KiB.
        ("tone-cover-art.mp3", "audio/mpeg", "mp3"),
        ("tone-padded-tag.mp3", "audio/mpeg", "mp3"),
        ("tone.wav", "audio/x-wav", "wav"),
        ("tone.aiff", "audio/x-aiff", "aiff"),
        ("tone.m4a", "audio/x-m4a", "m4a"),
        ("clip.mp4", "video/mp4", "mp4"),
        ("clip.m4v", "video/x-m4v", "mp4"),
        ("clip.mpg", "video/mpeg", "mpg"),
        ("clip.avi", "video/x-msvideo", "avi"),
        // Cameras' major brands before the standard ones: libmagic reads the major brand alone
        // ("data" for XAVC and CAEP, audio/mp4 for Sony's MSNV video).
        ("clip-xavc.mp4", "video/mp4", "mp4"),
        ("clip-caep.mp4", "video/mp4", "mp4"),
        ("clip-msnv.mp4", "video/mp4", "mp4"),
        // AAC alone under brand mp42, its only track in view: audio, under the audio limit.
        ("tone-mp42.mp4", "audio/mp4", "m4a"),
        // HEVC in an hvc1 sample entry, as Apple's players want it; AV1 (with a warning).
        ("clip-hvc1.mp4", "video/mp4", "mp4"),
        ("clip-av1.mp4", "video/mp4", "mp4"),
        ("clip-av1-moov-last.mp4", "video/mp4", "mp4"),
        ("photo-exif-6.jpg", "image/jpeg", "jpg"),
        ("still.gif", "image/gif", "gif"),
    ]

    /// Files iOS refuses, with words the detail must hold: the MIME type or, where libmagic has
    /// none, the format's name.
    static let refused: [(file: String, named: String)] = [
        ("photo.webp", "image/webp"),
        ("photo.heic", "image/heic"),
        ("photo.avif", "image/avif"),
        ("photo.bmp", "image/bmp"),
        ("photo.tiff", "image/tiff"),
        ("clip.mov", "QuickTime"),
        ("clip.3gp", "3GPP"),
        ("clip.3g2", "3GPP2"),
        ("clip.ts", "MPEG transport stream"),
        // As ffmpeg writes it, its SDT packet first: libmagic says "data".
        ("clip-sdt.ts", "MPEG transport stream"),
        ("tone.caf", "CoreAudio Format"),
        ("tone.flac", "audio/flac"),
        ("tone.aac", "AAC"),
        ("tone.ogg", "audio/ogg"),
        // Behind an ID3 tag, but not MPEG audio: not an MP3 to iOS.
        ("tone-id3.aac", "ID3 tag followed by audio/x-hx-aac-adts"),
        ("tone-id3.flac", "ID3 tag followed by audio/flac"),
        // ffmpeg's default HEVC tag, hev1, which Apple's players do not play; VP9 in MPEG-4.
        ("clip-hev1.mp4", "HEVC video in hev1 sample entries"),
        ("clip-vp9.mp4", "VP9 video"),
        // MPEG audio layer II: libmagic says audio/mpeg, but only layer III is an MP3.
        ("tone-layer2.mp3", "MPEG audio layer II"),
        // Android's decoders read ICO; iOS does not.
        ("icon.ico", "image/vnd.microsoft.icon"),
    ]

    static func size(of file: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: Fixture.mediaDirectory + "/" + file)[.size] as? Int)
    }

    @Test("Real files iOS accepts are attached with their type, with and without Content-Length", arguments: accepted, [false, true])
    func acceptedMedia(item: (file: String, mime: String, suffix: String), chunked: Bool) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/files/\(item.file)" + (chunked ? "?chunked=1" : ""))
            #expect(outcome.status == .attached, "\(item.file): \(outcome.detail ?? "")")
            let attachment = try #require(outcome.attachments.first)
            #expect(attachment.mime == item.mime)
            #expect(attachment.path.hasSuffix("." + item.suffix))
            #expect(attachment.bytes == (try Self.size(of: item.file)))
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixture.mediaDirectory + "/" + item.file))
            #expect(try Data(contentsOf: URL(fileURLWithPath: attachment.path)) == original)
        }
    }

    @Test("AV1 video is attached with a warning that only iPhones decoding it in hardware play it, its moov in view or not; H.264 and HEVC get none")
    func av1Warning() async throws {
        try await Fixture.with { fixture in
            // The codec from the video track's sample entry; with the moov past the first 4 KiB,
            // from the ftyp's av01 brand.
            for file in ["clip-av1.mp4", "clip-av1-moov-last.mp4"] {
                let av1 = await fixture.fetch("/files/\(file)")
                #expect(av1.status == .attached, "\(file): \(av1.detail ?? "")")
                #expect(av1.warnings.contains(PlatformRules.iOSAV1Warning), "\(file): \(av1.warnings)")
            }
            for file in ["clip.mp4", "clip-hvc1.mp4"] {
                #expect(!(await fixture.fetch("/files/\(file)")).warnings.contains(PlatformRules.iOSAV1Warning))
            }
        }
    }

    @Test("Real files iOS refuses are unsupported-type, the format named in the detail", arguments: refused)
    func refusedMedia(item: (file: String, named: String)) async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/files/\(item.file)")
            #expect(outcome.reason == .unsupportedType)
            #expect(outcome.detail?.contains(item.named) == true, "\(item.file): \(outcome.detail ?? "")")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("Behind a large ID3 tag, the audio limit still counts the whole file", arguments: [false, true])
    func id3TagCountsTowardsTheLimit(chunked: Bool) async throws {
        let size = try Self.size(of: "tone-cover-art.mp3")
        let query = chunked ? "?chunked=1" : ""
        try await Fixture.with(configure: { $0.sizeLimits.audio = size }) { fixture in
            #expect(await fixture.fetch("/files/tone-cover-art.mp3\(query)").status == .attached)
        }
        try await Fixture.with(configure: { $0.sizeLimits.audio = size - 1 }) { fixture in
            let over = await fixture.fetch("/files/tone-cover-art.mp3\(query)")
            #expect(over.reason == .tooLarge)
            #expect(over.detail == "the body is larger than the audio limit, \(size - 1) bytes")
        }
    }

    @Test("A body the origin gzipped unasked is decoded, as URLSession does; limits count decoded bytes")
    func contentEncoding() async throws {
        let decoded = try Self.size(of: "logo.png")
        let encoded = try Self.size(of: "logo.png.gz")
        #expect(encoded < decoded)
        try await Fixture.with { fixture in
            for query in ["?encoding=gzip", "?encoding=gzip&chunked=1", "?encoding=deflate"] {
                let outcome = await fixture.fetch("/files/logo.png\(query)")
                #expect(outcome.status == .attached, "\(outcome.detail ?? "")")
                #expect(outcome.attachments.first?.mime == "image/png")
                #expect(outcome.attachments.first?.bytes == decoded)
            }
        }
        // The encoded Content-Length is under the limit, the decoded body is not.
        try await Fixture.with(configure: { $0.sizeLimits.image = decoded - 1 }) { fixture in
            let outcome = await fixture.fetch("/files/logo.png?encoding=gzip")
            #expect(outcome.reason == .tooLarge)
            #expect(outcome.detail == "the body is larger than the image limit, \(decoded - 1) bytes")
            #expect(fixture.filesLeft().isEmpty)
        }
    }

    @Test("A small gzip body that inflates past the limit is cut at the limit, mid-stream")
    func inflationIsCut() async throws {
        let limit = 1_000_000
        #expect(try Self.size(of: "inflates-past-limit.png.gz") < 50_000)  // 12 MB once inflated
        try await Fixture.with(configure: { $0.sizeLimits.image = limit; $0.sizeLimits.androidPicture = limit }) { fixture in
            let outcome = await fixture.fetch("/files/inflates-past-limit.png?encoding=gzip")
            #expect(outcome.reason == .tooLarge)
            #expect(outcome.detail == "the body is larger than the image limit, \(limit) bytes")
            // Decoding stopped within one write of the limit, not at the end of the 12 MB.
            #expect(fixture.fetcher.statistics.bytesDownloaded < limit + 256 * 1024)
            #expect(fixture.filesLeft().isEmpty)
        }
    }
}

@Suite("URLs as iOS reads them")
struct URLNormalisationTests {
    @Test(
        "One normalised form: invalid characters percent-encoded, IDNA host, scheme and host lower-cased",
        arguments: [
            ("http://cdn.example/a b.png", "http://cdn.example/a%20b.png"),
            ("http://cdn.example/caf\u{E9}.png", "http://cdn.example/caf%C3%A9.png"),
            ("http://cdn.example/caf%C3%A9.png", "http://cdn.example/caf%C3%A9.png"),
            ("HTTPS://CDN.Example:443/A.PNG", "https://cdn.example/A.PNG"),
            ("http://cdn.example:8080/x.png#top", "http://cdn.example:8080/x.png"),
            ("http://cdn.example", "http://cdn.example/"),
            ("http://B\u{FC}cher.example/x.png", "http://xn--bcher-kva.example/x.png"),
            ("http://cdn.example/x.png?name=a b&c=|", "http://cdn.example/x.png?name=a%20b&c=%7C"),
            ("http://[::1]:8080/a b.png", "http://[::1]:8080/a%20b.png"),
            ("http://cdn.example/a[1].png?k[]=v", "http://cdn.example/a%5B1%5D.png?k%5B%5D=v"),
        ])
    func normalises(input: String, expected: String) throws {
        let url = try AttachmentURL.parse(input).get()
        #expect(url.string == expected)
        #expect(url.payloadSpelling == input)
    }

    @Test(
        "A spelling only iOS 17 and later encode is told apart from a valid URL, which every iOS reads",
        arguments: [
            ("http://cdn.example/a b.png", true), ("http://cdn.example/caf\u{E9}.png", true), ("http://B\u{FC}cher.example/x.png", true),
            ("http://cdn.example/x.png?c=|", true), ("http://cdn.example/100%.png", true), ("http://cdn.example/%zz.png", true),
            ("http://cdn.example/caf%C3%A9.png", false), ("HTTPS://CDN.Example:443/A.PNG", false),
            ("http://cdn.example:8080/x.png?a=1&b=%2F;c#top", false), ("http://[::1]:8080/~u/a_b-c.png", false),
            ("http://cdn.example/a[1].png", true), ("http://cdn.example/x.png?a[]=1", true), ("http://[::1]/x.png?b]=2", true),
        ])
    func spellingBeforeIOS17(input: String, needsEncoding: Bool) throws {
        #expect(try AttachmentURL.parse(input).get().needsEncodingBeforeIOS17 == needsEncoding)
    }

    @Test("What is not an http(s) URL with a host stays invalid-url", arguments: ["", "/relative.png", "ftp://cdn.example/x.png", "http://"])
    func invalid(input: String) {
        guard case .failure(let failure) = AttachmentURL.parse(input) else {
            Issue.record("\(input) was accepted")
            return
        }
        #expect(failure.reason == .invalidURL)
    }

    @Test("A raw space, non-ASCII and their encoded twins download, with and without the cache, with identical outcomes")
    func mixedSpellingsAgree() async throws {
        let paths = [
            "/media/a b.png?bytes=700", "/media/a%20b.png?bytes=700", "/media/caf\u{E9}.gif?bytes=900",
            "/media/caf%C3%A9.gif?bytes=900", "/media/missing page.png?status=404", "/media/missing%20page.png?status=404",
        ]
        func run(cached: Bool) async throws -> [String] {
            try await Fixture.with(cached: cached) { fixture in
                var lines: [String] = []
                for path in paths {
                    for spelling in [fixture.server.url(path), fixture.server.url(path).replacingOccurrences(of: "http://", with: "HTTP://")] {
                        let outcome = await fixture.fetcher.process(Payloads.braze(url: spelling))
                        let attachment = outcome.attachments.first
                        // Only the raw spellings are what apps linked before iOS 17 cannot read.
                        let raw = path.contains(" ") || path.contains("\u{E9}")
                        #expect(outcome.warnings.contains { $0.contains("before iOS 17") } == raw, "\(spelling): \(outcome.warnings)")
                        // The cache says when a failure was remembered rather than fetched again.
                        let detail = outcome.detail?.replacingOccurrences(of: " (a recent failure, not retried yet)", with: "")
                        lines.append(
                            [outcome.result, detail ?? "-", attachment?.url ?? "-", attachment?.mime ?? "-",
                             attachment.map { String($0.bytes) } ?? "-"].joined(separator: " | ")
                                .replacingOccurrences(of: fixture.server.baseURL, with: "ORIGIN"))
                    }
                }
                if cached {
                    // Two distinct resources and one failing one: three requests, whatever the spelling
                    // (failures are remembered for 2 s).
                    #expect(fixture.fetcher.statistics.originRequests == 3)
                }
                return lines
            }
        }
        let direct = try await run(cached: false)
        let cached = try await run(cached: true)
        #expect(direct == cached)
        #expect(direct[0] == "attached | - | ORIGIN/media/a%20b.png?bytes=700 | image/png | 700")
        #expect(direct[0].replacingOccurrences(of: "a%20b", with: "x") == direct[2].replacingOccurrences(of: "a%20b", with: "x"))
        #expect(direct.filter { $0.hasPrefix("http-status | HTTP 404") }.count == 4)
    }

    @Test("The outcome reports the normalised URL, and the payload's own spelling when it differs")
    func reportsBothSpellings() async throws {
        try await Fixture.with { fixture in
            let raw = fixture.server.url("/media/a b.png?bytes=500")
            let outcome = await fixture.fetcher.process(Payloads.braze(url: raw))
            let attachment = try #require(outcome.attachments.first, "\(outcome.detail ?? "")")
            #expect(attachment.url == fixture.server.url("/media/a%20b.png?bytes=500"))
            #expect(attachment.payloadURL == raw)
            #expect(outcome.jsonLine().contains(#""payload_url":"\#(raw)""#))
            let plain = await fixture.fetch("/media/plain.png?bytes=500")
            #expect(plain.attachments.first?.payloadURL == nil)
            #expect(!plain.jsonLine().contains("payload_url"))
        }
    }
}

@Suite("Messages that point the right way")
struct MessageTests {
    @Test("Silent and internal pushes get no mutable-content warning")
    func noWarningForSilentPushes() async throws {
        try await Fixture.with { fixture in
            for payload in [
                #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true}"#,
                #"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#,
                #"{"aps":{"content-available":1},"ab":{"ab_sync_geos":true}}"#,
            ] {
                let outcome = await fixture.fetcher.process(Data(payload.utf8))
                #expect(outcome.reason == .internalPush)
                #expect(outcome.warnings.isEmpty, "\(payload): \(outcome.warnings)")
            }
            // A silent push of no known vendor: nothing to show, no warning either.
            let silent = await fixture.fetcher.process(Data(#"{"aps":{"content-available":1},"custom":{"k":1}}"#.utf8))
            #expect(silent.warnings.isEmpty, "\(silent.warnings)")
            let visible = await fixture.fetcher.process(
                Data(#"{"aps":{"alert":"hi"},"ab":{"att":{"url":"\#(fixture.server.url("/media/x.png?bytes=300"))"}}}"#.utf8))
            #expect(visible.warnings.contains { $0.contains("mutable-content") })
        }
    }

    @Test("Every failed attachment of a payload is in the outcome, with its own reason")
    func everyFailure() async throws {
        try await Fixture.with { fixture in
            // OneSignal's, whose extension attaches what it can (Airship's attaches all or none).
            func oneSignal(_ paths: [String]) -> Data {
                let urls = paths.enumerated().map { #""id\#($0)":"\#(fixture.server.url($1))""# }.joined(separator: ",")
                return Data(#"{"aps":{"alert":"x","mutable-content":1},"custom":{"i":"n"},"att":{\#(urls)}}"#.utf8)
            }
            let some = await fixture.fetcher.process(oneSignal(["/media/gone.png?status=404", "/media/page.html?bytes=900", "/media/ok.png?bytes=600"]))
            #expect(some.status == .attached)
            #expect(some.failures.map(\.reason) == [.httpStatus, .unsupportedType])
            #expect(some.failures.map(\.url) == [fixture.server.url("/media/gone.png?status=404"), fixture.server.url("/media/page.html?bytes=900")])
            let none = await fixture.fetcher.process(oneSignal(["/media/gone.png?status=404", "/media/page.html?bytes=900"]))
            #expect(none.reason == .httpStatus)
            #expect(none.failures.map(\.reason) == [.httpStatus, .unsupportedType])
            #expect(none.jsonLine().contains(#""failures":[{"detail":"HTTP 404","reason":"http-status","url":"\#(fixture.server.url("/media/gone.png?status=404"))"}"#))
        }
    }

    @Test("A plain http attachment is warned about App Transport Security")
    func atsWarning() async throws {
        try await Fixture.with { fixture in
            let outcome = await fixture.fetch("/media/x.png?bytes=300")
            #expect(outcome.status == .attached)
            #expect(outcome.warnings.contains { $0.contains("App Transport Security") })
        }
    }
}

@Suite("ID3 tags")
struct ID3TagTests {
    @Test("The window holds the bytes after the tag, however the body is cut into chunks", arguments: [1, 7, 4096, 100_000])
    func windowAfterTag(chunkSize: Int) throws {
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixture.mediaDirectory + "/tone-cover-art.mp3")))
        // The header's syncsafe size, plus the header's 10 bytes; about 1,600 bytes of audio follow.
        let tagSize = 10 + file[6..<10].reduce(0) { $0 << 7 | Int($1) }
        #expect(tagSize > 4096 && file.count - tagSize > 1024)
        var window = SniffWindow(capacity: 1024)
        var whole = SniffWindow(capacity: 4096)
        for start in stride(from: 0, to: file.count, by: chunkSize) {
            file[start..<min(start + chunkSize, file.count)].withUnsafeBytes {
                if !window.isFull { window.consume($0) }
                whole.consume($0)
            }
        }
        #expect(window.hadID3Tag)
        #expect(window.isFull)
        #expect(window.bytes == Array(file[tagSize..<tagSize + 1024]))
        // A body that ends before the window is full: all of what follows the tag.
        #expect(!whole.isFull)
        #expect(whole.bytes == Array(file[tagSize...]))
    }

    @Test("Header sizes: syncsafe, the 2.4 footer, and what is not a tag")
    func headers() {
        // Size 0x00 0x00 0x02 0x01 syncsafe = 2 * 128 + 1 = 257 bytes of frames.
        #expect(ID3Tag.size(ofHeader: [0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 2, 1]) == .tag(size: 267))
        #expect(ID3Tag.size(ofHeader: [0x49, 0x44, 0x33, 4, 0, 0x10, 0, 0, 2, 1]) == .tag(size: 277))
        #expect(ID3Tag.size(ofHeader: [0x49, 0x44, 0x33, 3, 0, 0x10, 0, 0, 2, 1]) == .tag(size: 267))  // footer is 2.4's
        #expect(ID3Tag.size(ofHeader: [0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0x80, 1]) == .notATag)  // not syncsafe
        #expect(ID3Tag.size(ofHeader: [0x49, 0x44, 0x33]) == .needMoreBytes)
        #expect(ID3Tag.size(ofHeader: [0xFF, 0xFB]) == .notATag)
    }

    @Test("Plain bodies pass through whole, a short one included")
    func noTag() {
        var window = SniffWindow(capacity: 8)
        let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 1, 2]
        bytes.withUnsafeBytes { window.consume($0) }
        #expect(!window.hadID3Tag)
        #expect(window.bytes == bytes)
        #expect(!window.isFull)
    }
}
