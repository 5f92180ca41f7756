import SystemPackage

/// The bytes of an open file, read where they are asked for (`pread`: the descriptor's offset,
/// where the body is being written, is left alone). `count` is the size the caller knows, so
/// that nothing asks the file system for it.
struct FileBytes: BodyBytes {
    var file: FileDescriptor
    var count: Int

    func read(at offset: Int, length: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var filled = 0
        while filled < length {
            let read = try bytes.withUnsafeMutableBytes {
                try file.read(fromAbsoluteOffset: Int64(offset + filled), into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
            if read == 0 { break }
            filled += read
        }
        bytes.removeLast(length - filled)
        return bytes
    }
}
