import Foundation
import SystemPackage

/// Names and removal of the temporary files bodies stream into.
enum TemporaryFiles {
    /// Temporary files end with this suffix (and start with a dot), so a crash leaves files that
    /// are easy to recognise and clean up.
    static let suffix = ".part"

    /// A fresh temporary path in `directory`, unique across processes and transfers; the name
    /// starts with the process id, so that `removeOrphans` can tell whose it is.
    static func path(in directory: String) -> String {
        "\(directory)/.attachment-\(FileNameTag.processID)-\(FileNameTag.next())\(suffix)"
    }

    /// Creates a fresh temporary file in `directory` for a body to stream into: its descriptor,
    /// open for writing, and its path. Running out of descriptors is `resources`, any other
    /// error `storage`.
    static func create(in directory: String) -> Result<(file: FileDescriptor, path: String), TransferFailure> {
        let temporaryPath = path(in: directory)
        do {
            let file = try FileDescriptor.open(
                FilePath(temporaryPath), .writeOnly, options: [.create, .exclusiveCreate],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
            return .success((file, temporaryPath))
        } catch {
            let reason: FallbackReason =
                (error as? Errno).map { FileDescriptorBudget.isExhaustion($0.rawValue) } == true ? .resources : .storage
            return .failure(TransferFailure(reason: reason, detail: "cannot create \(temporaryPath): \(error)"))
        }
    }

    /// The process that made a temporary file, read from its name; `nil` for other files.
    static func owner(ofFileNamed name: String) -> Int32? {
        guard name.hasPrefix(".attachment-") else { return nil }
        return name.dropFirst(".attachment-".count).split(separator: "-").first.flatMap { Int32($0) }
    }

    /// Removes the temporary files in `directory` whose process is gone (a crash or a kill left
    /// them); the files of live processes, this one included, stay.
    static func removeOrphans(in directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let pid = owner(ofFileNamed: name), kill(pid, 0) != 0, errno == ESRCH else { continue }
            remove("\(directory)/\(name)")
        }
    }

    /// Removes `path`, ignoring a file that is already gone.
    static func remove(_ path: String) {
        _ = unlink(path)
    }
}
