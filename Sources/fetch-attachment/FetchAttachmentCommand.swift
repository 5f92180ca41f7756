import ArgumentParser

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
}
