import ArgumentParser
import AttachmentFetcher

/// `fetch-attachment`: turns push payloads into notification attachments.
@main
struct FetchAttachmentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch-attachment",
        abstract: "Download a push payload's attachment as iOS would attach it, or say why the original content stands.",
        discussion: """
            Exit status: 0 when an attachment is ready, 1 when the original content stands \
            (whatever the reason), 64 for a bad command line.
            """,
        subcommands: [FetchCommand.self, CacheCommand.self, DemoCommand.self],
        defaultSubcommand: FetchCommand.self
    )

    /// Raises the open-file limit before anything else (see `FileDescriptorBudget`), then parses
    /// and runs the command as ArgumentParser's own `main` does. The default concurrency is
    /// derived from the raised limit.
    static func main() async {
        FileDescriptorBudget.raiseSoftLimit()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
