import AttachmentFetcher
import Foundation
import Testing

// A user's own types with the names the library uses: in this file they hide the library's, which
// stay reachable through the module's name.
private struct Outcome {}
private struct Attachment {}
private struct Platform {}

@Suite("The library's types are reachable by the module's name next to a user's own")
struct ModuleNameTests {
    @Test("AttachmentFetcher.Outcome, .Attachment, .Platform and .PushAttachmentFetcher.Configuration name the library's types")
    func qualifiedNames() {
        let configuration = AttachmentFetcher.PushAttachmentFetcher.Configuration(
            outputDirectory: "/tmp/attachments", timeout: .seconds(5))
        #expect(configuration.timeout == .seconds(5))
        let attachment = AttachmentFetcher.Attachment(
            url: "https://cdn.example/a.jpg", path: "/tmp/attachments/a.jpg", mime: "image/jpeg", bytes: 3)
        let outcome = AttachmentFetcher.Outcome(
            status: .attached, reason: nil, detail: nil, vendor: .braze, attachments: [attachment], warnings: [],
            elapsed: .milliseconds(1), payload: Data())
        #expect(outcome.attachments.first?.mime == "image/jpeg")
        let platform: AttachmentFetcher.Platform = .ios
        #expect(platform.description == "ios")
        // The user's own types are what the unqualified names mean here.
        let own: (Outcome, Attachment, Platform) = (Outcome(), Attachment(), Platform())
        #expect(type(of: own.0) != AttachmentFetcher.Outcome.self)
    }
}

@Suite("The README's sample, where an app's code runs")
struct ReadmeSampleTests {
    @Test("withPushAttachmentFetcher runs its body on the caller's actor: the README's sample compiles and runs in @MainActor code")
    @MainActor
    func mainActorSample() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let payloadBytes = Data(#"{"aps":{"alert":{"title":"T","body":"B"}},"ab":{}}"#.utf8)
        let outcome = try await withPushAttachmentFetcher(
            configuration: .init(outputDirectory: directory, timeout: .seconds(25))
        ) { fetcher in
            MainActor.assertIsolated()
            return await fetcher.process(payloadBytes)
        }
        #expect(outcome.notification?.title == "T" && outcome.status == .original)
    }
}
