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
            if cache.noCache { throw ValidationError("--no-cache makes no sense for a cache command") }
        }

        /// The cache, or `nil` when its directory does not exist: an inspection creates nothing.
        func open() async throws -> AttachmentCache? {
            let configuration = cache.configuration()
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: configuration.directory, isDirectory: &isDirectory) else { return nil }
            guard isDirectory.boolValue else { throw ValidationError("\(configuration.directory) is not a directory") }
            do {
                return try await AttachmentCache(configuration: configuration)
            } catch {
                throw ValidationError("cannot open the cache: \(error.message)")
            }
        }

        /// Where the CLI puts attachments when no --output-dir is given: inside this cache's
        /// directory.
        var attachmentsDirectory: String { cache.attachmentsDirectory }
    }

    /// The files in the CLI's default output directory: hard links of cache bodies, until the
    /// cache lets a body go; then each is disk space of its own.
    enum Attachments {
        static func usage(in directory: String) -> (files: Int, bytes: Int) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            var bytes = 0
            for name in names {
                bytes += ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size] as? Int) ?? 0
            }
            return (names.count, bytes)
        }

        /// Removes every file the CLI put there; returns how many.
        static func clear(in directory: String) -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { (try? FileManager.default.removeItem(atPath: directory + "/" + $0)) != nil }.count
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, budget and temporary files.")
        @OptionGroup var options: Options

        func run() async throws {
            let attachments = Attachments.usage(in: options.attachmentsDirectory)
            guard let cache = try await options.open() else {
                let directory = options.cache.configuration().directory
                if options.json {
                    let data = try JSONSerialization.data(
                        withJSONObject: ["directory": directory, "exists": false], options: [.sortedKeys, .withoutEscapingSlashes])
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    print("no cache at \(directory)")
                }
                return
            }
            let statistics = await cache.statistics()
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var object = try JSONSerialization.jsonObject(with: encoder.encode(statistics)) as? [String: Any] ?? [:]
                object["attachments"] = ["directory": options.attachmentsDirectory, "files": attachments.files, "bytes": attachments.bytes]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("""
                    cache: \(statistics.directory)
                    entries: \(statistics.entries) (\(statistics.freshEntries) fresh)
                    bytes: \(statistics.bytes) of \(statistics.maximumBytes)
                    temporary files: \(statistics.temporaryFiles)
                    attachments: \(attachments.files) files, \(attachments.bytes) bytes in \(options.attachmentsDirectory)
                    """)
            }
        }

    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove stale entries and apply the size budget now.")
        @OptionGroup var options: Options

        func run() async throws {
            let (entries, bytes) = await (try await options.open())?.prune() ?? (0, 0)
            print(options.json ? #"{"removed_entries":\#(entries),"removed_bytes":\#(bytes)}"# : "removed \(entries) entries, \(bytes) bytes")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry, and the files in the cache's default output directory.",
            discussion: """
                The default output directory (without --output-dir), attachments/ in the cache \
                directory, holds each payload's hard link of \
                a cache body; once the body is gone from the cache, a link is disk space of its own, \
                so clear removes those files too.
                """)
        @OptionGroup var options: Options

        func run() async throws {
            let removed = await (try await options.open())?.clear() ?? 0
            let files = Attachments.clear(in: options.attachmentsDirectory)
            print(
                options.json
                    ? #"{"removed_attachments":\#(files),"removed_entries":\#(removed)}"#
                    : "removed \(removed) entries and \(files) attachment files")
        }
    }
}
