import SystemPackage

extension FileDescriptor {
    /// Reads the open file from its first byte, `size` bytes at a time (positioned reads, so the
    /// descriptor's offset is left alone), handing each piece to `body` until the end of the file
    /// or until `body` returns `false`. Read errors, and `body`'s, are thrown.
    func forEachChunk(ofSize size: Int, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var buffer = [UInt8](repeating: 0, count: size)
        var offset: Int64 = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try read(fromAbsoluteOffset: offset, into: $0) }
            if count == 0 { return }
            offset += Int64(count)
            guard try buffer.withUnsafeBytes({ try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }) else { return }
        }
    }
}
