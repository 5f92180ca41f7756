/// Whether a body of a known format reaches the end its own structure promises: a cheap check,
/// in pure functions of the bytes, for bodies whose end nothing in their framing vouched for.
///
/// libcurl reports success for a body that ended where the server stopped, when nothing said
/// where it should end: an HTTP/2 stream reset with `NO_ERROR` before its end, an HTTP/1.1 body
/// without `Content-Length` or chunked framing cut by the connection's close, a compressed
/// stream cut inside honest framing (libcurl 7.88 does not check that its decoder reached the
/// stream's end). Such a body is checked against its format before it is attached or cached:
/// - JPEG: the marker segments walked from the start to the end marker (`FFD9`), segment lengths
///   skipped and entropy-coded data scanned for the next marker (`FF00` and the restart markers
///   `FFD0`–`FFD7` do not end it); bytes after the end marker do not matter (a motion photo
///   appends a video there);
/// - PNG: the chunks walked to `IEND`, which must be whole;
/// - GIF: the blocks walked to the trailer (`3B`); past a block it does not know, the last byte
///   must be the trailer;
/// - RIFF (WebP, WAV, AVI) and AIFF (`FORM`): the size in the header, plus its 8 bytes, is within
///   the body;
/// - ISO base media (MPEG-4, M4A, HEIF, AVIF): the top-level boxes walked; none may end past the
///   body, the last must end where the body does, and the box that describes the media (`moov`,
///   or HEIF's `meta`) and a media data box (`mdat`) must be among them, so that a cut between
///   two boxes is caught too;
/// - BMP: the file size in its header is within the body.
/// Other types (MP3, MPEG, ICO…) are not checked. A structure the check cannot follow (a length
/// no encoder writes) is not taken for a cut: only a body that ends inside the structure is.
enum BodyCompleteness {
    /// The formats with a check of their own.
    enum Format: Sendable, Hashable {
        case jpeg, png, gif, riff, aiff, isoBaseMedia, bmp

        /// The last bytes of a whole file of the format, and what they are called, for a JPEG,
        /// a PNG and a GIF; `nil` for the others.
        var endMark: (bytes: [UInt8], name: String)? {
            switch self {
            case .jpeg: ([0xFF, 0xD9], "its JPEG end marker")
            case .png: ([0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82], "its PNG end chunk (IEND)")
            // Every block ends with an empty sub-block: a whole GIF's last two bytes.
            case .gif: ([0x00, 0x3B], "its GIF trailer")
            case .riff, .aiff, .isoBaseMedia, .bmp: nil
            }
        }

        /// The format of a body of type `media`, `nil` when it has no check.
        init?(_ media: MediaType) {
            switch media.fileExtension {
            case "jpg": self = .jpeg
            case "png": self = .png
            case "gif": self = .gif
            case "webp", "wav", "avi": self = .riff
            case "aiff": self = .aiff
            case "mp4", "m4a", "heic", "avif": self = .isoBaseMedia
            case "bmp": self = .bmp
            default: return nil
            }
        }
    }

    /// Whether a body its framing vouched for (an honest `Content-Length`, chunked framing) is
    /// a file cut short at the origin (an upload that stopped part way, say): for a JPEG, a PNG
    /// or a GIF, whose last bytes are their end mark (`FFD9`, the `IEND` chunk, `00 3B`), the body
    /// is read only when its last bytes are something else (bytes after a JPEG's end marker, a
    /// PNG's data after `IEND`), and then checked whole; other formats are not looked at. A cut
    /// that happens to end on the mark's bytes (right after an EXIF thumbnail's end marker, on a
    /// GIF's `00 3B` inside its data) passes: catching it would take a pass over every body.
    /// Read errors are thrown.
    static func isCutAtOrigin(_ format: Format, _ body: some BodyBytes) throws -> Bool {
        guard let mark = format.endMark else { return false }
        let tail = try body.read(at: max(0, body.count - mark.bytes.count), length: mark.bytes.count)
        if tail.elementsEqual(mark.bytes) { return false }
        return try check(format, body) != .complete
    }

    /// What the check found.
    enum Verdict: Sendable, Hashable {
        /// Nothing shows that the body was cut short: its format's end is there (or its
        /// structure could not be followed).
        case complete
        /// The body ends before `missing` ("its JPEG end marker").
        case cutShort(missing: String)
    }

