@testable import AttachmentFetcher
import Foundation
import Testing

/// The Exif orientation a JPEG's first bytes declare (`ExifOrientation`), on real files and on
/// hostile ones: every read stays inside the bytes given.
@Suite("Exif orientation")
struct ExifOrientationTests {
    /// A JPEG's start: SOI, a JFIF APP0, then an APP1 segment holding `exif` ("Exif\0\0" and a
    /// TIFF structure), then a quantisation table's segment and SOS.
    static func jpeg(app1 exif: [UInt8], declaredLength: Int? = nil) -> [UInt8] {
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        let length = declaredLength ?? exif.count + 2
        return [0xFF, 0xD8] + app0 + [0xFF, 0xE1, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + exif
            + [0xFF, 0xDB, 0x00, 0x04, 0x00, 0x01] + [0xFF, 0xDA, 0x00, 0x02]
    }

    /// "Exif\0\0", then a TIFF header in `order` ("II" or "MM") whose IFD0 is at `directory` and
    /// holds `entries` (tag, type, count, value as a 16-bit number in the value field's first bytes).
    static func exif(_ order: String, directory: UInt32 = 8, entries: [(tag: UInt16, type: UInt16, count: UInt32, value: UInt16)]) -> [UInt8] {
        let big = order == "MM"
        func u16(_ value: UInt16) -> [UInt8] { big ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func u32(_ value: UInt32) -> [UInt8] { let bytes = (0..<4).map { UInt8(value >> (8 * UInt32($0)) & 0xFF) }; return big ? bytes.reversed() : bytes }
        var tiff = Array(order.utf8) + u16(42) + u32(directory)
        tiff += [UInt8](repeating: 0, count: max(0, Int(directory) - tiff.count))
        tiff += u16(UInt16(entries.count))
        for entry in entries { tiff += u16(entry.tag) + u16(entry.type) + u32(entry.count) + u16(entry.value) + [0, 0] }
        return ExifOrientation.exifHeader + tiff + u32(0)
    }

    @Test("Real files: exiftool's orientation 6 (big-endian) and 8 (little-endian); none in a plain JPEG")
    func realFiles() throws {
        #expect(ExifOrientation.orientation(ofJPEG: try ISOBaseMediaTests.prefix("photo-exif-6.jpg")) == 6)
        #expect(ExifOrientation.orientation(ofJPEG: try ISOBaseMediaTests.prefix("photo-exif-8.jpg")) == 8)
        #expect(ExifOrientation.orientation(ofJPEG: try ISOBaseMediaTests.prefix("photo.jpg")) == nil)
        #expect(ExifOrientation.orientation(ofJPEG: try ISOBaseMediaTests.prefix("photo-progressive.jpg")) == nil)
    }

    @Test("Both byte orders, among other tags; 1 and values outside 1 to 8 or of another type are no orientation")
    func values() {
        let others: [(tag: UInt16, type: UInt16, count: UInt32, value: UInt16)] = [(0x010F, 2, 4, 0x4141), (0x0110, 2, 4, 0x4242)]
        for order in ["II", "MM"] {
            for value: UInt16 in 2...8 {
                let bytes = Self.jpeg(app1: Self.exif(order, entries: others + [(0x0112, 3, 1, value)]))
                #expect(ExifOrientation.orientation(ofJPEG: bytes) == Int(value), "\(order) \(value)")
            }
            for value: UInt16 in [0, 1, 9, 0xFFFF] {
                #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: Self.exif(order, entries: [(0x0112, 3, 1, value)]))) == nil)
            }
            // A LONG, or a count of 2: not the tag Exif defines.
            #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: Self.exif(order, entries: [(0x0112, 4, 1, 6)]))) == nil)
            #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: Self.exif(order, entries: [(0x0112, 3, 2, 6)]))) == nil)
        }
        // Mixed-up byte order marks and a wrong magic number.
        var mixed = Self.exif("II", entries: [(0x0112, 3, 1, 6)])
        mixed[7] = 0x4D
        #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: mixed)) == nil)
        var magic = Self.exif("MM", entries: [(0x0112, 3, 1, 6)])
        magic[9] = 43
        #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: magic)) == nil)
        // An APP1 of XMP first, then Exif: the Exif one is read. Not a JPEG: nothing.
        let xmp: [UInt8] = [0xFF, 0xE1, 0x00, 0x0A] + Array("http:/".utf8) + [0, 0]
        var both = Self.jpeg(app1: Self.exif("MM", entries: [(0x0112, 3, 1, 6)]))
        both.insert(contentsOf: xmp, at: 2)
        #expect(ExifOrientation.orientation(ofJPEG: both) == 6)
        #expect(ExifOrientation.orientation(ofJPEG: Array("GIF89a".utf8) + Self.exif("MM", entries: [(0x0112, 3, 1, 6)])) == nil)
        // Exif after the first scan's header is not metadata.
        let late = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02] + Self.jpeg(app1: Self.exif("MM", entries: [(0x0112, 3, 1, 6)])).dropFirst(2)
        #expect(ExifOrientation.orientation(ofJPEG: Array(late)) == nil)
    }

    @Test("Hostile Exif: cut anywhere, offsets past the end or into the header, entry counts past the view, segment lengths that lie")
    func hostile() {
        let whole = Self.jpeg(app1: Self.exif("MM", entries: [(0x010F, 2, 4, 0), (0x0112, 3, 1, 6)]))
        #expect(ExifOrientation.orientation(ofJPEG: whole) == 6)
        // Every prefix: no crash, and the tag only once its entry is whole in view.
        let entryEnd = whole.count - 4 - 6 - 4  // before the next IFD's offset, the DQT and SOS segments
        for count in 0...whole.count {
            let found = ExifOrientation.orientation(ofJPEG: Array(whole.prefix(count)))
            #expect(found == (count >= entryEnd ? 6 : nil), "\(count)")
        }
        // IFD0 past the end, at the header itself (0, 4: a loop back), at the last byte.
        for directory: UInt32 in [0, 4, 7, 0xFFFF_FFFF, 0x7FFF_FFFF, 10_000, 25] {
            let bytes = Self.jpeg(app1: Self.exif("II", directory: 8, entries: [(0x0112, 3, 1, 6)]))
            var pointed = bytes
            // The IFD0 offset sits after SOI (2), APP0 (18), the APP1 header (4), "Exif\0\0" (6) and "II*\0".
            let at = 2 + 18 + 4 + 6 + 4
            for index in 0..<4 { pointed[at + index] = UInt8(directory >> (8 * UInt32(index)) & 0xFF) }
            #expect(ExifOrientation.orientation(ofJPEG: pointed) == nil, "\(directory)")
        }
        // 65,535 entries claimed in a few bytes; an entry count running past the segment into the
        // bytes after it (the tag there is not read).
        #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: ExifOrientation.exifHeader + Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0xFF, 0xFF])) == nil)
        let short = ExifOrientation.exifHeader + Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1]
        let after: [UInt8] = [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]
        #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: short) + after) == nil)
        // A segment length of 0 or 1 (which would not advance), and one far past the view.
        for length in [0, 1] {
            #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: Self.exif("MM", entries: [(0x0112, 3, 1, 6)]), declaredLength: length)) == nil)
        }
        #expect(ExifOrientation.orientation(ofJPEG: Self.jpeg(app1: Self.exif("MM", entries: [(0x0112, 3, 1, 6)]), declaredLength: 0xFFFF)) == 6)
        // A TIFF structure cut to its header, or shorter.
        for count in 0..<8 {
            #expect(ExifOrientation.orientation(tiff: ArraySlice(Array("MM".utf8) + [0, 42, 0, 0, 0, 8].prefix(max(0, count - 2)))) == nil)
        }
        // Thousands of empty segments before the Exif one: walked, bounded by the bytes in view.
        let crowded = [0xFF, 0xD8] + [UInt8]((0..<1000).flatMap { _ in [0xFF, 0xE2, 0x00, 0x02] }) + Self.jpeg(app1: Self.exif("MM", entries: [(0x0112, 3, 1, 6)])).dropFirst(2)
        #expect(ExifOrientation.orientation(ofJPEG: crowded) == 6)
    }

    @Test("What each orientation asks, and how the picture drawn as stored looks")
    func meanings() {
        #expect(ExifOrientation.meaning(6) == "rotate 90° clockwise")
        #expect(ExifOrientation.meaning(8) == "rotate 270° clockwise")
        #expect(ExifOrientation.meaning(3) == "rotate 180°")
        #expect(ExifOrientation.drawnAsStored(2) == "mirrored" && ExifOrientation.drawnAsStored(5) == "turned and mirrored")
        #expect(ExifOrientation.drawnAsStored(6) == "turned")
    }
}
