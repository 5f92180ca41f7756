import AttachmentFetcher
import DequeModule
import Foundation
import Synchronization
import SystemPackage

/// One line of a batch.
enum BatchLine: Sendable {
    /// A payload: the line without its line break.
    case payload(Data)
    /// A line longer than the payload limit, skipped as it streamed past: never held whole.
    case tooLong
    /// An empty line, or one of spaces and tabs only: no payload, no outcome (its index is left out).
    case blank
}

/// Cuts a stream of bytes into lines (`\n` or `\r\n`), in one pass, holding at most one line of
/// at most `limit` bytes (plus a `\r`): a longer line is dropped as soon as it is known to be
/// too long, and the rest of it skipped as it arrives, however long it goes on.
struct LineSplitter {
    /// The longest line kept, in bytes, line break excluded.
    let limit: Int
    /// The start of the line still arriving.
    private var partial: [UInt8] = []
    /// Whether the line still arriving is already too long.
    private var skipping = false

    init(limit: Int) { self.limit = limit }

    /// Reads `chunk`, the next bytes of the input; every line it completes is appended to `lines`.
    mutating func feed(_ chunk: ArraySlice<UInt8>, into lines: inout [BatchLine]) {
        var start = chunk.startIndex
        while start < chunk.endIndex {
            let newline = Self.firstNewline(in: chunk, from: start)
            let end = newline ?? chunk.endIndex
            if skipping {
                // Nothing kept.
            } else if partial.count + (end - start) > limit + 1 {
                skipping = true
                partial = []
            } else {
                partial.append(contentsOf: chunk[start..<end])
            }
            guard let newline else { return }
            endLine(into: &lines)
            start = newline + 1
        }
    }

    /// Where the next `\n` of `chunk` at or after `start` is: `memchr`, as fast as a loop over
    /// the bytes in a release build and many times faster in a debug one (which the tests run).
    private static func firstNewline(in chunk: ArraySlice<UInt8>, from start: Int) -> Int? {
        chunk.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            let offset = start - chunk.startIndex
            guard let found = memchr(base + offset, Int32(UInt8(ascii: "\n")), buffer.count - offset) else { return nil }
            return chunk.startIndex + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        }
    }

    /// At the end of the input: an unfinished last line counts as a line.
    mutating func finish(into lines: inout [BatchLine]) {
        if skipping || !partial.isEmpty { endLine(into: &lines) }
    }

    private mutating func endLine(into lines: inout [BatchLine]) {
        if partial.last == UInt8(ascii: "\r") { partial.removeLast() }
        if skipping || partial.count > limit {
            lines.append(.tooLong)
            skipping = false
            partial = []
        } else if partial.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
            lines.append(.blank)
            partial.removeAll(keepingCapacity: true)
        } else {
            lines.append(.payload(Data(partial)))
            partial.removeAll(keepingCapacity: true)
        }
    }
}

/// Blocking reads of a file descriptor, a chunk at a time.
enum ChunkReader {
    /// How much one read asks for.
    static let chunkSize = 64 * 1024

    /// Reads at most `count` bytes (at most `chunkSize`) into `buffer`, which is made
    /// `chunkSize` long once and reused; the bytes read are `buffer[..<n]` for the `n` returned,
    /// 0 at the end of the input.
    static func read(_ descriptor: FileDescriptor, into buffer: inout [UInt8], count: Int = chunkSize) throws(Errno) -> Int {
        if buffer.count != chunkSize { buffer = [UInt8](repeating: 0, count: chunkSize) }
        let wanted = min(count, chunkSize)
        return try buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in
                try CommandSyscalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<wanted]))
            }
        }.get()
    }
}

/// Reads a payload from a path or from standard input ('-'): at most `limit` bytes and one
/// more (besides a line ending), so that a larger input (`yes | fetch-attachment -`) is known to
/// be too large without being read any further. The line ending that ends a file (`echo`,
/// `jq -c` and editors write one) is not the payload's, as a batch's lines keep none: a
/// payload of `limit` bytes and a newline is not too large.
enum PayloadInput {
    /// The bytes read, and whether there were more than `limit`.
    struct Result {
        var bytes: Data
        var exceedsLimit: Bool
        /// The size of a pretty-printed payload read as its compact form (`bytes`), if it was.
        var prettyPrintedBytes: Int? = nil
    }

    /// How much of a payload over the limit is read to see whether its compact form fits: a
    /// pretty-printed payload takes a few times its compact size.
    static let compactingWindow = 1 << 20