    /// Checks `body` as `format`. Reads what the walk needs, a block at a time: for a JPEG or a
    /// GIF the whole body, for the others a few headers. Read errors are thrown.
    static func check(_ format: Format, _ body: some BodyBytes) throws -> Verdict {
        var reader = BlockReader(body, blockSize: format == .jpeg || format == .gif ? 64 * 1024 : 4 * 1024)
        switch format {
        case .jpeg: return try jpeg(&reader)
        case .png: return try png(&reader)
        case .gif: return try gif(&reader)
        case .riff: return try declaredSize(&reader, magic: "RIFF", bigEndian: false, missing: "the end its RIFF header announces")
        case .aiff: return try declaredSize(&reader, magic: "FORM", bigEndian: true, missing: "the end its FORM header announces")
        case .isoBaseMedia: return try isoBaseMedia(&reader)
        case .bmp: return try bmp(&reader)
        }
    }

    // MARK: JPEG

    static let jpegEnd = Verdict.cutShort(missing: Format.jpeg.endMark?.name ?? "")

    /// The JPEG check: the walk's end decides.
    private static func jpeg<Source>(_ reader: inout BlockReader<Source>) throws -> Verdict {
        switch try walkJPEG(&reader, visit: { _, _, _, _ in true }) {
        case .endMarker, .notJPEG, .unknownLength, .stopped: .complete
        case .bodyEnded: jpegEnd
        }
    }

    /// How a walk over a JPEG's segments ended.
    enum JPEGWalkEnd: Sendable, Hashable {
        /// At the end marker (`FFD9`).
        case endMarker
        /// The body ended first.
        case bodyEnded
        /// The body does not start with SOI (`FFD8`).
        case notJPEG
        /// A segment's length below 2, which no encoder writes: the walk cannot go on.
        case unknownLength
        /// `visit` asked to stop.
        case stopped
    }

    /// Walks a JPEG's marker segments from its start (ITU T.81, annex B): markers are `FF` then a
    /// code; all but SOI, EOI, TEM and RSTn are followed by a two-byte length that counts itself;
    /// a scan's segment (SOS) is followed by entropy-coded data, in which `FF` is followed by `00`
    /// (a stuffed byte) or a restart marker. `visit` gets each segment's code, the offset of its
    /// length field and that length (at least 2), before the walk checks that the segment ends
    /// within the body, and returns whether to go on.
    static func walkJPEG<Source>(
        _ reader: inout BlockReader<Source>,
        visit: (_ code: UInt8, _ offset: Int, _ length: Int, _ reader: inout BlockReader<Source>) throws -> Bool
    ) throws -> JPEGWalkEnd {
        guard let start = try reader.bytes(at: 0, count: 2) else { return .bodyEnded }
        guard start.elementsEqual([0xFF, 0xD8]) else { return .notJPEG }
        var offset = 2
        while true {
            // The next marker: normally right here; bytes before it are skipped, as decoders do.
            guard let marker = try reader.firstIndex(of: 0xFF, from: offset) else { return .bodyEnded }
            // Fill bytes (`FF` repeated) may precede a marker's code.
            var codeOffset = marker + 1
            while try reader.byte(at: codeOffset) == 0xFF { codeOffset += 1 }
            guard let code = try reader.byte(at: codeOffset) else { return .bodyEnded }
            offset = codeOffset + 1
            switch code {
            case 0xD9:
                return .endMarker
            case 0x00, 0x01, 0xD0...0xD8:
                // A stuffed byte out of place, TEM, a restart marker, another SOI: no length.
                continue
            default:
                guard let high = try reader.byte(at: offset), let low = try reader.byte(at: offset + 1) else { return .bodyEnded }
                let length = Int(high) << 8 | Int(low)
                guard length >= 2 else { return .unknownLength }
                guard try visit(code, offset, length, &reader) else { return .stopped }
                offset += length
                guard offset <= reader.count else { return .bodyEnded }
                if code == 0xDA {
                    guard let next = try entropyCodedDataEnd(&reader, from: offset) else { return .bodyEnded }
                    offset = next
                }
            }
        }
    }

    /// Where the entropy-coded data that starts at `offset` ends: at the first `FF` followed by a
    /// marker's code; `nil` when the body ends first.
    private static func entropyCodedDataEnd<Source>(_ reader: inout BlockReader<Source>, from offset: Int) throws -> Int? {
        var offset = offset
        while let found = try reader.firstIndex(of: 0xFF, from: offset) {
            guard let next = try reader.byte(at: found + 1) else { return nil }
            switch next {
            case 0x00, 0xD0...0xD7: offset = found + 2
            case 0xFF: offset = found + 1
            default: return found
            }
        }
        return nil
    }

    // MARK: PNG

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// PNG (ISO/IEC 15948), section 5: the signature, then chunks of a length (4 bytes, at most
    /// 2^31 − 1), a type, the data and a CRC (4 bytes); `IEND` is the last.
    private static func png<Source>(_ reader: inout BlockReader<Source>) throws -> Verdict {
        let missing = Verdict.cutShort(missing: Format.png.endMark?.name ?? "")
        guard let signature = try reader.bytes(at: 0, count: 8) else { return missing }
        guard signature.elementsEqual(pngSignature) else { return .complete }
        var offset = 8
        while true {
            guard let header = try reader.bytes(at: offset, count: 8) else { return missing }
            let length = bigEndian(header.prefix(4))
            guard length <= Int(Int32.max) else { return .complete }
            offset += 12 + length
            guard offset <= reader.count else { return missing }
            if header.dropFirst(4).elementsEqual("IEND".utf8) { return .complete }
        }
    }

