import Foundation
import MockCDN
import Testing

/// fetch-attachment on hostile input and hostile surroundings: endless or huge input, closed or
/// full output streams, control characters in what it prints, command lines at their edges. Each
/// test runs the built binary, most through `/bin/sh` (for pipes from `yes`, redirections to
/// `/dev/full` and arguments that are not UTF-8).
// The limits guard against a hang, and grow with the other generous bounds under ThreadSanitizer
// (ATTACHMENT_FETCHER_TEST_TIME_SCALE): a batch of 50,000 lines took over 90 s there on a slow
// machine.
@Suite("fetch-attachment: bounded input, loud failures", .timeLimit(.minutes(3 * TestTiming.scale)))
struct CLIRobustnessTests {
    /// An internal push: an outcome without any network request.
    static let silentPush = #"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#

    /// The exit status for a failed write on standard output or standard error.
    static let writeErrorStatus: Int32 = 74

    /// Runs `script` with `sh -c`, `$0` being the fetch-attachment binary and `$D` a fresh
    /// directory (removed afterwards), and returns its result with the binary's peak resident set
    /// size in KiB (from its test hook).
    private func shell(
        _ script: String, stdin: Data = Data(), timeout: Duration = .seconds(90) * TestTiming.scale
    ) async throws -> (result: CommandRunner.Result, peakKiB: Int?) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let peakFile = directory + "/peak-rss"
        let binary = CommandRunner.fetchAttachmentPath
        let result = try await CommandRunner.run(
            // The limit of virtual memory keeps a reader that does not stop from taking the
            // machine down; ThreadSanitizer cannot run under one.
            "/bin/sh", ["-c", (Self.underThreadSanitizer ? "" : "ulimit -v 4194304; ") + script, binary], stdin: stdin,
            environment: ["FETCH_ATTACHMENT_PEAK_RSS_FILE": peakFile, "D": directory], timeout: timeout)
        let peak = (try? String(contentsOfFile: peakFile, encoding: .utf8)).flatMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (result, peak)
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0.prefix(300))")
        }
    }

    /// The peak resident set size the binary may reach on any input: what it needs for a
    /// small payload (32–38 MiB measured in debug builds, the 64 MiB line included), with room, and well
    /// below the 64 MiB lines and the larger inputs below.
    static let peakBoundKiB = 48 * 1024

    /// Whether the binaries are built with ThreadSanitizer (scripts/tsan.sh), whose shadow
    /// memory makes every peak several times larger: the memory bounds are not checked then (the
    /// outcomes, their order and the exit statuses are).
    static let underThreadSanitizer = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil

    /// Checks `peak` (KiB) against `peakBoundKiB`, unless under ThreadSanitizer.
    private func expectBounded(_ peak: Int?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard !Self.underThreadSanitizer else { return }
        let peakKiB = try #require(peak, "no peak RSS reported", sourceLocation: sourceLocation)
        #expect(peakKiB < Self.peakBoundKiB, sourceLocation: sourceLocation)
    }

    // MARK: Bounded input

    @Test("`yes | fetch-attachment -` stops reading after the payload limit: invalid-payload, exit 1, bounded memory")
    func endlessStandardInput() async throws {
        // The virtual memory limit only keeps an unbounded reader from taking the machine down.
        let (result, peak) = try await shell(#"yes | "$0" - --json --no-cache --output-dir "$D/out""#)
        #expect(result.status == 1, "\(result.stderr)")
        let objects = try jsonLines(result.stdout)
        #expect(objects.count == 1)
        #expect(objects.first?["reason"] as? String == "invalid-payload")
        #expect((objects.first?["detail"] as? String)?.contains("more than") == true, "\(objects)")
        try expectBounded(peak)
    }

    @Test("A payload file larger than the limit is read no further than the limit")
    func largePayloadFile() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/big.json"
        try Data(repeating: UInt8(ascii: " "), count: 64 << 20).write(to: URL(fileURLWithPath: path))
        let (result, peak) = try await shell(#""$0" '\#(path)' --json --no-cache --output-dir '\#(directory)/out'"#)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try jsonLines(result.stdout).first?["reason"] as? String == "invalid-payload")
        try expectBounded(peak)
    }

    @Test("A payload of exactly the limit is accepted with the line ending a file has, from a file and from standard input; a byte more is not")
    func payloadAtTheLimit() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A silent push padded with a custom key to 4,096 bytes.
        let head = #"{"aps":{"content-available":1},"pad":""#, tail = #""}"#
        let exact = head + String(repeating: "p", count: 4096 - head.utf8.count - tail.utf8.count) + tail
        #expect(exact.utf8.count == 4096)
        let over = head + String(repeating: "p", count: 4097 - head.utf8.count - tail.utf8.count) + tail
        // White space past the limit is a pretty-printed payload's, read as its compact form.
        for (text, accepted) in [(exact + "\n", true), (exact + "\r\n", true), (exact, true), (over + "\n", false), (exact + "\n\n", true)] {
            let path = directory + "/payload.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            for source in [path, "-"] {
                let result = try await CommandRunner.run(
                    "fetch-attachment", [source, "--json", "--no-cache", "--output-dir", directory + "/out"],
                    stdin: source == "-" ? Data(text.utf8) : Data())
                let reason = try jsonLines(result.stdout).first?["reason"] as? String
                #expect((reason == "invalid-payload") == !accepted, "\(text.utf8.count) bytes from \(source): \(reason ?? "-")")
            }
        }
    }

    @Test("A pretty-printed payload over the limit whose compact form fits is read as that form, with a note; one whose compact form does not is invalid-payload")
    func prettyPrintedPayload() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func pretty(keys: Int) throws -> Data {
            var object: [String: Any] = ["aps": ["alert": ["title": "T", "body": "a \"quoted\"  text"], "mutable-content": 1], "ab": [:]]
            for index in 0..<keys { object["key\(index)"] = "value \(index)" }
            return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        }
        let fits = try pretty(keys: 180), overflows = try pretty(keys: 300)
        #expect(fits.count > 4096 && overflows.count > 4096)
        for (data, reason) in [(fits, "no-attachment"), (overflows, "invalid-payload")] {
            let path = directory + "/payload.json"
            try data.write(to: URL(fileURLWithPath: path))
            let result = try await CommandRunner.run("fetch-attachment", [path, "--json", "--no-cache", "--output-dir", directory + "/out"])
            let object = try #require(try jsonLines(result.stdout).first)
            #expect(object["reason"] as? String == reason, "\(object)")
            if reason == "no-attachment" {
                #expect(result.stderr.unwrapped.contains("is pretty-printed (\(fits.count) bytes): read as its compact form"), "\(result.stderr)")
                // The strings keep their own spaces.
                #expect((object["notification"] as? [String: Any])?["body"] as? String == "a \"quoted\"  text")
            }
        }
    }

    @Test("A closed standard input is named as such, for a payload and for a batch (not 'Invalid argument' from a descriptor that took its number)")
    func closedStandardInput() async throws {
        let (single, _) = try await shell(#""$0" --json --no-cache --output-dir "$D/out" <&-"#)
        #expect(single.status == 66, "\(single.stderr)")
        #expect(single.stderr == "Error: cannot read the payload: standard input is closed\n", "\(single.stderr)")
        let (batch, _) = try await shell(#""$0" --batch - --json --no-cache --output-dir "$D/out" <&-"#)
        #expect(batch.status == 74, "\(batch.stderr)")
        #expect(batch.stderr.contains("cannot read - to its end: standard input is closed"), "\(batch.stderr)")
        #expect(!batch.stderr.contains("holds no payload"), "\(batch.stderr)")
    }

    @Test("A --concurrency far above a batch's line count starts no more workers than there are lines: bounded memory")
    func concurrencyAboveLines() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let batch = directory + "/batch.jsonl"
        try Data(String(repeating: Self.silentPush + "\n", count: 8).utf8).write(to: URL(fileURLWithPath: batch))
        let (result, peak) = try await shell(#""$0" --batch '\#(batch)' --json --no-cache --concurrency 1000000 --output-dir "$D/out""#)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try jsonLines(result.stdout).count == 8)
        try expectBounded(peak)
    }

    /// A batch of: a silent push, a 64 MiB line, a silent push, a line that is not JSON.
    private func batchWithHugeLine(at path: String) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.write(contentsOf: Data((Self.silentPush + "\n").utf8))
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<64 { try handle.write(contentsOf: chunk) }
        try handle.write(contentsOf: Data(("\n" + Self.silentPush + "\r\nnot json\n").utf8))
    }

    @Test(
        "A 64 MiB line in a batch is its own invalid-payload outcome, skipped as it streams; order and indices kept",
        arguments: ["file", "pipe"])
    func hugeBatchLine(source: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/batch.jsonl"
        try batchWithHugeLine(at: path)
        // From a pipe, not a redirection: that would be a regular file again.
        let command = source == "file" ? #""$0" --batch '\#(path)'"# : #"cat '\#(path)' | "$0" --batch -"#
        let (result, peak) = try await shell(
            command + " --json --no-cache --output-dir '\(directory)/out'")
        #expect(result.status == 1, "\(result.stderr)")
        let objects = try jsonLines(result.stdout)
        #expect(objects.map { $0["index"] as? Int } == [0, 1, 2, 3])
        #expect(objects.map { $0["reason"] as? String } == ["internal-push", "invalid-payload", "internal-push", "invalid-payload"])
        #expect((objects.dropFirst().first?["detail"] as? String)?.contains("more than") == true)
        try expectBounded(peak)
    }

    @Test("A line that does not end (256 MiB without a line break, from a pipe) does not grow memory; the next line is read")
    func unendingLine() async throws {
        let (result, peak) = try await shell(
            #"{ head -c 268435456 /dev/zero; printf '\n%s\n' '\#(Self.silentPush)'; } | "$0" --batch - --json --no-cache --output-dir "$D/out""#)
        #expect(result.status == 1, "\(result.stderr)")
        let objects = try jsonLines(result.stdout)
        #expect(objects.map { $0["index"] as? Int } == [0, 1])
        #expect(objects.map { $0["reason"] as? String } == ["invalid-payload", "internal-push"])
        try expectBounded(peak)
    }

    @Test("A batch file of 50,000 lines is streamed: every outcome, in order, in bounded memory")
    func manyLines() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/batch.jsonl"
        let count = 50_000
        var text = ""
        for index in 0..<count { text += index % 7 == 3 ? "{\n" : Self.silentPush + "\n" }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        // 64 at once: at the default (1,024 in flight) the payloads in flight alone take the peak to
        // about 57 MiB, whatever the input's size; this test is about the input.
        let (result, peak) = try await shell(
            #""$0" --batch '\#(path)' --json --no-cache --concurrency 64 --output-dir '\#(directory)/out'"#)
        #expect(result.status == 1, "\(result.stderr)")
        let objects = try jsonLines(result.stdout)
        #expect(objects.count == count)
        #expect(objects.map { $0["index"] as? Int } == (0..<count).map { $0 })
        #expect(objects.enumerated().allSatisfy { index, object in
            object["reason"] as? String == (index % 7 == 3 ? "invalid-payload" : "internal-push")
        })
        try expectBounded(peak)
        #expect(result.stderr.contains("batch: \(count) payloads"))
    }

    // MARK: Write errors

    @Test(
        "A failed write on stdout or stderr is exit 74, in single and batch mode, never a crash nor a silent 0",
        arguments: [
            #""$0" - --json >&-"#,  // standard output closed
            #""$0" - --json >/dev/full"#,  // a full disk
            #""$0" - >/dev/full"#,  // the human summary
            #""$0" - --verbose 2>/dev/full"#,  // the log line of an outcome
            #""$0" --batch - --json >/dev/full"#,
            #""$0" --batch - >&-"#,
            #""$0" --batch - --json 2>/dev/full"#,  // the batch summary
        ])
    func writeErrors(script: String) async throws {
        let batch = Data(String(repeating: Self.silentPush + "\n", count: 3).utf8)
        let (result, _) = try await shell(script + " --no-cache --output-dir \"$D/out\"", stdin: batch)
        #expect(result.status == Self.writeErrorStatus, "\(result.stdout)\n\(result.stderr)")
        if !script.contains("2>") {
            #expect(result.stderr.contains("standard output"), "\(result.stderr)")
        }
    }

    // MARK: Control characters

    /// A payload whose URL holds a line break, an escape sequence and a forged log line.
    static let forgingPayload =
        #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://127.0.0.1:9/a.jpg\n2026-01-01T00:00:00+0000 debug fetch-attachment : [AttachmentFetcher] attachment ready\u001b[2K\r\u0085"}}}"#

    @Test("Control characters in a URL are escaped in the human output and in --verbose logs: no line is forged")
    func controlCharacters() async throws {
        let (result, _) = try await shell(#""$0" - --verbose --no-cache --output-dir "$D/out""#, stdin: Data(Self.forgingPayload.utf8))
        #expect(result.status == 1)
        for (name, text) in [("stdout", result.stdout), ("stderr", result.stderr)] {
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) }, "\(name): \(text.debugDescription)")
            // The human summary has several lines (the notification's); none is forged.
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("2026-01-01") }, "\(name): \(text.debugDescription)")
        }
        // One log line, and the hint that follows every refused address.
        #expect(result.stderr.unwrapped.split(separator: "\n").filter { !$0.hasPrefix("  hint: address-refused:") }.count == 1, "\(result.stderr.debugDescription)")
        // The log line names the URL, escaped.
        #expect(result.stderr.contains(#"a.jpg\n2026-01-01"#), "\(result.stderr.debugDescription)")
        #expect(result.stderr.contains(#"\u{1B}[2K\r\u{85}"#), "\(result.stderr.debugDescription)")
    }

    @Test("Bidirectional controls in a title are escaped in the human output: a line cannot be shown reordered")
    func bidirectionalControls() async throws {
        let payload = #"{"aps":{"alert":{"title":"Pay \u202Eelbmuh\u202C now","body":"\u2066x\u2069\u200F\u061C\u200B\u2060\uFEFF","subtitle":"\ud83d\udc68\u200d\ud83d\udc69"}},"ab":{}}"#
        let result = try await CommandRunner.run("fetch-attachment", ["--no-cache", "-"], stdin: Data(payload.utf8))
        #expect(!result.stdout.unicodeScalars.contains { [0x202E, 0x202C, 0x2066, 0x2069, 0x200F, 0x061C, 0x200B, 0x2060, 0xFEFF].contains($0.value) }, "\(result.stdout.debugDescription)")
        #expect(result.stdout.contains("body: \\u{2066}x\\u{2069}\\u{200F}\\u{61C}\\u{200B}\\u{2060}\\u{FEFF}"), "\(result.stdout)")
        // An emoji sequence's zero-width joiner stays: it draws one family, not two people.
        #expect(result.stdout.contains("subtitle: \u{1F468}\u{200D}\u{1F469}"), "\(result.stdout)")
        #expect(result.stdout.contains(#"title: Pay \u{202E}elbmuh\u{202C} now"#), "\(result.stdout)")
    }

    @Test("Empty input says it is empty; a pretty-printed batch gets a hint; human lines are numbered from 1, JSON's index from 0")
    func emptyAndPrettyInput() async throws {
        for input in ["", "  \n\t\n"] {
            let result = try await CommandRunner.run("fetch-attachment", ["--no-cache", "--json", "-"], stdin: Data(input.utf8))
            #expect(result.status == 1)
            let outcome = try #require(try jsonLines(result.stdout).first)
            #expect(outcome["reason"] as? String == "invalid-payload")
            #expect(outcome["detail"] as? String == "the payload is empty", "\(outcome)")
        }
        let pretty = "{\n  \"aps\": {\"alert\": \"hi\"}\n}\n\n" + Self.silentPush + "\n"
        let result = try await CommandRunner.run("fetch-attachment", ["--no-cache", "--batch", "-"], stdin: Data(pretty.utf8))
        #expect(result.stdout.hasPrefix("line 1: original content stands: invalid-payload"), "\(result.stdout)")
        #expect(result.stdout.contains("line 5: original content stands: internal-push"), "\(result.stdout)")
        #expect(result.stderr.unwrapped.contains("hint: invalid-payload: --batch reads one JSON payload per line"), "\(result.stderr)")
        let json = try await CommandRunner.run("fetch-attachment", ["--no-cache", "--json", "--batch", "-"], stdin: Data(pretty.utf8))
        #expect(try jsonLines(json.stdout).map { $0["index"] as? Int } == [0, 1, 2, 4])
        // One JSON payload per line: no hint.
        let fine = try await CommandRunner.run("fetch-attachment", ["--no-cache", "--batch", "-"], stdin: Data((Self.silentPush + "\n{oops\n").utf8))
        #expect(!fine.stderr.contains("hint: invalid-payload"), "\(fine.stderr)")
    }

    // MARK: Command lines

    @Test("--deadline, the old name of --timeout, is still accepted", arguments: ["--timeout", "--deadline"])
    func deadlineAlias(option: String) async throws {
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--json", "--no-cache", option, "5", "-"], stdin: Data(Self.silentPush.utf8))
        // The silent push needs no download: the original content stands (exit 1), named as such.
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("internal-push"), "\(result.stdout)")
    }

    @Test("A --timeout that rounds below 1 ms is a bad command line (exit 64) that says so")
    func tinyTimeout() async throws {
        let result = try await CommandRunner.run("fetch-attachment", ["--timeout", "0.0004", "-"], stdin: Data(Self.silentPush.utf8))
        #expect(result.status == 64)
        #expect(result.stderr.contains("--timeout"), "\(result.stderr)")
        #expect(result.stderr.contains("1 ms") || result.stderr.contains("0.001"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(
        "A path that is not UTF-8 is refused (exit 64) with a message, never replaced",
        arguments: [
            #"--output-dir "$D/out$(printf '\377')" -"#,
            #"--cache-dir "$D/cache$(printf '\377')" -"#,
            #"--batch "$D/batch$(printf '\377')""#,
            #""$D/payload$(printf '\377')""#,
            #"--output-dir="$D/out$(printf '\377')" -"#,
        ])
    func nonUTF8Paths(arguments: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Every file the arguments could name exists, under its non-UTF-8 name and its replaced one.
        for name in ["payload", "batch"] {
            for suffix in ["\u{FFFD}", ""] {
                try Data(Self.silentPush.utf8).write(to: URL(fileURLWithPath: directory + "/" + name + suffix))
            }
        }
        let script = #"D='\#(directory)'; for n in payload batch; do cp "$D/$n" "$D/$n$(printf '\377')"; done; "$0" "# + arguments
        let (result, _) = try await shell(script, stdin: Data(Self.silentPush.utf8))
        #expect(result.status == 64, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("UTF-8"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let made = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!made.contains { $0.hasPrefix("out") || $0.hasPrefix("cache") }, "\(made)")
    }

    @Test("An MPEG-4 body whose box after ftyp runs to the end of the file (size 0) ends in an outcome, not in a crashed process, with and without the cache")
    func endlessBoxAfterFileType() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = directory + "/files"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        // ftyp, then an mdat of size 0 ("to the end of the file"), then bytes: what a hostile
        // origin, or a recorder that never went back to write the size, serves.
        let ftyp = ISOBaseMediaTests.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("mp41".utf8))
        let body = ftyp + [0, 0, 0, 0] + Array("mdat".utf8) + [UInt8](repeating: 0x5A, count: 3000)
        try Data(body).write(to: URL(fileURLWithPath: files + "/endless.mp4"))
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: files)
        try await server.shuttingDown {
            let payload = Payloads.braze(url: server.url("/files/endless.mp4"), type: "mp4")
            for cache in [["--no-cache"], ["--cache-dir", directory + "/cache"]] {
                let result = try await CommandRunner.run(
                    "fetch-attachment", ["--json", "--allow-private-networks", "--output-dir", directory + "/out"] + cache, stdin: payload)
                #expect(result.status == 0 || result.status == 1, "\(cache): exit \(result.status): \(result.stderr.prefix(400))")
                let outcome = try jsonLines(result.stdout)
                #expect(outcome.count == 1, "\(cache): \(result.stdout)")
            }
        }
    }
}
