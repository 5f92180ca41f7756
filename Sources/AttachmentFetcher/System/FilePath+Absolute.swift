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
}
