/// What the first bytes of an ISO base media file (ISO/IEC 14496-12: MPEG-4, M4A, HEIF, AVIF)
/// say about it: the brands of its `ftyp` box and the handlers of the tracks whose boxes are in
/// view. A pure value: no I/O.
///
/// libmagic names such a file by its major brand alone. Cameras and phones write brands of their
/// own in that place (Sony's `XAVC` and `MSNV`, Canon's `CAEP`) and list the standard ones as
/// compatible; an iPhone plays any of them as MPEG-4, whatever libmagic calls them ("data",
/// "audio/mp4"). `AttachmentTypes.refined` decides from these fields instead.
struct ISOBaseMedia: Equatable, Sendable {
    /// The `ftyp` box's major brand.
    var majorBrand: String
    /// The major brand followed by the compatible brands, in the box's order.
    var brands: [String]
    /// The handler types (`vide`, `soun`, `meta`…) of the tracks whose `hdlr` box is in view.
    var handlers: [String] = []
    /// Whether the whole `moov` box is in view, so that `handlers` names every track.
    var allTracksSeen = false
    /// The first sample entry's type (the codec: `avc1`, `hvc1`, `hev1`, `vp09`…) of each video
    /// track whose `stsd` box is in view.
    var videoSampleEntries: [String] = []

    /// Reads `bytes`, the start of a body; `nil` unless they start with an `ftyp` box.
    init?(_ bytes: [UInt8]) {
        guard let ftyp = Self.box(in: bytes, at: 0), ftyp.type == "ftyp", ftyp.end >= ftyp.contentStart + 8,
            bytes.count >= ftyp.contentStart + 8
        else { return nil }
        majorBrand = Self.fourCC(bytes, at: ftyp.contentStart)
        brands = [majorBrand]
        // Minor version (4 bytes), then compatible brands to the end of the box (or of the view).
        var offset = ftyp.contentStart + 8
        while offset + 4 <= min(ftyp.end, bytes.count), brands.count < Self.maximumBrands {
            brands.append(Self.fourCC(bytes, at: offset))
            offset += 4
        }
        readTracks(bytes, from: ftyp.end)
    }

    /// The video codec as far as the bytes in view tell: the first video track's sample entry;
    /// when no video track's sample entry is in view (a `moov` past them), `av01` for a file
    /// listing the `av01` brand, which the AV1 Codec ISO Media File Format Binding gives files
    /// holding AV1 tracks (ffmpeg writes it); otherwise `nil`.
    var videoCodec: String? {
        videoSampleEntries.first ?? (brands.contains("av01") ? "av01" : nil)
    }

    /// Whether any brand is one of `names`.
    func hasBrand(_ names: Set<String>) -> Bool { brands.contains(where: names.contains) }

    /// The most brands read: a box claiming more is hostile or broken, and the first few decide.
    static let maximumBrands = 64
    /// The most boxes walked, so that a view of tiny boxes cannot make the walk long.
    static let maximumBoxes = 256

    /// Walks the top-level boxes after `ftyp` to `moov`, then its `trak` boxes to each handler.
    private mutating func readTracks(_ bytes: [UInt8], from start: Int) {
        var walked = 0
        var offset = start
        while let top = Self.box(in: bytes, at: offset), walked < Self.maximumBoxes {
            walked += 1
            if top.type == "moov" {
                allTracksSeen = top.end <= bytes.count
                var trackOffset = top.contentStart
                while trackOffset < top.end, let trak = Self.box(in: bytes, at: trackOffset), walked < Self.maximumBoxes {
                    walked += 1
                    if trak.type == "trak", let (handler, sampleEntry) = Self.handler(in: bytes, trak: trak, walked: &walked) {
                        handlers.append(handler)
                        if handler == "vide", let sampleEntry { videoSampleEntries.append(sampleEntry) }
                    } else if trak.type == "trak" {
                        allTracksSeen = false
                    }
                    trackOffset = trak.end
                }
                // A walk cut short by the box limit has not seen every track.
                if walked >= Self.maximumBoxes { allTracksSeen = false }
                return
            }
            offset = top.end
        }
    }

    /// The handler type in `trak`'s `mdia/hdlr`, when its bytes are in view, with the type of
    /// the first sample entry of its `mdia/minf/stbl/stsd`, when that is in view too.
    private static func handler(in bytes: [UInt8], trak: Box, walked: inout Int) -> (String, String?)? {
        guard let mdia = child("mdia", of: trak, in: bytes, walked: &walked) else { return nil }
        // hdlr: version and flags (4), pre_defined (4), handler_type (4).
        guard let hdlr = child("hdlr", of: mdia, in: bytes, walked: &walked), hdlr.contentStart + 12 <= min(hdlr.end, bytes.count)
        else { return nil }
        let handler = fourCC(bytes, at: hdlr.contentStart + 8)
        // stsd: version and flags (4), entry_count (4), then the first entry: size (4), type (4).
        var sampleEntry: String?
        if let minf = child("minf", of: mdia, in: bytes, walked: &walked), let stbl = child("stbl", of: minf, in: bytes, walked: &walked),
            let stsd = child("stsd", of: stbl, in: bytes, walked: &walked), stsd.contentStart + 16 <= min(stsd.end, bytes.count)
        {
            sampleEntry = fourCC(bytes, at: stsd.contentStart + 12)
        }
        return (handler, sampleEntry)
    }

    /// The first box of `type` directly inside `parent`, when its header is in view.
    private static func child(_ type: String, of parent: Box, in bytes: [UInt8], walked: inout Int) -> Box? {
        var offset = parent.contentStart
        while offset < parent.end, let found = box(in: bytes, at: offset), walked < maximumBoxes {
            walked += 1
            if found.type == type { return found }
            offset = found.end
        }
        return nil
    }

    /// A box's type and extent; its end may lie past the bytes in view.
    private struct Box {
        var type: String
        var contentStart: Int
        /// Where the box ends: its content ends there too.
        var end: Int
    }

    /// The box whose header starts at `offset`, when the header is in view and its size is sane.
    /// `offset` may be `Int.max`, the end of a box of size 0 (to the end of the file): compared
    /// without adding to it, which would overflow.
    private static func box(in bytes: [UInt8], at offset: Int) -> Box? {
        guard offset >= 0, offset <= bytes.count - 8 else { return nil }
        let size32 = bytes[offset..<offset + 4].reduce(0) { ($0 << 8) | Int($1) }
        let type = fourCC(bytes, at: offset + 4)
        var headerSize = 8
        let size: Int
        switch size32 {
        case 0:
            size = Int.max - offset  // to the end of the file
        case 1:
            guard offset + 16 <= bytes.count else { return nil }
            let size64 = bytes[offset + 8..<offset + 16].reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
            guard size64 >= 16, size64 <= UInt64(Int.max / 2) else { return nil }
            headerSize = 16
            size = Int(size64)
        default:
            size = size32
        }
        guard size >= headerSize else { return nil }
        let (end, overflow) = offset.addingReportingOverflow(size)
        return Box(type: type, contentStart: offset + headerSize, end: overflow ? Int.max : end)
    }

    /// Four bytes as a four-character code; bytes outside printable ASCII become "?".
    private static func fourCC(_ bytes: [UInt8], at offset: Int) -> String {
        String(
            decoding: bytes[offset..<offset + 4].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") },
            as: UTF8.self)
    }
}
