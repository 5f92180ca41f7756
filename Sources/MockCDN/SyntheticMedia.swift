// Deterministic synthetic media: a type-specific header followed by filler.
//
// Byte `i` of a body of extension `ext` and size `size` is
//   header(ext, size)[i]                               if i < header.count
//   trailer(ext, size)[i - (size - trailer.count)]     if i >= size - trailer.count
//   filler(ext)[(i - header.count) % fillerPeriod]     otherwise
// so the server can stream any size from a precomputed filler without
// materialising the body. The trailer is the end mark a reader of the format
// looks for last (a JPEG's EOI, a PNG's IEND, a GIF's trailer), so a whole
// synthetic image ends as an encoder's does.

/// Deterministic synthetic media bodies (valid type headers + filler) served by ``MockCDNServer``.
public enum SyntheticMedia {
    /// The media types iOS attaches: "jpg","png","gif","mp3","m4a","wav","aiff","mp4","mpg","avi".
    public static let mediaExtensions: [String] = ["jpg", "png", "gif", "mp3", "m4a", "wav", "aiff", "mp4", "mpg", "avi"]

    /// The supported extensions: the media ones and, for negative tests,
    /// "html","webp","heic","svg","txt","bin" (random-looking bytes).
    public static let extensions: [String] = mediaExtensions + ["html", "webp", "heic", "svg", "txt", "bin"]

    /// The MIME type served by default for an extension (case-insensitive), or `nil` if unsupported.
    public static func contentType(forExtension ext: String) -> String? {
        switch ext.lowercased() {
        case "jpg": return "image/jpeg"
        case "png": return "image/png"
        case "gif": return "image/gif"
        case "mp3": return "audio/mpeg"
        case "m4a": return "audio/mp4"
        case "wav": return "audio/wav"
        case "aiff": return "audio/aiff"
        case "mp4": return "video/mp4"
        case "mpg": return "video/mpeg"
        case "avi": return "video/x-msvideo"
        case "html": return "text/html"
        case "webp": return "image/webp"
        case "heic": return "image/heic"
        case "svg": return "image/svg+xml"
        case "txt": return "text/plain"
        case "bin": return "application/octet-stream"
        default: return nil
        }
    }

    /// The whole body of `size` bytes (for tests with small sizes; deterministic: same ext+size → same bytes).
    /// An unsupported extension yields the random-looking "bin" bytes.
    public static func body(extension ext: String, size: Int) -> [UInt8] {
        let size = max(0, size)
        let header = self.header(extension: ext, size: size)
        if size <= header.count {
            return Array(header[0..<size])
        }
        let filler = self.filler(forExtension: ext)
        let trailer = self.trailer(extension: ext, size: size)
        var out = [UInt8]()
        out.reserveCapacity(size)
        out.append(contentsOf: header)
        var remaining = size - header.count - trailer.count
        while remaining > 0 {
            let n = min(remaining, filler.count)
            out.append(contentsOf: filler[0..<n])
            remaining -= n
        }
        out.append(contentsOf: trailer)
        return out
    }

    // MARK: - Internals shared with the server

    /// Length of one period of every filler pattern (64 KiB).
    static let fillerPeriod = 65_536

    /// The kind of filler used after the header.
    enum FillerKind: Sendable {
        case binary, html, svg, text
    }

    static func fillerKind(forExtension ext: String) -> FillerKind {
        switch ext.lowercased() {
        case "html": return .html
        case "svg": return .svg
        case "txt": return .text
        default: return .binary
        }
    }

    /// One period (``fillerPeriod`` bytes) of the filler that follows the header of `ext`.
    static func filler(forExtension ext: String) -> [UInt8] {
        filler(kind: fillerKind(forExtension: ext))
    }

    static func filler(kind: FillerKind) -> [UInt8] {
        switch kind {
        case .binary: return binaryFiller
        case .html: return htmlFiller
        case .svg: return svgFiller
        case .text: return textFiller
        }
    }

    static let binaryFiller: [UInt8] = {
        // splitmix64: deterministic, random-looking, never mistaken for text or a known format.
        var state: UInt64 = 0x4D6F_636B_4344_4E21  // "MockCDN!"
        var out = [UInt8]()
        out.reserveCapacity(fillerPeriod)
        while out.count < fillerPeriod {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            for shift in stride(from: 0, to: 64, by: 8) {
                out.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
            }
        }
        return out
    }()

    /// Builds a text filler from 64-byte lines (64 divides the period, so it tiles seamlessly).
    private static func textFiller(lines: [String]) -> [UInt8] {
        let lineLength = 64
        let padded: [[UInt8]] = lines.map { line in
            var bytes = Array(line.utf8.prefix(lineLength - 1))
            while bytes.count < lineLength - 1 { bytes.append(UInt8(ascii: " ")) }
            bytes.append(UInt8(ascii: "\n"))
            return bytes
        }
        var out = [UInt8]()
        out.reserveCapacity(fillerPeriod)
        var i = 0
        while out.count < fillerPeriod {
            out.append(contentsOf: padded[i % padded.count])
            i += 1
        }
        return out
    }