    // MARK: GIF

    /// The GIF check: the walk's end decides; past a block no decoder knows, the trailer must at
    /// least end the body.
    private static func gif<Source>(_ reader: inout BlockReader<Source>) throws -> Verdict {
        let missing = Verdict.cutShort(missing: Format.gif.endMark?.name ?? "")
        switch try walkGIF(&reader, visit: { _, _, _ in true }) {
        case .trailer, .notGIF, .stopped: return .complete
        case .bodyEnded: return missing
        case .unknownBlock: return try reader.byte(at: reader.count - 1) == 0x3B ? .complete : missing
        }
    }

    /// How a walk over a GIF's blocks ended.
    enum GIFWalkEnd: Sendable, Hashable {
        /// At the trailer (`3B`).
        case trailer
        /// The body ended first.
        case bodyEnded
        /// The body does not start `GIF8`.
        case notGIF
        /// At a block no decoder knows: the walk cannot go on.
        case unknownBlock
        /// `visit` asked to stop.
        case stopped
    }

    /// Walks a GIF's blocks (GIF89a): the header (6 bytes), the logical screen descriptor (7)
    /// and its global colour table, then extensions (`21`, a label, data sub-blocks) and images
    /// (`2C`, a descriptor of 9 bytes, a local colour table, the LZW code size, data
    /// sub-blocks), to the trailer (`3B`). `visit` gets each extension's or image's introducer and
    /// offset before the walk steps over it, and returns whether to go on.
    static func walkGIF<Source>(
        _ reader: inout BlockReader<Source>,
        visit: (_ introducer: UInt8, _ offset: Int, _ reader: inout BlockReader<Source>) throws -> Bool
    ) throws -> GIFWalkEnd {
        guard let signature = try reader.bytes(at: 0, count: 4) else { return .bodyEnded }
        guard signature.elementsEqual("GIF8".utf8) else { return .notGIF }
        guard let screenFlags = try reader.byte(at: 10) else { return .bodyEnded }
        var offset = 13 + colourTableSize(screenFlags)
        while true {
            guard let introducer = try reader.byte(at: offset) else { return .bodyEnded }
            switch introducer {
            case 0x3B:
                return .trailer
            case 0x21:
                guard try visit(introducer, offset, &reader) else { return .stopped }
                guard let next = try subBlocksEnd(&reader, from: offset + 2) else { return .bodyEnded }
                offset = next
            case 0x2C:
                guard try visit(introducer, offset, &reader) else { return .stopped }
                guard let imageFlags = try reader.byte(at: offset + 9) else { return .bodyEnded }
                // The descriptor, its colour table, then the LZW minimum code size.
                guard let next = try subBlocksEnd(&reader, from: offset + 10 + colourTableSize(imageFlags) + 1) else { return .bodyEnded }
                offset = next
            default:
                return .unknownBlock
            }
        }
    }

    /// The bytes of the colour table a GIF's flags declare (bit 7, and the size in bits 0–2).
    private static func colourTableSize(_ flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
    }

    /// Where the data sub-blocks starting at `offset` end (after their empty terminator); `nil`
    /// when the body ends first.
    private static func subBlocksEnd<Source>(_ reader: inout BlockReader<Source>, from offset: Int) throws -> Int? {
        var offset = offset
        while let size = try reader.byte(at: offset) {
            offset += 1 + Int(size)
            if size == 0 { return offset }
        }
        return nil
    }

    // MARK: Sizes in headers

    /// A container whose header (`magic`, then a 32-bit size of what follows those 8 bytes)
    /// announces its end.
    private static func declaredSize<Source>(
        _ reader: inout BlockReader<Source>, magic: String, bigEndian isBigEndian: Bool, missing: String
    ) throws -> Verdict {
        guard let header = try reader.bytes(at: 0, count: 8), header.prefix(4).elementsEqual(magic.utf8) else {
            return reader.count < 8 ? .cutShort(missing: missing) : .complete
        }
        let size = isBigEndian ? bigEndian(header.dropFirst(4)) : littleEndian(header.dropFirst(4))
        return size + 8 <= reader.count ? .complete : .cutShort(missing: missing)
    }

