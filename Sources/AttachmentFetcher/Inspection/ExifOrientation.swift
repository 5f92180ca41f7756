/// The orientation a JPEG's Exif metadata declares, read from its first bytes. A pure function of
/// the bytes.
///
/// A camera stores a picture as its sensor reads it and records in Exif how the picture must be
/// turned or mirrored to be upright (Exif 2.3, tag 274 `Orientation`: 1, as stored; 2 to 8, a
/// mirror and a turn). iOS applies it. Android's `BitmapFactory` ignores it and draws the pixels
/// as stored, so a portrait photo taken on a phone held upright shows on its side.
///
/// The tag is read from the first APP1 segment that starts `Exif\0\0`, before the first scan:
/// a TIFF header (`II` little-endian or `MM` big-endian, 42, the offset of IFD0 from the header),
/// then IFD0's count and 12-byte entries (tag, type, count, value). Every read stays inside the
/// segment and the bytes in view, and IFD0 alone is read (no offset to another IFD is followed),
/// so no input can make it read out of bounds or loop.
enum ExifOrientation {
    /// The orientation (2 to 8) that the first Exif segment in `bytes`, the start of a JPEG,
    /// declares; `nil` for 1 (as stored), for none in view, and for a value outside 1 to 8 or
    /// not a single SHORT, which decoders ignore.
    static func orientation(ofJPEG bytes: [UInt8]) -> Int? {
        var reader = BlockReader(bytes, blockSize: Swift.max(1, bytes.count))
        var found: Int?
        _ = try? BodyCompleteness.walkJPEG(&reader) { code, offset, length, reader in
            // Metadata precedes the first scan.
            if code == 0xDA { return false }
            guard code == 0xE1 else { return true }
            // The segment's content, as far as it is in view: "Exif\0\0", then the TIFF header.
            let end = Swift.min(offset + length, reader.count)
            guard end - offset >= 2 + exifHeader.count,
                let content = try reader.bytes(at: offset + 2, count: end - offset - 2),
                content.starts(with: exifHeader)
            else { return true }
            found = orientation(tiff: content.dropFirst(exifHeader.count))
            return false
        }
        return found.flatMap { $0 == 1 ? nil : $0 }
    }

    /// An APP1 segment's identifier for Exif (Exif 2.3, section 4.7.2).
    static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]

    /// Tag 274 of IFD0 in `tiff`, a TIFF structure (TIFF 6.0, section 2), as 1 to 8; `nil`
    /// otherwise.
    static func orientation(tiff: ArraySlice<UInt8>) -> Int? {
        let tiff = Array(tiff)
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false  // "II"
        case (0x4D, 0x4D): bigEndian = true  // "MM"
        default: return nil
        }
        // The number at `offset`, `size` bytes in the header's order; the caller checks bounds.
        func number(at offset: Int, size: Int) -> Int {
            let bytes = tiff[offset..<offset + size]
            return (bigEndian ? Array(bytes) : bytes.reversed()).reduce(0) { $0 << 8 | Int($1) }
        }
        guard number(at: 2, size: 2) == 42 else { return nil }
        let directory = number(at: 4, size: 4)
        guard directory >= 8, directory <= tiff.count - 2 else { return nil }
        let entries = number(at: directory, size: 2)
        for index in 0..<entries {
            let entry = directory + 2 + 12 * index
            // Entries past the bytes in view are not looked for.
            guard entry <= tiff.count - 12 else { return nil }
            guard number(at: entry, size: 2) == 0x0112 else { continue }
            // Type 3 (SHORT), one value, held in the first two bytes of the value field.
            guard number(at: entry + 2, size: 2) == 3, number(at: entry + 4, size: 4) == 1 else { return nil }
            let value = number(at: entry + 8, size: 2)
            return (1...8).contains(value) ? value : nil
        }
        return nil
    }

    /// What orientation `value` asks of a viewer, in exiftool's words ("rotate 90° clockwise").
    static func meaning(_ value: Int) -> String {
        switch value {
        case 2: "mirror horizontally"
        case 3: "rotate 180°"
        case 4: "mirror vertically"
        case 5: "mirror horizontally and rotate 270° clockwise"
        case 6: "rotate 90° clockwise"
        case 7: "mirror horizontally and rotate 90° clockwise"
        case 8: "rotate 270° clockwise"
        default: "as stored"
        }
    }

    /// How a picture of orientation `value` looks drawn as stored: "turned", "mirrored", or both.
    static func drawnAsStored(_ value: Int) -> String {
        switch value {
        case 2, 4: "mirrored"
        case 5, 7: "turned and mirrored"
        default: "turned"
        }
    }
}
