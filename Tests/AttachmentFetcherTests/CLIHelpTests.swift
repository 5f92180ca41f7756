import Foundation
import MockCDN
import Testing

/// The command line explains itself: help that shows what a user runs, clear refusals of bad
/// arguments (exit 64), and batches and failures reported as a person expects.
@Suite("fetch-attachment explains itself")
struct CLIHelpTests {
    @Test("--help shows the fetch options, not only the subcommands; --version prints the version")
    func help() async throws {
        let help = try await CommandRunner.run("fetch-attachment", ["--help"])
        #expect(help.status == 0)
        for option in ["--batch", "--output-dir", "--timeout", "--json", "--cacert", "--no-cache", "--platform", "--report", "cache", "demo"] {
            #expect(help.stdout.contains(option), "\(option) missing from --help")
        }
        // Each option under the heading of what it is about: a payload's attachment count is not
        // a network setting.
        let network = try #require(help.stdout.range(of: "NETWORK:"))
        let general = try #require(help.stdout.range(of: "\nOPTIONS:", range: network.upperBound..<help.stdout.endIndex))
        let section = help.stdout[network.upperBound..<general.lowerBound]
        #expect(!section.contains("--max-attachments") && help.stdout.contains("--max-attachments"))
        #expect(section.contains("--allow-private-networks"))
        // `--deadline` is the old name of `--timeout`: still accepted, no longer shown.
        #expect(!help.stdout.contains("--deadline"))
        let version = try await CommandRunner.run("fetch-attachment", ["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1.0.0")
    }

    @Test(
        "Bad arguments are exit 64 with a message that says what is wrong",
        arguments: [
            (["--timeout", "-1"], "--timeout must be a number of seconds above 0"),
            (["--deadline", "-1"], "--timeout must be a number of seconds above 0"),
            (["--timeout", "5", "--deadline", "5"], "--deadline is the old name of --timeout"),
            (["--concurrency", "-5"], "--concurrency must be between 1"),
            (["--concurrency", "8"], "--concurrency goes with --batch"),
            (["--max-attachments", "0"], "--max-attachments must be at least 1"),
            (["--max-connections-per-host", "0"], "--max-connections-per-host must be between 1 and 10000"),
            (["--max-redirects", "-2"], "--max-redirects must be between 0 and 100"),
            (["--platform", "windows"], "unknown platform 'windows'"),
            (["--no-cache", "--cache-max-bytes", "100"], "--cache-max-bytes sets the cache's budget, and --no-cache uses no cache: drop one"),
            (["--no-cache", "--allow-shared-cache-dir"], "--allow-shared-cache-dir is about the cache, and --no-cache uses no cache: drop one"),
            (["--cacert", "NOTPEM"], "holds no PEM certificate"),
        ])
    func badArguments(arguments: [String], message: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notPEM = directory + "/payload.json"
        try Data(#"{"aps":{}}"#.utf8).write(to: URL(fileURLWithPath: notPEM))
        let resolved = arguments.map { $0 == "NOTPEM" ? notPEM : $0.replacingOccurrences(of: "DIRECTORY", with: directory) }
        let namesFile = resolved.contains { $0.hasPrefix(directory) }
        let result = try await CommandRunner.run("fetch-attachment", resolved + (namesFile ? [] : [notPEM]))
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message.replacingOccurrences(of: "DIRECTORY", with: directory)), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("Missing value"))
        // The fetch command's usage, if any: never the root's list of commands.
        #expect(!result.stderr.contains("<subcommand>"), "\(result.stderr)")
    }

