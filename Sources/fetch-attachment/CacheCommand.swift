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

        func open() async throws -> AttachmentCache {
            do {
                return try await AttachmentCache(configuration: cache.configuration())
            } catch {
                throw ValidationError("cannot open the cache: \(error)")
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes, budget and temporary files.")
        @OptionGroup var options: Options

        func run() async throws {
            let statistics = try await options.open().statistics()
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(statistics), as: UTF8.self))
            } else {
                print("""
                    cache: \(statistics.directory)
                    entries: \(statistics.entries) (\(statistics.freshEntries) fresh)
                    bytes: \(statistics.bytes) of \(statistics.maximumBytes)
                    temporary files: \(statistics.temporaryFiles)
                    """)
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove stale entries and apply the size budget now.")
        @OptionGroup var options: Options

        func run() async throws {
            let (entries, bytes) = try await options.open().prune()
            print(options.json ? #"{"removed_entries":\#(entries),"removed_bytes":\#(bytes)}"# : "removed \(entries) entries, \(bytes) bytes")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var options: Options

        func run() async throws {
            let removed = try await options.open().clear()
            print(options.json ? #"{"removed_entries":\#(removed)}"# : "removed \(removed) entries")
        }
    }
}
