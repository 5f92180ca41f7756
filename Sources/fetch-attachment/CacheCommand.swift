import ArgumentParser
import AttachmentFetcher
import Foundation

/// `fetch-attachment cache stats|prune|clear`.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect or tidy the shared attachment cache.",
        subcommands: [Stats.self, Prune.self, Clear.self]
    )

    /// The options every cache command takes.
    struct Options: ParsableArguments {
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func validate() throws {
            try cache.validate()
        }

        /// The cache, or `nil` when its directory does not exist or holds no cache (not both the
        /// lock file and the `entries/` a fetch with the cache makes): an inspection creates nothing.
        /// A directory that cannot be used is a `Failure`: the command line was right.
        func open() async throws -> AttachmentCache? {
            let configuration = cache.configuration()
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: configuration.directory, isDirectory: &isDirectory) else { return nil }
            guard isDirectory.boolValue else {
                throw Failure("\(TerminalText.escaped(configuration.directory)) is not a directory")
            }
            guard AttachmentCache.holdsCache(at: configuration.directory) else { return nil }
            do {
                return try await AttachmentCache(configuration: configuration)
            } catch {
                throw Failure("cannot open the cache: \(error.message)")
            }
        }

        /// Where the CLI puts attachments when no --output-dir is given: inside this cache's
        /// directory.
        var attachmentsDirectory: String { cache.attachmentsDirectory }

        /// Whether `prune` and `clear` may remove files from `attachmentsDirectory`: when the
        /// directory holds a cache, or is the default one (the CLI's own, its output directory
        /// with --no-cache too). A `--cache-dir` that holds no cache is somebody's directory,
        /// whose `attachments/` is none of the cache's business.
        func removesAttachments(cacheFound: Bool) -> Bool { cacheFound || cache.directory == nil }

        /// What `prune` and `clear` say when `--cache-dir` holds no cache: nothing was removed
        /// (in JSON, each of the command's `fields` 0).
        func printNothingRemoved(fields: [String]) throws {
            if json {
                try CacheCommand.printJSON(Dictionary(uniqueKeysWithValues: fields.map { ($0, 0) }))
            } else {
                print("no cache at \(TerminalText.escaped(cache.cacheDirectory)): nothing removed")
            }
        }
    }

    /// A cache command that could not do its work: printed as `Error: …` without the usage
    /// (which is for a wrong command line), exit 1.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Prints `object` as one line of JSON, keys sorted.
    static func printJSON(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    /// The files in the CLI's default output directory: hard links of cache bodies, until the
    /// cache lets a body go; then each is disk space of its own. Nothing there is followed: a
    /// directory that is a symbolic link is left alone, a `Failure`.
    enum Attachments {
        static func usage(in directory: String) throws -> (files: Int, bytes: Int) {
            do { return try AttachmentCache.outputFiles(in: directory) } catch { throw Failure(TerminalText.escaped(error.message)) }
        }

        /// How long a file no entry holds is left before `prune` takes it: its reader may be
        /// about to open it.
        static let unlinkedAge = Duration.seconds(600)

        /// Removes the regular files there (with `unlinkedOnly`, those no cache entry holds, for
        /// `unlinkedAge`); returns how many, and the bytes that freed.
        static func remove(in directory: String, unlinkedOnly: Bool = false) throws -> (files: Int, bytes: Int) {
            do {
                return try AttachmentCache.removeOutputFiles(
                    in: directory, unlinkedOnly: unlinkedOnly, minimumAge: unlinkedOnly ? unlinkedAge : .zero)
            } catch {
                throw Failure(TerminalText.escaped(error.message))
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, budget and temporary files.")
        @OptionGroup var options: Options

        func run() async throws {
            let cache = try await options.open()
            let attachments = try Attachments.usage(in: options.attachmentsDirectory)
            let configuration = options.cache.configuration()
            // With no cache there, the same fields, empty: scripts read one shape.
            let statistics = await cache?.statistics()
                ?? CacheStatistics(
                    directory: configuration.directory, entries: 0, freshEntries: 0, bytes: 0,
                    maximumBytes: configuration.maximumBytes, temporaryFiles: 0)
            if options.json {
                try CacheCommand.printJSON([
                    "directory": statistics.directory, "exists": cache != nil, "entries": statistics.entries,
                    "fresh_entries": statistics.freshEntries, "bytes": statistics.bytes,
                    "maximum_bytes": statistics.maximumBytes, "temporary_files": statistics.temporaryFiles,
                    "attachments": ["directory": options.attachmentsDirectory, "files": attachments.files, "bytes": attachments.bytes],
                    "store_problem": cache?.storeProblem ?? NSNull(),
                ])
            } else if cache == nil {
                // Files a --no-cache run left in the default output directory are still shown.
                let files = attachments.files > 0
                    ? "\nattachments: \(attachments.files) files, \(attachments.bytes) bytes in \(options.attachmentsDirectory)" : ""
                print("no cache at \(statistics.directory)\(files)")
            } else {
                print("""
                    cache: \(statistics.directory)
                    entries: \(statistics.entries) (\(statistics.freshEntries) fresh)
                    bytes: \(statistics.bytes) of \(statistics.maximumBytes)
                    temporary files: \(statistics.temporaryFiles)
                    attachments: \(attachments.files) files, \(attachments.bytes) bytes in \(options.attachmentsDirectory)
                    """)
                if let problem = cache?.storeProblem {
                    StandardStreams.error.writeWrapped("  note: \(TerminalText.escaped(problem)): no fetcher adds entries to this cache")
                }
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove stale entries and apply the size budget now.",
            discussion: """
                Then the files in the cache's default output directory (attachments/) whose body no \
                entry holds any more (their one link, for 10 minutes) go too: their space is outside \
                the budget.
                """)
        @OptionGroup var options: Options

        func run() async throws {
            let cache = try await options.open()
            guard options.removesAttachments(cacheFound: cache != nil) else {
                return try options.printNothingRemoved(fields: ["removed_entries", "removed_bytes", "removed_attachments", "removed_attachment_bytes"])
            }
            let (entries, bytes, problem) = await cache?.pruneReporting() ?? (0, 0, nil)
            // Entries that stayed for want of permission are an error, named, not a success.
            defer { if let problem { StandardStreams.error.write("fetch-attachment: \(TerminalText.escaped(problem))\n") } }
            let attachments: (files: Int, bytes: Int)
            do {
                attachments = try Attachments.remove(in: options.attachmentsDirectory, unlinkedOnly: true)
            } catch {
                // What was done is said before why the rest was not.
                if options.json {
                    try CacheCommand.printJSON(["removed_entries": entries, "removed_bytes": bytes])
                } else {
                    print("removed \(entries) entries, \(bytes) bytes")
                }
                throw error
            }
            if options.json {
                try CacheCommand.printJSON([
                    "removed_entries": entries, "removed_bytes": bytes,
                    "removed_attachments": attachments.files, "removed_attachment_bytes": attachments.bytes,
                ])
            } else {
                print("removed \(entries) entries, \(bytes) bytes; \(attachments.files) attachment files no entry holds, \(attachments.bytes) bytes")
            }
            if problem != nil { throw ExitCode(1) }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry, and the files in the cache's default output directory.",
            discussion: """
                The default output directory (without --output-dir), attachments/ in the cache \
                directory, holds each payload's hard link of \
                a cache body; once the body is gone from the cache, a link is disk space of its own, \
                so clear removes those files too: the regular files directly in it named as the \
                fetcher names them (others stay), never following a symbolic link (an attachments/ \
                that is one is left alone, an error).
                """)
        @OptionGroup var options: Options

        func run() async throws {
            let cache = try await options.open()
            guard options.removesAttachments(cacheFound: cache != nil) else {
                return try options.printNothingRemoved(fields: ["removed_entries", "removed_bytes", "removed_attachments", "removed_attachment_bytes"])
            }
            let (removed, bytes, problem) = await cache?.clearReporting() ?? (0, 0, nil)
            // Entries that stayed for want of permission are an error, named, not a success.
            defer { if let problem { StandardStreams.error.write("fetch-attachment: \(TerminalText.escaped(problem))\n") } }
            let attachments: (files: Int, bytes: Int)
            do {
                attachments = try Attachments.remove(in: options.attachmentsDirectory)
            } catch {
                if options.json {
                    try CacheCommand.printJSON(["removed_entries": removed, "removed_bytes": bytes])
                } else {
                    print("removed \(removed) entries, \(bytes) bytes")
                }
                throw error
            }
            if options.json {
                try CacheCommand.printJSON([
                    "removed_entries": removed, "removed_bytes": bytes,
                    "removed_attachments": attachments.files, "removed_attachment_bytes": attachments.bytes,
                ])
            } else {
                print("removed \(removed) entries, \(bytes) bytes; \(attachments.files) attachment files, \(attachments.bytes) bytes")
            }
            if problem != nil { throw ExitCode(1) }
        }
    }
}
