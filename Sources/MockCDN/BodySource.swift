import NIOCore

/// Precomputed filler buffers: two periods back to back, so any window of up to one period
/// starting inside the first period is a zero-copy slice.
enum FillerBuffers {
    static let binary = doubled(.binary)
    static let html = doubled(.html)
    static let svg = doubled(.svg)
    static let text = doubled(.text)

    static func buffer(for kind: SyntheticMedia.FillerKind) -> ByteBuffer {
        switch kind {
        case .binary: return binary
        case .html: return html
        case .svg: return svg
        case .text: return text
        }
    }

    private static func doubled(_ kind: SyntheticMedia.FillerKind) -> ByteBuffer {
        let period = SyntheticMedia.filler(kind: kind)
        var buffer = ByteBufferAllocator().buffer(capacity: period.count * 2)
        buffer.writeBytes(period)
        buffer.writeBytes(period)
        return buffer
    }
}

/// Where a response body's bytes come from; bodies are produced chunk by chunk, never materialised.
enum BodySource {
    /// No body.
    case empty
    /// A small, fully built body.
    case fixed(ByteBuffer)
    /// A synthetic media body: `header` followed by the periodic `filler` (a doubled period),
    /// its last bytes `trailer` (empty when the body has no room for it), `size` bytes in all.
    case media(header: ByteBuffer, filler: ByteBuffer, trailer: ByteBuffer, size: Int)

    /// Builds the body of `ext` with `size` bytes.
    static func media(extension ext: String, size: Int) -> BodySource {
        let header = SyntheticMedia.header(extension: ext, size: size)
        let trailer = SyntheticMedia.trailer(extension: ext, size: size)
        let filler = FillerBuffers.buffer(for: SyntheticMedia.fillerKind(forExtension: ext))
        return .media(header: ByteBuffer(bytes: header), filler: filler, trailer: ByteBuffer(bytes: trailer), size: size)
    }

    /// Total body length in bytes.
    var count: Int {
        switch self {
        case .empty: return 0
        case .fixed(let buffer): return buffer.readableBytes
        case .media(_, _, _, let size): return size
        }
    }

    /// Up to `maxLength` bytes starting at `offset` (never more than one filler period; may be shorter
    /// at the header/filler and filler/trailer boundaries). `offset` must be below ``count``.
    func chunk(at offset: Int, maxLength: Int) -> ByteBuffer {
        let length = min(maxLength, count - offset)
        switch self {
        case .empty:
            return ByteBuffer()
        case .fixed(let buffer):
            return buffer.getSlice(at: buffer.readerIndex + offset, length: length)!
        case .media(let header, let filler, let trailer, let size):
            let headerCount = header.readableBytes
            if offset < headerCount {
                return header.getSlice(at: header.readerIndex + offset, length: min(length, headerCount - offset))!
            }
            let trailerStart = size - trailer.readableBytes
            if offset >= trailerStart {
                return trailer.getSlice(at: trailer.readerIndex + offset - trailerStart, length: length)!
            }
            let period = SyntheticMedia.fillerPeriod
            let start = (offset - headerCount) % period
            return filler.getSlice(at: filler.readerIndex + start, length: min(length, period, trailerStart - offset))!
        }
    }
}