    /// BMP: "BM", then the file's size (32 bits, little-endian).
    private static func bmp<Source>(_ reader: inout BlockReader<Source>) throws -> Verdict {
        let missing = Verdict.cutShort(missing: "the size its BMP header announces")
        guard let header = try reader.bytes(at: 0, count: 6) else { return missing }
        guard header.prefix(2).elementsEqual("BM".utf8) else { return .complete }
        return littleEndian(header.dropFirst(2)) <= reader.count ? .complete : missing
    }

    // MARK: ISO base media

    /// ISO/IEC 14496-12, section 4.2: top-level boxes of a 32-bit size (1: a 64-bit size follows
    /// the type; 0: to the end of the file) and a type.
    private static func isoBaseMedia<Source>(_ reader: inout BlockReader<Source>) throws -> Verdict {
        var offset = 0
        var described = false
        var mediaData = false
        var last = ""
        while offset < reader.count {
            guard let header = try reader.bytes(at: offset, count: 8) else {
                return .cutShort(missing: offset == 0 ? "its first box" : "the end of the box after its '\(last)' box")
            }
            let type = String(decoding: header.dropFirst(4), as: UTF8.self)
            last = type
            if type == "moov" || type == "meta" { described = true }
            if type == "mdat" { mediaData = true }
            var size = bigEndian(header.prefix(4))
            var headerSize = 8
            if size == 1 {
                guard let large = try reader.bytes(at: offset + 8, count: 8) else { return .cutShort(missing: "the end of its '\(type)' box") }
                guard large.prefix(1) == [0] else { return .complete }  // 2^56 bytes and more: no file is that large
                size = bigEndian(large)
                headerSize = 16
            }
            if size == 0 { break }  // to the end of the file
            guard size >= headerSize else { return .complete }
            offset += size
            guard offset <= reader.count else { return .cutShort(missing: "the end of its '\(type)' box") }
        }
        if !described { return .cutShort(missing: "the box that describes its media ('moov' or 'meta')") }
        if !mediaData { return .cutShort(missing: "its media data box ('mdat')") }
        return .complete
    }

    // MARK: Numbers

    private static func bigEndian(_ bytes: some Collection<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: some Collection<UInt8>) -> Int {
        bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}

/// A body's bytes where a check reads them: the file it streamed into (positioned reads), or
/// bytes in memory.
protocol BodyBytes {
    /// How many bytes the body has.
    var count: Int { get }
    /// Up to `length` bytes from `offset` (fewer only where the body ends).
    func read(at offset: Int, length: Int) throws -> [UInt8]
}

extension Array: BodyBytes where Element == UInt8 {
    func read(at offset: Int, length: Int) -> [UInt8] {
        Array(self[Swift.min(offset, count)..<Swift.min(offset + length, count)])
    }
}

/// Reads a body a block at a time, so that a walk over small fields reads each block once.
struct BlockReader<Source: BodyBytes> {
    private let source: Source
    private let blockSize: Int
    private var block: [UInt8] = []
    private var blockStart = 0
    /// The body's size.
    let count: Int

    init(_ source: Source, blockSize: Int) {
        self.source = source
        self.blockSize = blockSize
        count = source.count
    }

    /// The byte at `offset`, `nil` past the body's end.
    mutating func byte(at offset: Int) throws -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        if !holds(offset, 1) { try load(at: offset, length: blockSize, needing: 1) }
        return block[offset - blockStart]
    }

    /// `length` bytes from `offset`, `nil` unless the body has them all.
    mutating func bytes(at offset: Int, count length: Int) throws -> ArraySlice<UInt8>? {
        guard offset >= 0, length <= count - offset else { return nil }
        if !holds(offset, length) { try load(at: offset, length: Swift.max(blockSize, length), needing: length) }
        return block[offset - blockStart..<offset - blockStart + length]
    }

    /// The offset of the first `value` at or after `offset`, `nil` when the body has none.
    mutating func firstIndex(of value: UInt8, from offset: Int) throws -> Int? {
        var offset = Swift.max(0, offset)
        while offset < count {
            if !holds(offset, 1) { try load(at: offset, length: blockSize, needing: 1) }
            if let found = block[(offset - blockStart)...].firstIndex(of: value) { return blockStart + found }
            offset = blockStart + block.count
        }
        return nil
    }

    private func holds(_ offset: Int, _ length: Int) -> Bool {
        offset >= blockStart && offset + length <= blockStart + block.count
    }

    /// Reads the block at `offset`; a body that reads fewer than `needed` bytes there (a file
    /// that shrank under the check) is an error.
    private mutating func load(at offset: Int, length: Int, needing needed: Int) throws {
        block = try source.read(at: offset, length: Swift.min(length, count - offset))
        blockStart = offset
        guard block.count >= needed else {
            block = []
            throw ShortRead(offset: offset)
        }
    }
}

/// A body read fewer bytes than its size promised.
struct ShortRead: Error, CustomStringConvertible {
    var offset: Int

    var description: String { "the body read short at byte \(offset)" }
}
