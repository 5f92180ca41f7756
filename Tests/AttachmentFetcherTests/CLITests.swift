import Foundation
import MockCDN
import Testing

@Suite("fetch-attachment: the command-line contract", .timeLimit(.minutes(2)))
struct CLITests {
    private func withServer(_ body: (MockCDNServer, String) async throws -> Void) async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try await body(server, directory)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    private func jsonObject(_ text: String) throws -> [String: Any] {
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "stdout must be exactly one JSON object: \(text)")
        return try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("--json with a payload file: exit 0 and one JSON object with the documented fields")
    func jsonAttached() async throws {
        try await withServer { server, directory in
            let payloadPath = directory + "/payload.json"
            try Payloads.braze(url: server.url("/media/a.png?bytes=5000"), type: "jpg").write(to: URL(fileURLWithPath: payloadPath))
            let output = directory + "/out/nested"
            let result = try await CommandRunner.run(
                "fetch-attachment", [payloadPath, "--output-dir", output, "--json", "--deadline", "10"])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try jsonObject(result.stdout)
            #expect(Set(object.keys) == ["status", "reason", "detail", "vendor", "attachments", "warnings", "elapsed_ms"])
            #expect(object["status"] as? String == "attached")
            #expect(object["reason"] is NSNull)
            #expect(object["vendor"] as? String == "braze")
            let attachments = try #require(object["attachments"] as? [[String: Any]])
            #expect(attachments.count == 1)
            let path = try #require(attachments.first?["path"] as? String)
            #expect(path.hasPrefix(output + "/") && path.hasSuffix(".png"))
            #expect(attachments.first?["mime"] as? String == "image/png")
            #expect(attachments.first?["bytes"] as? Int == 5000)
            #expect(attachments.first?["url"] as? String == server.url("/media/a.png?bytes=5000"))
            #expect((object["warnings"] as? [String])?.count == 1)
            #expect(object["elapsed_ms"] is Double || object["elapsed_ms"] is Int)
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("Payload on stdin ('-' or nothing): the original stands, exit 1, reason in the JSON")
    func stdinOriginal() async throws {
        try await withServer { server, directory in
            let payload = Payloads.braze(url: server.url("/media/a.jpg?status=404"))
            for arguments in [["-"], []] {
                let result = try await CommandRunner.run(
                    "fetch-attachment", arguments + ["--json", "--output-dir", directory], stdin: payload)
                #expect(result.status == 1)
                let object = try jsonObject(result.stdout)
                #expect(object["status"] as? String == "original")
                #expect(object["reason"] as? String == "http-status")
                #expect((object["detail"] as? String)?.contains("404") == true)
            }
        }
    }

    @Test("Without --json, a short human summary")
    func humanSummary() async throws {
        try await withServer { server, directory in
            let attached = try await CommandRunner.run(
                "fetch-attachment", ["--output-dir", directory],
                stdin: Payloads.moengage(url: server.url("/media/a.gif?bytes=900")))
            #expect(attached.status == 0)
            #expect(attached.stdout.contains("attached image/gif, 900 bytes"))
            let silent = try await CommandRunner.run(
                "fetch-attachment", ["--output-dir", directory],
                stdin: Data(#"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#.utf8))
            #expect(silent.status == 1)
            #expect(silent.stdout.contains("internal-push"))
        }
    }

    @Test(
        "A bad command line exits 64 with a message",
        arguments: [
            ["--deadline", "0"], ["--deadline", "abc"], ["/nonexistent/payload.json"], ["--no-such-option"],
            ["--output-dir", ""],
        ])
    func badCommandLine(arguments: [String]) async throws {
        let result = try await CommandRunner.run("fetch-attachment", arguments)
        #expect(result.status == 64)
        #expect(!result.stderr.isEmpty)
        #expect(result.stdout.isEmpty)
    }

    @Test("The demo runs every bundled example against the bundled mock CDN and gets what it expects")
    func demo() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await CommandRunner.run("fetch-attachment", ["demo", "--deadline", "1", "--output-dir", directory])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("16 of 16 examples gave the expected outcome"))
    }
}
