import Foundation
import Synchronization

/// Tags that make file names unique without a system call per name: `getrandom(2)` once per
/// process, then a counter. In a spike every payload names a temporary and a final file, and
/// drawing each tag from the kernel cost two system calls per payload.
enum FileNameTag {
    /// This process's id, read once (`getpid(2)` is a system call).
    static let processID = ProcessInfo.processInfo.processIdentifier

    private static let processNonce = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A tag that no other call in this process returns, and that another process returns only
    /// by a chance of about 2^-64 per pair of names: a random number drawn once per process,
    /// plus the call's number times an odd constant (a bijection on 64 bits), in base 36, always
    /// 13 digits (zeros in front), so that the fetcher's files can be told by their names
    /// (`AttachmentFiles.isAttachmentName`).
    static func next() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let digits = String(processNonce &+ number &* 0x9E37_79B9_7F4A_7C15, radix: 36)
        return String(repeating: "0", count: max(0, length - digits.count)) + digits
    }

    /// How many digits a tag has: 2^64 in base 36 takes 13.
    static let length = 13
}
