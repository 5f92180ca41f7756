@testable import AttachmentFetcher
import Foundation
import SystemPackage
import Testing

/// The check a body gets when nothing in its framing vouched for its end: real files, whole and
/// cut at every length, and the structures a walk must get through.
@Suite("Body completeness: a body ends where its format says")
struct BodyCompletenessTests {
    /// The real files of each checked format.
    static let checked: [(file: String, format: BodyCompleteness.Format)] = [
        ("photo.jpg", .jpeg), ("photo-progressive.jpg", .jpeg), ("logo.png", .png), ("animated.png", .png),
        ("animated.gif", .gif), ("photo.webp", .riff), ("animated.webp", .riff), ("tone.wav", .riff), ("clip.avi", .riff),
        ("tone.aiff", .aiff), ("clip.mp4", .isoBaseMedia), ("clip-caep.mp4", .isoBaseMedia), ("clip-hvc1.mp4", .isoBaseMedia),
        ("tone.m4a", .isoBaseMedia), ("tone-mp42.mp4", .isoBaseMedia), ("photo.heic", .isoBaseMedia),
        ("photo.avif", .isoBaseMedia), ("animated.avif", .isoBaseMedia), ("photo.bmp", .bmp),
    ]

    static func contents(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.mediaDirectory + "/" + file)))
    }

    /// The first `count` bytes of `bytes`, without copying them.
    struct Cut: BodyBytes {
        var bytes: [UInt8]
        var count: Int

        func read(at offset: Int, length: Int) -> [UInt8] {
            Array(bytes[min(offset, count)..<min(offset + length, count)])
        }
    }

    @Test("Each type with a check has its format; MP3, MPEG, ICO have none")
    func formats() {
        func format(_ mime: String) -> BodyCompleteness.Format? {
            AttachmentTypes.mediaType(forMIME: mime).flatMap(BodyCompleteness.Format.init)
        }
        #expect(format("image/jpeg") == .jpeg && format("image/png") == .png && format("image/gif") == .gif)
        #expect(format("image/webp") == .riff && format("audio/x-wav") == .riff && format("video/x-msvideo") == .riff)
        #expect(format("audio/x-aiff") == .aiff && format("image/bmp") == .bmp)
        for iso in ["video/mp4", "video/x-m4v", "audio/mp4", "audio/x-m4a", "image/heic", "image/heif", "image/avif"] {
            #expect(format(iso) == .isoBaseMedia, "\(iso)")
        }
        for unchecked in ["audio/mpeg", "video/mpeg", "image/vnd.microsoft.icon"] {
            #expect(format(unchecked) == nil, "\(unchecked)")
        }
    }

    @Test("A whole real file passes", arguments: checked)
    func wholeFiles(item: (file: String, format: BodyCompleteness.Format)) throws {
        #expect(try BodyCompleteness.check(item.format, try Self.contents(item.file)) == .complete)
    }

    @Test("A real file cut at any length is caught", arguments: checked)
    func everyCut(item: (file: String, format: BodyCompleteness.Format)) throws {
        let bytes = try Self.contents(item.file)
        var missed: [Int] = []
        for length in 0..<bytes.count {
            if case .complete = try BodyCompleteness.check(item.format, Cut(bytes: bytes, count: length)) { missed.append(length) }
        }
        #expect(missed.isEmpty, "\(item.file) (\(bytes.count) bytes) cut to \(missed.prefix(10)) passed")
    }

    @Test("What a cut misses is named")
    func missingNamed() throws {
        func missing(_ file: String, _ format: BodyCompleteness.Format, cutTo fraction: Double = 2.0 / 3) throws -> String? {
            let bytes = try Self.contents(file)
            guard case .cutShort(let missing) = try BodyCompleteness.check(format, Cut(bytes: bytes, count: Int(Double(bytes.count) * fraction)))
            else { return nil }
            return missing
        }
        #expect(try missing("photo.jpg", .jpeg) == "its JPEG end marker")
        #expect(try missing("logo.png", .png) == "its PNG end chunk (IEND)")
        #expect(try missing("animated.gif", .gif) == "its GIF trailer")
        #expect(try missing("tone.wav", .riff) == "the end its RIFF header announces")
        #expect(try missing("tone.aiff", .aiff) == "the end its FORM header announces")
        #expect(try missing("photo.bmp", .bmp) == "the size its BMP header announces")
        #expect(try missing("clip.mp4", .isoBaseMedia) == "the end of its 'mdat' box")
        // Cut where a box ends: the box describing the media, or the media data, is not there.
        #expect(try missing("clip-caep.mp4", .isoBaseMedia, cutTo: 2776.0 / 3586) == "the box that describes its media ('moov' or 'meta')")
        #expect(try missing("clip.mp4", .isoBaseMedia, cutTo: 850.0 / 3586) == "its media data box ('mdat')")
    }

    @Test("A JPEG with bytes after its end marker passes: a motion photo's video, a camera's trailer")
    func bytesAfterJPEGEnd() throws {
        let photo = try Self.contents("photo.jpg")
        let motionPhoto = photo + (try Self.contents("clip.mp4"))
        #expect(try BodyCompleteness.check(.jpeg, motionPhoto) == .complete)
        #expect(try BodyCompleteness.check(.jpeg, photo + [0x00, 0x00, 0xFF]) == .complete)
        // Cut before its end marker, the video after it does not count.
        #expect(try BodyCompleteness.check(.jpeg, Cut(bytes: motionPhoto, count: photo.count - 1)) == BodyCompleteness.jpegEnd)
    }

    @Test("A file cut at the origin under honest framing: a JPEG, PNG or GIF whose last bytes are not its end mark, checked whole", arguments: checked.filter { $0.format.endMark != nil })
    func cutAtOrigin(item: (file: String, format: BodyCompleteness.Format)) throws {
        let bytes = try Self.contents(item.file)
        #expect(try !BodyCompleteness.isCutAtOrigin(item.format, bytes))
        var missed: [Int] = []
        for length in 0..<bytes.count where try !BodyCompleteness.isCutAtOrigin(item.format, Cut(bytes: bytes, count: length)) {
            missed.append(length)
        }
        #expect(missed.isEmpty, "\(item.file) (\(bytes.count) bytes) cut to \(missed.prefix(10)) passed")
    }

    @Test("Bytes after a JPEG's end marker or a PNG's IEND are no cut at the origin; other formats are not looked at")
    func cutAtOriginTrailers() throws {
        let photo = try Self.contents("photo.jpg")
        #expect(try !BodyCompleteness.isCutAtOrigin(.jpeg, photo + (try Self.contents("clip.mp4"))))
        #expect(try !BodyCompleteness.isCutAtOrigin(.png, try Self.contents("logo.png") + [0, 0, 0]))
        let wave = try Self.contents("tone.wav")
        #expect(try !BodyCompleteness.isCutAtOrigin(.riff, Cut(bytes: wave, count: wave.count / 2)))
    }

    /// A JPEG marker segment: `FF`, its code, a length counting itself, its content.
    static func segment(_ code: UInt8, _ content: [UInt8]) -> [UInt8] {
        let length = content.count + 2
        return [0xFF, code, UInt8(length >> 8), UInt8(length & 0xFF)] + content
    }

    @Test("JPEG: stuffed bytes, restart markers and fill bytes stay in the scan; an end marker inside a segment does not end the image")
    func jpegStructures() throws {
        // An EXIF segment holding a thumbnail, itself a JPEG with its own end marker.
        let thumbnail: [UInt8] = [0xFF, 0xD8] + Self.segment(0xDB, [0, 1, 2]) + [0xFF, 0xD9]
        let exif = Self.segment(0xE1, Array("Exif".utf8) + [0, 0] + thumbnail)
        let scan: [UInt8] = [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xD7, 0x78, 0xFF, 0xFF, 0x00, 0x9A]
        let image = [0xFF, 0xD8] + exif + Self.segment(0xDB, [0, 1, 2]) + Self.segment(0xDA, [1, 1, 0, 0, 63, 0]) + scan
            + [0xFF, 0xFF, 0xD9]
        #expect(try BodyCompleteness.check(.jpeg, image) == .complete)
        for length in 0..<image.count - 1 {
            #expect(try BodyCompleteness.check(.jpeg, Cut(bytes: image, count: length)) == BodyCompleteness.jpegEnd, "cut to \(length)")
        }
        // A segment whose length runs past the body.
        #expect(try BodyCompleteness.check(.jpeg, [0xFF, 0xD8] + Self.segment(0xE1, [1, 2, 3]).dropLast()) == BodyCompleteness.jpegEnd)
    }

    @Test("A structure the walk cannot follow is not taken for a cut; past an unknown GIF block, the trailer must end the body")
    func unfollowableStructures() throws {
        // A PNG chunk length no encoder writes (over 2^31 − 1).
        let png = try Self.contents("logo.png")
        var oversized = Array(png.prefix(8)) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("IHDR".utf8)
        #expect(try BodyCompleteness.check(.png, oversized) == .complete)
        oversized = Array(png.prefix(8))
        #expect(try BodyCompleteness.check(.png, oversized) == .cutShort(missing: "its PNG end chunk (IEND)"))
        // A GIF with a block of no known kind after its screen descriptor.
        let gif = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0] + [0x99, 1, 2]
        #expect(try BodyCompleteness.check(.gif, gif + [0x3B]) == .complete)
        #expect(try BodyCompleteness.check(.gif, gif) == .cutShort(missing: "its GIF trailer"))
        // A body whose signature is not its format's (its type came from elsewhere) is not judged.
        #expect(try BodyCompleteness.check(.jpeg, Array("not a JPEG".utf8)) == .complete)
        // An ISO box to the end of the file (size 0) ends the walk.
        let ftyp = ISOBaseMediaTests.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let moov = ISOBaseMediaTests.box("moov", [])
        #expect(try BodyCompleteness.check(.isoBaseMedia, ftyp + moov + [0, 0, 0, 0] + Array("mdat".utf8) + [1, 2, 3]) == .complete)
        // A 64-bit size, past the body.
        let large = [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0, 0, 0, 0, 0, 0x10, 0]
        #expect(try BodyCompleteness.check(.isoBaseMedia, ftyp + moov + large + [1, 2]) == .cutShort(missing: "the end of its 'mdat' box"))
    }

    @Test("The check reads the file a body streamed into, through its descriptor, and leaves its offset alone")
    func readsTheFile() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let photo = try Self.contents("photo.jpg")
        let file = try FileDescriptor.open(FilePath(root + "/body"), .readWrite, options: [.create], permissions: .ownerReadWrite)
        defer { try? file.close() }
        _ = try file.writeAll(photo)
        #expect(try BodyCompleteness.check(.jpeg, FileBytes(file: file, count: photo.count)) == .complete)
        #expect(try BodyCompleteness.check(.jpeg, FileBytes(file: file, count: 900)) == BodyCompleteness.jpegEnd)
        #expect(try file.seek(offset: 0, from: .current) == Int64(photo.count))
        // A file shorter than the size it was given is an error, not a verdict.
        let shrunk = try FileDescriptor.open(FilePath(root + "/shrunk"), .readWrite, options: [.create], permissions: .ownerReadWrite)
        defer { try? shrunk.close() }
        _ = try shrunk.writeAll(photo.prefix(900))
        #expect(throws: ShortRead.self) { try BodyCompleteness.check(.jpeg, FileBytes(file: shrunk, count: photo.count)) }
    }
}
