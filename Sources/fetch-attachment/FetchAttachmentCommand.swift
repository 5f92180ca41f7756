import ArgumentParser
import AttachmentFetcher
import Foundation

/// `fetch-attachment`: turns push payloads into notification attachments.
@main
struct FetchAttachmentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch-attachment",
        abstract: "Show what a push shows on iOS and Android, and fetch its attachment as the phone would, or say why the original content stands.",
        discussion: """
            Exit status: 0 when an attachment is ready (in a batch, every payload's), 1 when the \
            original content stands (whatever the reason; a batch of no payload too), 64 for a bad command line, 66 when a file to \
            read (the payload, --batch's, --cacert's) is missing, a directory or not readable, 73 when --report's file \
            cannot be written (checked before the batch starts, and again at its end), 74 when standard output or \
            standard error could not be written (or a batch could not be read to its end), \
            130 or 143 when Ctrl-C or SIGTERM interrupted a batch (no more payloads start; \
            those in flight end by their deadlines; outcomes, summary and report are written).
            """,
        version: FetchAttachmentCommand.version,
        subcommands: [FetchCommand.self, CacheCommand.self, DemoCommand.self],
        defaultSubcommand: FetchCommand.self
    )

    /// The version `--version` prints.
    static let version = "1.0.0"

    /// ArgumentParser's `main`, with what it does not do: the open-file limit raised first (see
    /// `FileDescriptorBudget`; the default concurrency derives from it); arguments that are not
    /// UTF-8 are refused (Swift would silently replace their bytes, naming another file), and a
    /// failed write on standard output or error sets the exit status (see `StandardStreams`).
    static func main() async {
        FileDescriptorBudget.raiseSoftLimit()
        StandardStreams.prepare()
        if let message = RawArguments.notUTF8() {
            StandardStreams.error.write("Error: \(message)\n")
            StandardStreams.exit(ExitCode.validationFailure.rawValue)
        }
        // `--help` alone shows the options of `fetch`, the command a user runs, besides the list
        // of commands (ArgumentParser would show only the list).
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            StandardStreams.output.write(
                helpMessage() + "\n\n" + helpMessage(for: FetchCommand.self).replacingOccurrences(
                    of: "fetch-attachment fetch", with: "fetch-attachment [fetch]") + "\n")
            StandardStreams.exit(0)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            StandardStreams.exit(0)
        } catch let error as UnusableFile {
            StandardStreams.error.write("Error: \(error)\n")
            StandardStreams.exit(error.exitStatus)
        } catch {
            let status = StandardStreams.finalStatus(exitCode(for: error).rawValue)
            guard status != StandardStreams.writeErrorStatus else {
                PeakMemoryReport.write()
                CommandSyscalls.exit(status)
            }
            PeakMemoryReport.write()
            exit(withError: error)
        }
    }
}

/// The command line as the bytes the process was given.
enum RawArguments {
    /// A message naming the first argument that is not valid UTF-8, or `nil` when all are.
    static func notUTF8() -> String? {
        let count = Int(CommandLine.argc)
        var previous: String?
        for index in 1..<max(count, 1) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            if let argument = String(validatingCString: pointer) {
                previous = argument
                continue
            }
            let repaired = String(cString: pointer)
            let shown = TerminalText.escaped(repaired)
            let option: String?
            if repaired.hasPrefix("--"), let equals = repaired.firstIndex(of: "=") {
                option = String(repaired[..<equals])
            } else if let previous, previous.hasPrefix("-"), !previous.contains("="), previous != "-" {
                option = previous
            } else {
                option = nil
            }
            let what = option.map { "the value of \($0)" } ?? "argument \(index)"
            return "\(what) is not valid UTF-8 ('\(shown)', with each invalid byte shown as U+FFFD): "
                + "fetch-attachment takes UTF-8 paths only, and will not guess another name"
        }
        return nil
    }
}
