@testable import AttachmentFetcher
import Foundation
import Testing

/// The `ftyp` brands and track handlers read from a body's first bytes, on real files and on
/// boxes a hostile server may send.
@Suite("ISO base media")
struct ISOBaseMediaTests {
    static func prefix(_ file: String, _ count: Int = 4096) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.mediaDirectory + "/" + file)).prefix(count))
    }

    /// A box: 32-bit size, type, content.
    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + content.count)
        return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + content
    }

    @Test("Real files: brands, and the handlers of the tracks in view")
    func realFiles() throws {
        let camera = try #require(ISOBaseMedia(try Self.prefix("clip-xavc.mp4")))
        #expect(camera.majorBrand == "XAVC")
        #expect(camera.brands.contains("mp41"))
        // The whole 3.5 KB file is in view, its moov box last, as ffmpeg writes it.
        #expect(camera.handlers == ["vide"] && camera.allTracksSeen)
        // The first 64 bytes hold the brands and no track.
        let start = try #require(ISOBaseMedia(try Self.prefix("clip-xavc.mp4", 64)))
        #expect(start.handlers.isEmpty && !start.allTracksSeen)
        let faststart = try #require(ISOBaseMedia(try Self.prefix("clip.mp4")))
        #expect(faststart.handlers == ["vide"] && faststart.allTracksSeen)
        let audio = try #require(ISOBaseMedia(try Self.prefix("tone-mp42.mp4")))
        #expect(audio.majorBrand == "mp42" && audio.handlers == ["soun"] && audio.allTracksSeen)
        // Each video track's codec, from its first sample entry; none for sound.
        #expect(faststart.videoSampleEntries == ["avc1"] && camera.videoSampleEntries == ["avc1"])
        #expect(ISOBaseMedia(try Self.prefix("clip-hev1.mp4"))?.videoSampleEntries == ["hev1"])
        #expect(ISOBaseMedia(try Self.prefix("clip-hvc1.mp4"))?.videoSampleEntries == ["hvc1"])
        #expect(ISOBaseMedia(try Self.prefix("clip-vp9.mp4"))?.videoSampleEntries == ["vp09"])
        #expect(audio.videoSampleEntries.isEmpty)
        // Cut before the sample entries: the handler is known, the codec not.
        #expect(ISOBaseMedia(try Self.prefix("clip-hev1.mp4", 460))?.videoSampleEntries == [])
        // Cut inside the moov box: the track in view is named, but not every track is seen.
        let cut = try #require(ISOBaseMedia(try Self.prefix("clip.mp4", 400)))
        #expect(!cut.allTracksSeen)
        #expect(ISOBaseMedia(try Self.prefix("photo.jpg")) == nil)
    }

    @Test("libmagic's answer, corrected from the brands and the tracks")
    func refinedAnswers() throws {
        #expect(AttachmentTypes.refined("application/octet-stream", file: ISOBaseMedia(try Self.prefix("clip-xavc.mp4"))) == "video/mp4")
        #expect(AttachmentTypes.refined("audio/mp4", file: ISOBaseMedia(try Self.prefix("clip-msnv.mp4"))) == "video/mp4")
        #expect(AttachmentTypes.refined("video/mp4", file: ISOBaseMedia(try Self.prefix("tone-mp42.mp4"))) == "audio/mp4")
        #expect(AttachmentTypes.refined("image/heif", file: ISOBaseMedia(try Self.prefix("photo-mif1.avif"))) == "image/avif")
        // libmagic's own MPEG-4 names stand when the class agrees; other formats keep theirs.
        #expect(AttachmentTypes.refined("audio/x-m4a", file: ISOBaseMedia(try Self.prefix("tone.m4a"))) == "audio/x-m4a")
        #expect(AttachmentTypes.refined("video/x-m4v", file: ISOBaseMedia(try Self.prefix("clip.m4v"))) == "video/x-m4v")
        #expect(AttachmentTypes.refined("video/quicktime", file: ISOBaseMedia(try Self.prefix("clip.mov"))) == "video/quicktime")
        #expect(AttachmentTypes.refined("video/3gpp", file: ISOBaseMedia(try Self.prefix("clip.3gp"))) == "video/3gpp")
        #expect(AttachmentTypes.refined("image/heic", file: ISOBaseMedia(try Self.prefix("photo.heic"))) == "image/heic")
        #expect(AttachmentTypes.refined("image/jpeg", file: ISOBaseMedia(try Self.prefix("photo.jpg"))) == "image/jpeg")
        // A brand no list knows, with no MPEG-4 brand beside it: libmagic's answer stands.
        let unknown = Self.box("ftyp", Array("abcd".utf8) + [0, 0, 0, 0] + Array("wxyz".utf8))
        #expect(AttachmentTypes.refined("application/octet-stream", file: ISOBaseMedia(unknown)) == "application/octet-stream")
    }

    @Test("The video codec: the sample entry in view, else the av01 brand")
    func videoCodec() throws {
        #expect(ISOBaseMedia(try Self.prefix("clip-av1.mp4"))?.videoCodec == "av01")
        let late = try #require(ISOBaseMedia(try Self.prefix("clip-av1-moov-last.mp4")))
        #expect(late.videoSampleEntries == [] && late.brands.contains("av01") && late.videoCodec == "av01")
        #expect(ISOBaseMedia(try Self.prefix("clip.mp4"))?.videoCodec == "avc1")
        // Brands alone without av01: unknown.
        #expect(ISOBaseMedia(Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2mp41".utf8)))?.videoCodec == nil)
    }

    @Test("Hostile boxes: sizes of 0, 1 (64-bit), too small, past the end, and endless tiny boxes")
    func hostileBoxes() {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0] + Array("mp41".utf8))
        // A moov box of size 0 runs to the end of the file: its tracks may lie past the view.
        let endless = ftyp + [0, 0, 0, 0] + Array("moov".utf8)
        #expect(ISOBaseMedia(endless)?.allTracksSeen == false)
        // Any other box of size 0 ends the walk there: nothing follows it (the next box's offset
        // is past every file; reading a header there overflowed, a trap that ended the process).
        for type in ["mdat", "free", "meta", "moof"] {
            let rest = ftyp + [0, 0, 0, 0] + Array(type.utf8) + Self.box("moov", Self.box("trak", []))
            #expect(ISOBaseMedia(rest)?.handlers == [], "\(type)")
            #expect(ISOBaseMedia(rest)?.allTracksSeen == false, "\(type)")
        }
        // A 64-bit size larger than any file, and one smaller than its header.
        let huge = ftyp + [0, 0, 0, 1] + Array("moov".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(ISOBaseMedia(huge)?.handlers == [])
        let small = ftyp + [0, 0, 0, 1] + Array("moov".utf8) + [0, 0, 0, 0, 0, 0, 0, 3]
        #expect(ISOBaseMedia(small)?.handlers == [])
        #expect(ISOBaseMedia(Self.box("ftyp", [])) == nil)
        #expect(ISOBaseMedia([0, 0, 0, 4] + Array("ftyp".utf8)) == nil)
        // A ftyp box claiming 4 GB of brands stops at the view and at 64 brands.
        let wide = [0xFF, 0xFF, 0xFF, 0xF0] + Array("ftypisom".utf8) + [UInt8](repeating: 0x61, count: 4000)
        #expect(ISOBaseMedia(wide)?.brands.count == ISOBaseMedia.maximumBrands)
        // Thousands of 8-byte boxes inside moov: the walk stops.
        let tiny = [UInt8]((0..<500).flatMap { _ in Self.box("free", []) })
        let crowded = ftyp + Self.box("moov", tiny + Self.box("trak", Self.box("mdia", Self.box("hdlr", [UInt8](repeating: 0, count: 8) + Array("vide".utf8)))))
        let walked = ISOBaseMedia(crowded)
        #expect(walked?.handlers == [] && walked?.allTracksSeen == false)
    }

    /// The classifier's call: the bytes, and what they say as ISO base media.
    func animated(_ mime: String, _ bytes: [UInt8]) -> String? {
        AnimatedImage.animation(mime: mime, bytes: bytes, file: ISOBaseMedia(bytes)).animatedFormat
    }

    @Test("Animation flags: WebP's VP8X, PNG's acTL before IDAT, AVIF's avis brand")
    func animationFlags() throws {
        #expect(animated("image/webp", try Self.prefix("animated.webp")) == "WebP")
        #expect(animated("image/webp", try Self.prefix("photo.webp")) == nil)
        #expect(animated("image/png", try Self.prefix("animated.png")) == "PNG (APNG)")
        #expect(animated("image/png", try Self.prefix("logo.png")) == nil)
        #expect(animated("image/avif", try Self.prefix("animated.avif")) != nil)
        #expect(animated("image/avif", try Self.prefix("photo.avif")) == nil)
        // A chunk length over 2^31 - 1 ends the walk; a cut chunk list says still.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        #expect(!AnimatedImage.isAnimatedPNG(png + [0xFF, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8) + Array("acTL".utf8)))
        #expect(!AnimatedImage.isAnimatedPNG(png + [0, 0, 0]))
    }

    @Test("GIF: a second image or a loop extension in view is an animation, a trailer after one image a still; otherwise unknown")
    func gifAnimation() throws {
        let animated = try Self.prefix("animated.gif"), still = try Self.prefix("still.gif")
        #expect(AnimatedImage.animation(mime: "image/gif", bytes: animated, file: nil) == .animated(format: "GIF"))
        #expect(AnimatedImage.animation(mime: "image/gif", bytes: still, file: nil) == .still)
        // The still GIF cut before its trailer: one image so far, no loop extension.
        #expect(AnimatedImage.animation(mime: "image/gif", bytes: Array(still.dropLast()), file: nil) == .perhaps(format: "GIF"))
        // ImageMagick's animation: the NETSCAPE2.0 loop extension comes before the first image,
        // so a view ending inside that image already tells.
        let loop = try #require(animated.indices.first { animated[$0...].starts(with: Array("NETSCAPE2.0".utf8)) })
        let firstImage = try #require(animated.indices.first { $0 > loop && animated[$0] == 0x2C })
        #expect(AnimatedImage.isAnimatedGIF(Array(animated.prefix(loop + 10))) == nil)  // its name cut
        #expect(AnimatedImage.isAnimatedGIF(Array(animated.prefix(loop + 11))) == true)
        #expect(AnimatedImage.isAnimatedGIF(Array(animated.prefix(firstImage + 40))) == true)
        // Every prefix of both: never a crash; the still one never taken for an animation.
        for count in 0...still.count { #expect(AnimatedImage.isAnimatedGIF(Array(still.prefix(count))) != true, "\(count)") }
        for count in 0...animated.count { _ = AnimatedImage.isAnimatedGIF(Array(animated.prefix(count))) }
        // Hostile: a block no decoder knows, thousands of empty extensions, a colour table past the view.
        let header = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0]
        #expect(AnimatedImage.isAnimatedGIF(header + [0x99]) == nil)
        #expect(AnimatedImage.isAnimatedGIF(header + [UInt8]((0..<1000).flatMap { _ in [0x21, 0xF9, 0x00] }) + [0x3B]) == false)
        #expect(AnimatedImage.isAnimatedGIF(Array("GIF89a".utf8) + [1, 0, 1, 0, 0x87, 0, 0, 1, 2]) == nil)
        #expect(AnimatedImage.isAnimatedGIF(Array("RIFF".utf8)) == false)
    }
}