    @Test("Standard input that is a directory (`< dir`) exits 66 and says so, for one payload and for --batch -", arguments: [["-"], ["--batch", "-"]])
    func standardInputIsADirectory(arguments: [String]) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let command = "exec '\(CommandRunner.fetchAttachmentPath)' \(arguments.joined(separator: " ")) --no-cache --output-dir '\(directory)/out' < '\(directory)'"
        let result = try await CommandRunner.run("/bin/sh", ["-c", command])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == "Error: standard input is a directory, not a payload file\n", "\(result.stderr)")
        #expect(result.stdout.isEmpty && !FileManager.default.fileExists(atPath: directory + "/out"), "\(result.stdout)")
    }

    @Test(
        "An input file that cannot be read exits 66 (EX_NOINPUT), not 64: one line naming the file and why, no usage, nothing written",
        arguments: [
            (["DIRECTORY/missing.json"], "Error: cannot read 'DIRECTORY/missing.json': No such file or directory"),
            (["DIRECTORY"], "Error: 'DIRECTORY' is a directory, not a payload file"),
            (["--batch", "DIRECTORY/missing.jsonl", "--report", "DIRECTORY/report.html"], "Error: cannot read 'DIRECTORY/missing.jsonl': No such file or directory"),
            (["--batch", "DIRECTORY", "--report", "DIRECTORY/report.html"], "Error: 'DIRECTORY' is a directory, not a payload file"),
            (["--cacert", "DIRECTORY/missing.pem", "PAYLOAD"], "Error: --cacert DIRECTORY/missing.pem is not a readable file: No such file or directory"),
            (["--cacert", "DIRECTORY", "PAYLOAD"], "Error: --cacert DIRECTORY is not a readable file: it is a directory"),
        ])
    func unreadableInput(arguments: [String], message: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let payload = directory + "/payload.json"
        try Payloads.braze(url: "https://cdn.example/a.png").write(to: URL(fileURLWithPath: payload))
        let resolved = arguments.map { $0 == "PAYLOAD" ? payload : $0.replacingOccurrences(of: "DIRECTORY", with: directory) }
        let result = try await CommandRunner.run("fetch-attachment", resolved + ["--no-cache", "--output-dir", directory + "/out"])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == message.replacingOccurrences(of: "DIRECTORY", with: directory) + "\n", "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        // Nothing made: no output directory, no report.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["payload.json"])
    }

    @Test(
        "A payload, batch or --cacert file without read permission exits 66 with the system's reason",
        .enabled("root without setpriv cannot lose the permission to read") {
            if geteuid() != 0 { return true }
            return await CacheSafetyTests.canRunAsNobody()
        },
        arguments: [["PAYLOAD"], ["--batch", "PAYLOAD"], ["--cacert", "PAYLOAD", "OTHER"]])
    func unreadableForPermission(arguments: [String]) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)
        let locked = directory + "/locked.json", other = directory + "/other.json"
        for path in [locked, other] {
            try Payloads.braze(url: "https://cdn.example/a.png").write(to: URL(fileURLWithPath: path))
        }
        chmod(locked, 0o000)
        chmod(other, 0o644)
        let resolved = arguments.map { $0 == "PAYLOAD" ? locked : $0 == "OTHER" ? other : $0 } + ["--no-cache", "--output-dir", directory + "/out"]
        let result =
            geteuid() == 0
            ? try await CommandRunner.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CommandRunner.fetchAttachmentPath] + resolved)
            : try await CommandRunner.run("fetch-attachment", resolved)
        #expect(result.status == 66, "\(result.stderr)")
        let named = arguments.first == "--cacert" ? "--cacert \(locked) is not a readable file" : "cannot read '\(locked)'"
        #expect(result.stderr == "Error: \(named): Permission denied\n", "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
    }

    @Test("A hint on stderr when a payload is read from a terminal")
    func terminalHint() async throws {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { return }
        let binary = CommandRunner.fetchAttachmentPath
        // `script` gives the program a terminal as standard input; Ctrl-D ends the payload.
        let result = try await CommandRunner.run(
            script, ["-qec", "'\(binary)' --json --no-cache --output-dir /tmp/attachment-fetcher-hint-test", "/dev/null"],
            stdin: Data("{\"aps\":{}}\n\u{04}".utf8))
        #expect(result.stdout.contains("reading a payload from standard input"), "\(result.stdout)")
        let piped = try await CommandRunner.run("fetch-attachment", ["--json", "--no-cache", "--output-dir", "/tmp/attachment-fetcher-hint-test"], stdin: Data("{\"aps\":{}}".utf8))
        #expect(!piped.stderr.contains("reading a payload"))
    }

    @Test("Blank lines in a batch are skipped, not failures; indices stay the line numbers")
    func blankLines() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let payload = String(decoding: Payloads.braze(url: server.url("/media/b.png?bytes=900")), as: UTF8.self)
        let batch = directory + "/batch.jsonl"
        try Data("\(payload)\n\n   \n\(payload)\r\n\t\n\(payload)\n".utf8).write(to: URL(fileURLWithPath: batch))
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--batch", batch, "--json", "--no-cache", "--output-dir", directory + "/out", "--allow-private-networks"])
        // One payload is counted in the singular.
        let one = try await CommandRunner.run(
            "fetch-attachment", ["--batch", "-", "--no-cache", "--output-dir", directory + "/out", "--allow-private-networks"],
            stdin: Data("\n\(payload)\n".utf8))
        #expect(one.stderr.contains("batch: 1 payload in "), "\(one.stderr)")
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let indices = result.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["index"] as? Int
        }
        #expect(indices == [0, 3, 5])
        #expect(result.stderr.contains("batch: 3 payloads"))
        // --verbose: each payload's log record names its line, as people count them (from 1).
        let verbose = try await CommandRunner.run(
            "fetch-attachment", ["--batch", batch, "--verbose", "--no-cache", "--output-dir", directory + "/out", "--allow-private-networks"])
        let logged = verbose.stderr.split(separator: "\n").filter { $0.contains("[AttachmentFetcher]") }
        #expect(Set(logged.compactMap { $0.split(separator: " ").first { $0.hasPrefix("line=") } }) == ["line=1", "line=4", "line=6"], "\(verbose.stderr)")

        // The progress bar (drawn when stderr is a terminal) counts payloads, not blank lines.
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { return }
        let binary = CommandRunner.fetchAttachmentPath
        let server2 = try await MockCDNServer.start(eventLoopThreads: 1)
        let payload2 = String(decoding: Payloads.braze(url: server2.url("/media/b.png?bytes=900")), as: UTF8.self)
        try Data("\(payload2)\n\n   \n\(payload2)\r\n\t\n\(payload2)\n".utf8).write(to: URL(fileURLWithPath: batch))
        let terminal = try await CommandRunner.run(
            script, ["-qec", "'\(binary)' --batch '\(batch)' --json --no-cache --output-dir '\(directory)/out2' --allow-private-networks > '\(directory)/out.jsonl'", "/dev/null"])
        try await server2.shutdown()
        #expect(terminal.stdout.contains("] 3/3"), "\(terminal.stdout)")
        #expect(!terminal.stdout.contains("/6"), "\(terminal.stdout)")
    }

    @Test("A batch with no payload (an empty file, blank lines only) is exit 1 with a note: no attachment is ready")
    func emptyBatch() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, content) in [("empty.jsonl", ""), ("blank.jsonl", "\n  \n\t\n")] {
            let batch = directory + "/" + name
            try Data(content.utf8).write(to: URL(fileURLWithPath: batch))
            let result = try await CommandRunner.run(
                "fetch-attachment", ["--batch", batch, "--no-cache", "--output-dir", directory + "/out", "--report", directory + "/r.html"])
            #expect(result.status == 1, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("batch: 0 payloads"), "\(result.stderr)")
            #expect(result.stderr.contains("the input holds no payload"), "\(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: directory + "/r.html"))
        }
    }

    @Test("An output directory that cannot be made: storage, with the vendor, and no second reason code in the detail")
    func storageKeepsVendor() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let blocker = directory + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--output-dir", blocker + "/out"],
            stdin: Payloads.braze(url: "https://cdn.example/a.png"))
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == "storage")
        #expect(object["vendor"] as? String == "braze")
        let detail = try #require(object["detail"] as? String)
        #expect(!detail.contains("output-directory-unusable"), "\(detail)")
        #expect(detail == "cannot create \(blocker)/out: Not a directory", "\(detail)")
    }

    @Test("A batch whose output directory cannot be used says so once, and each payload's outcome keeps its URL: storage, or the URL's own failure")
    func unusableOutputDirectoryBatch() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let blocker = directory + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let lines = [
            String(decoding: Payloads.braze(url: "https://cdn.example/a.png"), as: UTF8.self),
            String(decoding: Payloads.braze(url: "javascript:alert(1)"), as: UTF8.self),
            #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true}"#,
        ]
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--output-dir", blocker, "--batch", "-"],
            stdin: Data((lines.joined(separator: "\n") + "\n").utf8))
        #expect(result.status == 1)
        let outcomes = try result.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(outcomes.map { $0["reason"] as? String } == ["storage", "invalid-url", "internal-push"])
        let failures = outcomes.map { ($0["failures"] as? [[String: Any]] ?? []).map { $0["url"] as? String } }
        #expect(failures[0] == ["https://cdn.example/a.png"] && failures[1] == ["javascript:alert(1)"] && failures[2].isEmpty)
        #expect(result.stderr.unwrapped.contains("fetch-attachment: \(blocker) is a file, not a directory: no file can be fetched, so every payload that names one is storage"), "\(result.stderr)")
    }

    /// A batch file of `copies` lines of `payload` in `directory`; its path.
    private static func campaign(of payload: Data, copies: Int, in directory: String) throws -> String {
        let path = directory + "/campaign.jsonl"
        try Data(repeatElement(String(decoding: payload, as: UTF8.self), count: copies).joined(separator: "\n").utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("A refused address comes with a hint on stderr, once per batch; stdout keeps one outcome per payload")
    func addressRefusedHint() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let payload = Payloads.braze(url: "http://127.0.0.1:9/a.png")
        let hint = "hint: address-refused: by default only globally reachable addresses are fetched from; --allow-private-networks"
        let one = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--output-dir", directory], stdin: payload)
        #expect(one.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == "address-refused")
        #expect(one.stderr.unwrapped.components(separatedBy: hint).count == 2, "\(one.stderr)")
        let campaign = try Self.campaign(of: payload, copies: 3, in: directory)
        let batch = try await CommandRunner.run(
            "fetch-attachment", ["--batch", campaign, "--no-cache", "--output-dir", directory])
        #expect(batch.stdout.components(separatedBy: "address-refused").count == 4, "\(batch.stdout)")
        #expect(batch.stderr.unwrapped.components(separatedBy: hint).count == 2, "\(batch.stderr)")
        // Allowed, the same address is fetched from (and, with nothing listening, fails as network).
        let allowed = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--allow-private-networks", "--output-dir", directory], stdin: payload)
        #expect(!allowed.stderr.contains("hint:"), "\(allowed.stderr)")
    }

    @Test("A network failure whose reason the address policy hides says how to see it, once per batch")
    func hiddenNetworkDetailHint() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Port 9 (discard) on loopback: nothing listens, so the connection is refused.
        let payload = Payloads.braze(url: "http://127.0.0.1:9/a.png")
        let hint = "hint: network: while the address policy is in force"
        let one = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--allow-network", "127.0.0.1/32", "--output-dir", directory], stdin: payload)
        #expect(one.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == "network")
        #expect(object["detail"] as? String == "could not fetch")
        #expect(one.stderr.unwrapped.components(separatedBy: hint).count == 2, "\(one.stderr)")
        let campaign = try Self.campaign(of: payload, copies: 3, in: directory)
        let batch = try await CommandRunner.run(
            "fetch-attachment", ["--batch", campaign, "--no-cache", "--allow-network", "127.0.0.1/32", "--output-dir", directory])
        #expect(batch.stdout.components(separatedBy: "network: could not fetch").count == 4, "\(batch.stdout)")
        #expect(batch.stderr.unwrapped.components(separatedBy: hint).count == 2, "\(batch.stderr)")
        // With the policy off, libcurl's own reason is in the detail, and there is nothing to hint.
        let open = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", "--allow-private-networks", "--output-dir", directory], stdin: payload)
        let openObject = try #require(try JSONSerialization.jsonObject(with: Data(open.stdout.utf8)) as? [String: Any])
        #expect(openObject["reason"] as? String == "network")
        #expect((openObject["detail"] as? String)?.contains("Failed to connect") == true, "\(open.stdout)")
        #expect(!open.stderr.contains("hint:"), "\(open.stderr)")
    }

    @Test("A report that could not be written is refused before the batch runs (exit 73, EX_CANTCREAT), not after it")
    func unwritableReportRefusedFirst() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let campaign = directory + "/campaign.jsonl"
        try Payloads.braze(url: "https://cdn.example/a.png").write(to: URL(fileURLWithPath: campaign))
        let blocker = directory + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        for (report, message) in [
            (directory + "/missing/report.html", "cannot write the report \(directory)/missing/report.html: \(directory)/missing does not exist"),
            (blocker + "/report.html", "cannot write the report \(blocker)/report.html: \(blocker) is not a directory"),
            (directory, "cannot write the report \(directory): it is a directory"),
        ] {
            let result = try await CommandRunner.run(
                "fetch-attachment", ["--batch", campaign, "--no-cache", "--output-dir", directory + "/out", "--report", report])
            #expect(result.status == 73, "\(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            // One line, no usage: the command line was right, the file cannot be made.
            #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
            // Refused before any payload ran: no outcome on stdout, no summary on stderr.
            #expect(result.stdout.isEmpty, "\(result.stdout)")
            #expect(!result.stderr.contains("batch:"), "\(result.stderr)")
        }
        // A report beside the campaign is written, as before.
        let written = directory + "/report.html"
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--batch", campaign, "--no-cache", "--timeout", "1", "--output-dir", directory + "/out", "--report", written])
        #expect(result.stderr.contains("report: \(written)"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: written))
        // A file that takes no writes though its checks pass (for root): the system's reason, at
        // the end, in its own words.
        let refusing = try await CommandRunner.run(
            "fetch-attachment", ["--batch", campaign, "--no-cache", "--timeout", "1", "--output-dir", directory + "/out", "--report", "/proc/version"])
        #expect(refusing.status == 73, "\(refusing.stderr)")
        #expect(refusing.stderr.contains("cannot write the report /proc/version: "), "\(refusing.stderr)")
        #expect(!refusing.stderr.contains("NSCocoaErrorDomain") && !refusing.stderr.contains("could not be completed"), "\(refusing.stderr)")
    }
}