    /// Why a payload could not be read.
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    static func read(_ path: String, limit: Int) throws(ReadError) -> Result {
        do {
            let descriptor = try CommandSyscalls.openForReading(path)
            defer { CommandSyscalls.closeInput(descriptor) }
            var bytes = Data()
            var chunk: [UInt8] = []
            let enough = limit + 3  // a byte over the limit, after a "\r\n" taken off
            while bytes.count < enough {
                let count = try ChunkReader.read(descriptor, into: &chunk, count: enough - bytes.count)
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
            let ended = bytes.count < enough
            if ended, bytes.last == UInt8(ascii: "\n") {
                bytes.removeLast()
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            }
            guard bytes.count > limit else { return Result(bytes: bytes, exceedsLimit: false) }
            // Over the limit: a pretty-printed payload (APNs and FCM count what is sent, which
            // is compact) is read as its compact form when that fits.
            while bytes.count <= compactingWindow {
                let count = try ChunkReader.read(descriptor, into: &chunk, count: compactingWindow + 1 - bytes.count)
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
            if bytes.count <= compactingWindow {
                let compact = JSONWhitespace.removed(from: bytes)
                if compact.count <= limit { return Result(bytes: Data(compact), exceedsLimit: false, prettyPrintedBytes: bytes.count) }
            }
            return Result(bytes: bytes.prefix(limit + 1), exceedsLimit: true)
        } catch {
            throw ReadError(description: StandardStreams.readFailure(of: path, error))
        }
    }

    /// What is printed for an input larger than the limit: the original content stands. A file
    /// or standard input is read no further; the rest of a batch's line is skipped.
    static func tooLargeOutcome(limit: Int, what: String, rest: String = "read no further") -> Outcome {
        Outcome(
            status: .original, reason: .invalidPayload,
            detail: "\(what) is more than \(limit) bytes, the largest payload accepted (\(rest))",
            vendor: nil, attachments: [], warnings: [], elapsed: .zero, payload: Data())
    }

    /// What is printed for a payload when no fetcher could be made (its output or cache
    /// directory cannot be used): a payload that needs no file gets its own outcome (an
    /// internal push, no attachment, malformed); one that does, `storage`, the detail the
    /// message alone, with no second code.
    static func unusableOutcome(_ error: AttachmentFetcherError, payload: Data, configuration: PushAttachmentFetcher.Configuration) -> Outcome {
        PushAttachmentFetcher.outcome(of: payload, withoutFetcher: error, configuration: configuration)
    }
}

/// Lines read from a file descriptor a chunk at a time: what `FileLineSource` and `LineReader`
/// share.
struct ChunkedLines {
    var splitter: LineSplitter
    var chunk: [UInt8] = []
    /// The input ended (or a read failed).
    var atEnd = false
    /// The error of a read that failed, which ended the input early.
    var readError: Errno?

    init(limit: Int) { splitter = LineSplitter(limit: limit) }

    /// Reads one chunk of `descriptor` and appends the lines it completed (at the end of the
    /// input, the unfinished last one too).
    mutating func readChunk(_ descriptor: FileDescriptor, into lines: inout [BatchLine]) {
        let count: Int
        do {
            count = try ChunkReader.read(descriptor, into: &chunk)
        } catch {
            readError = error
            atEnd = true
            return
        }
        if count == 0 {
            splitter.finish(into: &lines)
            atEnd = true
        } else {
            splitter.feed(chunk[..<count], into: &lines)
        }
    }
}

/// The lines of a regular file, read a chunk at a time as the batch's workers take them: the
/// file is never held whole, however large.
final class FileLineSource: Sendable {
    private struct State {
        var input: ChunkedLines
        var ready = Deque<BatchLine>()
        var nextIndex = 0
    }

    private let descriptor: FileDescriptor
    private let state: Locked<State>

    init(descriptor: FileDescriptor, limit: Int) {
        self.descriptor = descriptor
        state = Locked(State(input: ChunkedLines(limit: limit)))
    }

    /// Whether the file has ended and each of its lines was taken: a file read to its last line
    /// but not yet to its end is read once more (a regular file's read does not wait).
    var handedOutEveryLine: Bool {
        state.withLock { state in
            while state.ready.isEmpty, !state.input.atEnd {
                var lines: [BatchLine] = []
                state.input.readChunk(descriptor, into: &lines)
                state.ready.append(contentsOf: lines)
            }
            return state.ready.isEmpty
        }
    }

    /// Whether the file holds more than `count` lines in all, taken or not, reading ahead as far
    /// as that needs: a batch starts no more workers than there are lines.
    func holdsMoreLines(than count: Int) -> Bool {
        state.withLock { state in
            while state.nextIndex + state.ready.count <= count, !state.input.atEnd {
                var lines: [BatchLine] = []
                state.input.readChunk(descriptor, into: &lines)
                state.ready.append(contentsOf: lines)
            }
            return state.nextIndex + state.ready.count > count
        }
    }

    /// The next line and its 0-based index, or `nil` at the end of the file (or after a read
    /// error, see `readError`). Reads the next chunk when no whole line is left.
    func take() -> (index: Int, line: BatchLine)? {
        state.withLock { state -> (index: Int, line: BatchLine)? in
            while state.ready.isEmpty {
                guard !state.input.atEnd else { return nil }
                var lines: [BatchLine] = []
                state.input.readChunk(descriptor, into: &lines)
                state.ready.append(contentsOf: lines)
            }
            defer { state.nextIndex += 1 }
            return (state.nextIndex, state.ready.removeFirst())
        }
    }

    /// The error of a read that failed, which ended the input early.
    var readError: Errno? { state.withLock { $0.input.readError } }

    /// How many payload lines (not blank) the regular file at `descriptor` holds (read through
    /// once, a chunk at a time, from its start; the offset is put back), for the progress bar.
    static func countLines(_ descriptor: FileDescriptor) -> Int? {
        guard let start = CommandSyscalls.offset(of: descriptor) else { return nil }
        defer { CommandSyscalls.seek(descriptor, to: start) }
        var chunk: [UInt8] = []
        var lines = 0
        // Blank lines (spaces, tabs, a carriage return) are skipped, not payloads: not counted.
        var hasContent = false
        while let count = try? ChunkReader.read(descriptor, into: &chunk), count > 0 {
            for byte in chunk[..<count] {
                switch byte {
                case UInt8(ascii: "\n"):
                    if hasContent { lines += 1 }
                    hasContent = false
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
                default: hasContent = true
                }
            }
        }
        return lines + (hasContent ? 1 : 0)
    }
}

/// Reads lines from a file descriptor (standard input, a pipe, a FIFO) on Dispatch's threads,
/// the reads blocking: the batch asks for the next lines only when it has room for them.
final class LineReader: Sendable {

    private let descriptor: FileDescriptor
    /// Touched only by `readLines`, which runs on a serial queue: the lock is never contended.
    private let state: Locked<ChunkedLines>
    private static let queue = DispatchQueue(label: "fetch-attachment.batch-input")

    init(descriptor: FileDescriptor, limit: Int) {
        self.descriptor = descriptor
        state = Locked(ChunkedLines(limit: limit))
    }

    /// Whether `next()` has answered with no lines: the input has ended and every line was
    /// handed out.
    var ended: Bool { state.withLock { $0.atEnd } }

    /// The error of a read that failed, which ended the input early.
    var readError: Errno? { state.withLock { $0.readError } }

    /// The next lines: at least one, and every whole line that arrived with it (one hop to the
    /// reading thread per chunk of input, not per line); none at the end of the input. A last
    /// line without a line break counts.
    ///
    /// Once `interruption` comes, none: a read still waiting for input (a terminal, a producer
    /// that writes nothing) is left to its thread, and what it reads is not processed.
    func next(until interruption: BatchInterruption) async -> [BatchLine] {
        await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            let key = interruption.whenInterrupted { answer.resume([]) }
            Self.queue.async {
                answer.resume(self.readLines())
                if let key { interruption.forget(key) }
            }
        }
    }

    /// A continuation resumed by whichever answer comes first; later ones are dropped.
    private final class FirstAnswer: Sendable {
        private let continuation: Locked<CheckedContinuation<[BatchLine], Never>?>

        init(_ continuation: CheckedContinuation<[BatchLine], Never>) { self.continuation = Locked(continuation) }

        func resume(_ lines: [BatchLine]) {
            continuation.withLock { waiting in defer { waiting = nil }; return waiting }?.resume(returning: lines)
        }
    }

    private func readLines() -> [BatchLine] {
        state.withLock { state -> [BatchLine] in
            var lines: [BatchLine] = []
            while lines.isEmpty, !state.atEnd { state.readChunk(descriptor, into: &lines) }
            return lines
        }
    }
}

/// Where a batch's payloads come from.
enum BatchInput: Sendable {
    /// A regular file, read a chunk at a time as workers take its lines.
    case file(FileLineSource)
    /// Lines read as they arrive (standard input, a pipe, a FIFO).
    case stream(LineReader)

    var isFile: Bool {
        if case .file = self { true } else { false }
    }

    /// Whether every line of the input was handed out: known for a file (whose reads do not
    /// wait), `false` for a stream, which an interrupted batch does not ask (a read may be
    /// waiting on it).
    var handedOutEveryLine: Bool {
        if case .file(let source) = self { source.handedOutEveryLine } else { false }
    }

    /// The error of a read that ended the input early.
    var readError: Errno? {
        switch self {
        case .file(let source): source.readError
        case .stream(let reader): reader.readError
        }
    }
}

/// JSON's insignificant white space.
enum JSONWhitespace {
    /// `bytes` without the spaces, tabs and line breaks outside strings: a pretty-printed JSON
    /// text's compact form (any other text loses the same bytes, and stays what it was).
    static func removed(from bytes: some Collection<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                result.append(byte)
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "\""): inString = true
            default: break
            }
            result.append(byte)
        }
        return result
    }
}
