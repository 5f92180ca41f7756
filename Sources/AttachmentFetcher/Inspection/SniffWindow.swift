/// The bytes of a body that its type is decided from: the first `capacity` bytes after any ID3v2
/// tags at its start, collected as the body streams in.
///
/// Most MP3 files begin with an ID3v2 tag (title, artist, and often cover art or tagger padding)
/// that can run to hundreds of kilobytes; libmagic, shown only a tag, cannot tell what follows.
/// An iPhone plays such a file, so the window skips each tag by its own size field (a syncsafe
/// integer, plus a 10-byte footer when the tag says it has one) and keeps the bytes after it.
/// What follows a tag must then be MPEG audio (`hadID3Tag` tells the classifier so): ADTS AAC or
/// FLAC behind an ID3 tag is not an MP3 to iOS.
///
/// A pure value: no I/O. The skipped bytes still count towards the body's size wherever the
/// body is counted; this window only chooses which bytes libmagic sees.
struct SniffWindow: Sendable {
    /// How many bytes after the tags to keep.
    let capacity: Int
    /// The bytes kept so far (at most `capacity`, or a few more while a tag header is checked).
    private(set) var bytes: [UInt8] = []
    /// Whether at least one ID3v2 tag was skipped.
    private(set) var hadID3Tag = false
    /// Tag bytes still to skip.
    private var remainingTagBytes = 0
    /// Tags skipped so far: a body of nothing but tags must not keep the window waiting forever.
    private var tagsSkipped = 0
    /// Whether the window is still looking for a tag header at its start.
    private var lookingForTag = true

    /// The most consecutive tags skipped; a further one is left for libmagic to see.
    static let maximumTags = 4

    init(capacity: Int) {
        self.capacity = capacity
        bytes.reserveCapacity(capacity)
    }

    /// Whether the window holds all it will hold: the type can be decided now.
    var isFull: Bool { !lookingForTag && remainingTagBytes == 0 && bytes.count >= capacity }

    /// Forgets everything, keeping the buffer's capacity, for the next body.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        hadID3Tag = false
        remainingTagBytes = 0
        tagsSkipped = 0
        lookingForTag = true
    }

    /// Takes the next chunk of the body.
    mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk[...]
        while !rest.isEmpty {
            if remainingTagBytes > 0 {
                let skipped = min(remainingTagBytes, rest.count)
                remainingTagBytes -= skipped
                rest = rest.dropFirst(skipped)
                continue
            }
            if !lookingForTag {
                if bytes.count < capacity { bytes.append(contentsOf: rest.prefix(capacity - bytes.count)) }
                return
            }
            // Looking for a tag: gather up to a header's worth, then decide.
            let wanted = ID3Tag.headerSize - bytes.count
            bytes.append(contentsOf: rest.prefix(wanted))
            rest = rest.dropFirst(wanted)
            decideTag()
        }
    }

    /// With the first bytes in, either skips a tag or stops looking for one.
    private mutating func decideTag() {
        switch ID3Tag.size(ofHeader: bytes) {
        case .needMoreBytes:
            return
        case .notATag:
            lookingForTag = false
        case .tag(let size):
            hadID3Tag = true
            tagsSkipped += 1
            remainingTagBytes = size - bytes.count
            bytes.removeAll(keepingCapacity: true)
            lookingForTag = tagsSkipped < Self.maximumTags
        }
    }
}

/// The ID3v2 tag header (id3.org, ID3 tag version 2.4.0 - Main Structure, section 3.1).
enum ID3Tag {
    /// "ID3", version, revision, flags, and a four-byte syncsafe size.
    static let headerSize = 10

    /// What the first bytes of a body say.
    enum HeaderAnswer: Equatable {
        /// Fewer than a header's bytes, all consistent with a tag so far.
        case needMoreBytes
        /// The bytes do not start with a valid ID3v2 header.
        case notATag
        /// A tag of `size` bytes in all: header, frames, padding and footer.
        case tag(size: Int)
    }

    /// Reads an ID3v2 header at the start of `bytes`.
    static func size(ofHeader bytes: [UInt8]) -> HeaderAnswer {
        let magic: [UInt8] = [0x49, 0x44, 0x33]  // "ID3"
        for (index, byte) in bytes.prefix(3).enumerated() where byte != magic[index] { return .notATag }
        guard bytes.count >= headerSize else { return .needMoreBytes }
        // Major version 2, 3 or 4 (0xFF is forbidden in version bytes); size bytes below 0x80.
        guard (2...4).contains(bytes[3]), bytes[4] != 0xFF else { return .notATag }
        guard bytes[6..<10].allSatisfy({ $0 < 0x80 }) else { return .notATag }
        let frames = bytes[6..<10].reduce(0) { ($0 << 7) | Int($1) }
        // Version 2.4's footer flag (bit 4) adds a 10-byte copy of the header after the frames.
        let footer = bytes[3] == 4 && bytes[5] & 0x10 != 0 ? headerSize : 0
        return .tag(size: headerSize + frames + footer)
    }
}
