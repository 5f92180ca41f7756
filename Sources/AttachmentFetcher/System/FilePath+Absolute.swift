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
        let absolute = absolute(path)
        var existing = absolute
        var rest: [FilePath.Component] = []
        while !existing.components.isEmpty, Syscalls.realPath(existing.string) == nil, let last = existing.lastComponent {
            rest.insert(last, at: 0)
            existing.removeLastComponent()
        }
        var resolved = Syscalls.realPath(existing.string).map { FilePath($0) } ?? existing
        resolved.append(rest)
        return resolved.lexicallyNormalized()
    }
}
