import Foundation
import SystemPackage

extension FilePath {
    /// `path` made absolute against the working directory and normalised lexically (`.` and
    /// `..` components resolved, repeated and trailing slashes dropped, no link followed): the one
    /// form the output and cache directories are kept and reported in.
    package static func absolute(_ path: String) -> FilePath {
        var absolute = FilePath(path)
        if !absolute.isAbsolute { absolute = FilePath(FileManager.default.currentDirectoryPath).pushing(absolute) }
        return absolute.lexicallyNormalized()
    }

    /// `absolute(path)` with every symbolic link resolved in the part of it that exists (the
    /// rest, not yet made, appended as written): where the directory really is, to compare two
    /// directories by.
    static func resolved(_ path: String) -> FilePath {
        var existing = absolute(path)
        var rest: [FilePath.Component] = []
        while true {
            if let real = Syscalls.realPath(existing.string) {
                var resolved = FilePath(real)
                resolved.append(rest)
                return resolved.lexicallyNormalized()
            }
            guard let last = existing.lastComponent else { break }
            rest.insert(last, at: 0)
            existing.removeLastComponent()
        }
        // Not even the root resolves: as written.
        return absolute(path)
    }
}