    static let htmlFiller: [UInt8] = textFiller(lines: [
        "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>",
        "<p>Sed do eiusmod tempor incididunt ut labore et dolore.</p>",
        "<p>Ut enim ad minim veniam, quis nostrud exercitation.</p>",
        "<p>Duis aute irure dolor in reprehenderit in voluptate.</p>",
    ])

    static let svgFiller: [UInt8] = textFiller(lines: [
        "<rect x=\"10\" y=\"10\" width=\"30\" height=\"30\" fill=\"#336699\"/>",
        "<circle cx=\"50\" cy=\"50\" r=\"20\" fill=\"#993366\"/>",
        "<!-- synthetic filler for mock-cdn tests -->",
        "<line x1=\"0\" y1=\"0\" x2=\"100\" y2=\"100\" stroke=\"#000\"/>",
    ])

    static let textFiller: [UInt8] = textFiller(lines: [
        "The quick brown fox jumps over the lazy dog, again and again.",
        "Synthetic plain text used as filler by the mock CDN server.",
        "Pack my box with five dozen liquor jugs, said the sphinx.",
        "How vexingly quick daft zebras jump over the sleeping cat.",
    ])

    // MARK: - Headers

    /// The type-specific header of a body of `ext` with total size `size` (size fields are filled in).
    static func header(extension ext: String, size: Int) -> [UInt8] {
        var w = ByteWriter()
        switch ext.lowercased() {
        case "jpg":
            w.bytes([0xFF, 0xD8])  // SOI
            // APP0 JFIF
            w.bytes([0xFF, 0xE0]); w.be16(16); w.ascii("JFIF"); w.bytes([0x00, 0x01, 0x01, 0x00])
            w.be16(1); w.be16(1); w.bytes([0x00, 0x00])
            // DQT
            w.bytes([0xFF, 0xDB]); w.be16(67); w.bytes([0x00])
            for i in 0..<64 { w.bytes([UInt8(1 + (i % 16))]) }
            // SOF0 baseline 100x100, 3 components
            w.bytes([0xFF, 0xC0]); w.be16(17); w.bytes([0x08]); w.be16(100); w.be16(100)
            w.bytes([0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00])
            // DHT (one small DC table)
            w.bytes([0xFF, 0xC4]); w.be16(20); w.bytes([0x00])
            w.bytes([0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
            w.bytes([0x00])
            // SOS
            w.bytes([0xFF, 0xDA]); w.be16(12); w.bytes([0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00])
        case "png":
            w.bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            var ihdr = ByteWriter()
            ihdr.ascii("IHDR"); ihdr.be32(100); ihdr.be32(100); ihdr.bytes([8, 2, 0, 0, 0])
            w.be32(13); w.bytes(ihdr.out); w.be32(crc32(ihdr.out))
            // IDAT spanning the rest of the body but its CRC and the IEND chunk (the trailer).
            w.be32(UInt32(clamping: max(0, size - 8 - 25 - 8 - 16))); w.ascii("IDAT")
            w.bytes([0x78, 0x9C])
        case "gif":
            w.ascii("GIF89a"); w.le16(100); w.le16(100); w.bytes([0xF0, 0x00, 0x00])
            w.bytes([0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF])  // 2-entry global colour table
            w.bytes([0x2C]); w.le16(0); w.le16(0); w.le16(100); w.le16(100); w.bytes([0x00])
            w.bytes([0x02])  // LZW minimum code size
        case "mp3":
            // ID3v2.3 tag with one TIT2 frame, then MPEG-1 Layer III frames.
            var frame = ByteWriter()
            let title = Array("Synthetic".utf8)
            frame.ascii("TIT2"); frame.be32(UInt32(title.count + 1)); frame.bytes([0, 0, 0]); frame.bytes(title)
            w.ascii("ID3"); w.bytes([0x03, 0x00, 0x00])
            w.syncsafe32(UInt32(frame.out.count)); w.bytes(frame.out)
            w.bytes([0xFF, 0xFB, 0x90, 0x64])
        case "m4a":
            w.isoFtyp(major: "M4A ", minor: 0, compatible: ["M4A ", "mp42", "isom"])
            w.mdatHeader(totalSize: size)
        case "mp4":
            w.isoFtyp(major: "isom", minor: 0x200, compatible: ["isom", "iso2", "avc1", "mp41"])
            w.mdatHeader(totalSize: size)
        case "heic":
            w.isoFtyp(major: "heic", minor: 0, compatible: ["mif1", "heic"])
            w.mdatHeader(totalSize: size)
        case "wav":
            w.ascii("RIFF"); w.le32(UInt32(clamping: max(0, size - 8))); w.ascii("WAVE")
            w.ascii("fmt "); w.le32(16); w.le16(1); w.le16(2); w.le32(44_100); w.le32(176_400); w.le16(4); w.le16(16)
            w.ascii("data"); w.le32(UInt32(clamping: max(0, size - 44)))
        case "aiff":
            let soundBytes = max(0, size - 54)
            w.ascii("FORM"); w.be32(UInt32(clamping: max(0, size - 8))); w.ascii("AIFF")
            w.ascii("COMM"); w.be32(18); w.be16(2); w.be32(UInt32(clamping: soundBytes / 4)); w.be16(16)
            w.bytes([0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0])  // 44100 Hz, 80-bit extended
            w.ascii("SSND"); w.be32(UInt32(clamping: soundBytes + 8)); w.be32(0); w.be32(0)
        case "mpg":
            // MPEG-2 program stream pack header + system header + video PES with a sequence header.
            w.bytes([0x00, 0x00, 0x01, 0xBA, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01, 0x01, 0x89, 0xC3, 0xF8])
            w.bytes([0x00, 0x00, 0x01, 0xBB, 0x00, 0x0C, 0x80, 0x44, 0xE1, 0x04, 0xE1, 0xFF])
            w.bytes([0xE0, 0xE0, 0xE8, 0xC0, 0x20, 0x00])
            w.bytes([0x00, 0x00, 0x01, 0xE0, 0x07, 0xEC, 0x81, 0x80, 0x05, 0x21, 0x00, 0x01, 0x00, 0x01])
            w.bytes([0x00, 0x00, 0x01, 0xB3, 0x06, 0x40, 0x64, 0x13, 0xFF, 0xFF, 0xE0, 0x18])
        case "avi":
            w.ascii("RIFF"); w.le32(UInt32(clamping: max(0, size - 8))); w.ascii("AVI ")
            w.ascii("LIST"); w.le32(4 + 8 + 56); w.ascii("hdrl")
            w.ascii("avih"); w.le32(56)
            w.le32(40_000)  // microseconds per frame (25 fps)
            w.le32(0); w.le32(0); w.le32(0x10)  // max bytes/s, padding, flags (HASINDEX)
            w.le32(1); w.le32(0); w.le32(1); w.le32(0)  // frames, initial, streams, buffer size
            w.le32(100); w.le32(100)  // width, height
            w.le32(0); w.le32(0); w.le32(0); w.le32(0)  // reserved
            w.ascii("JUNK"); w.le32(UInt32(clamping: max(0, size - w.out.count - 8)))
        case "webp":
            w.ascii("RIFF"); w.le32(UInt32(clamping: max(0, size - 8))); w.ascii("WEBP")
            w.ascii("VP8 "); w.le32(UInt32(clamping: max(0, size - 20)))
            w.bytes([0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A]); w.le16(100); w.le16(100)
        case "html":
            w.ascii("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
            w.ascii("<title>Synthetic document</title>\n</head>\n<body>\n")
        case "svg":
            w.ascii("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            w.ascii("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\" viewBox=\"0 0 100 100\">\n")
        case "txt":
            w.ascii("Synthetic text document\n=======================\n\n")
        default:  // "bin" and unknown: filler only
            break
        }
        return w.out
    }

    /// The last bytes of a body of `ext` with total size `size`: a JPEG's end marker (`FFD9`), a
    /// PNG's image data CRC and `IEND` chunk, a GIF's block terminator and trailer (`3B`); empty
    /// for other types, or when the header leaves no room for it.
    static func trailer(extension ext: String, size: Int) -> [UInt8] {
        let trailer: [UInt8]
        switch ext.lowercased() {
        case "jpg": trailer = [0xFF, 0xD9]
        case "png": trailer = [0, 0, 0, 0] + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        case "gif": trailer = [0x00, 0x3B]
        default: return []
        }
        return size >= header(extension: ext, size: size).count + trailer.count ? trailer : []
    }

    /// CRC-32 (IEEE) as used by PNG chunks.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}

/// Tiny helper to assemble binary headers.
struct ByteWriter {
    var out: [UInt8] = []

    mutating func bytes(_ b: [UInt8]) { out.append(contentsOf: b) }
    mutating func ascii(_ s: String) { out.append(contentsOf: Array(s.utf8)) }
    mutating func be16(_ v: UInt16) { out.append(UInt8(v >> 8)); out.append(UInt8(v & 0xFF)) }
    mutating func le16(_ v: UInt16) { out.append(UInt8(v & 0xFF)); out.append(UInt8(v >> 8)) }
    mutating func be32(_ v: UInt32) {
        for shift in [24, 16, 8, 0] { out.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }
    mutating func le32(_ v: UInt32) {
        for shift in [0, 8, 16, 24] { out.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }
    mutating func syncsafe32(_ v: UInt32) {
        for shift in [21, 14, 7, 0] { out.append(UInt8((v >> UInt32(shift)) & 0x7F)) }
    }

    /// An ISO BMFF `ftyp` box.
    mutating func isoFtyp(major: String, minor: UInt32, compatible: [String]) {
        be32(UInt32(16 + 4 * compatible.count)); ascii("ftyp"); ascii(major); be32(minor)
        for c in compatible { ascii(c) }
    }

    /// An ISO BMFF `mdat` box header covering the rest of a body of `totalSize` bytes.
    mutating func mdatHeader(totalSize: Int) {
        be32(UInt32(clamping: max(8, totalSize - out.count))); ascii("mdat")
    }
}
