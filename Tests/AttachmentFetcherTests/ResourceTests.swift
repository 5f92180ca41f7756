@testable import AttachmentFetcher
import Foundation
import MockCDN
import Testing

/// The file-descriptor budget: the CLI under a hard limit of 1024 open files (as `ulimit -n
/// 1024` leaves most shells) must still attach every payload of a campaign, whether it names
/// 3,000 URLs of one origin or 3,000 origins; and running out is its own reason.
@Suite("File descriptors: campaigns within ulimit -n 1024", .timeLimit(.minutes(3)))
struct ResourceTests {
    /// Runs `fetch-attachment ARGUMENTS` with `ulimit -n LIMIT` (soft and hard).
    /// The batch goes in a file: `CommandRunner` writes standard input whole before it reads the
    /// output, which a streamed batch this large would fill first.
    private func runLimited(
        _ limit: Int, _ arguments: [String], batch: Data, in directory: String
    ) async throws -> CommandRunner.Result {
        let executable = CommandRunner.fetchAttachmentPath
        let batchPath = directory + "/batch.jsonl"
        try batch.write(to: URL(fileURLWithPath: batchPath))
        return try await CommandRunner.run(
            "/bin/bash", ["-c", "ulimit -n \(limit) && exec \"$0\" \"$@\"", executable, "--batch", batchPath] + arguments,
            timeout: .seconds(100))
    }

    /// Writes a batch of 200 Braze payloads, one per `url(index)`, to `directory/batch.jsonl`,
    /// and returns its path.
    private func writeBatch(in directory: String, url: (Int) -> String) throws -> String {
        var lines = Data()
        for index in 0..<200 {
            lines.append(Payloads.braze(url: url(index)))
            lines.append(UInt8(ascii: "\n"))
        }
        let path = directory + "/batch.jsonl"
        try lines.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The JSON object on each line of the program's standard output.
    private func outcomes(_ result: CommandRunner.Result) throws -> [[String: Any]] {
        // A line that is not a JSON object fails the test with the line itself, its exit status
        // and standard error, not only the parser's complaint.
        let stdout = result.stdout
        return try stdout.split(separator: "\n").enumerated().map { number, line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(
                object as? [String: Any],
                "line \(number + 1) of a \(stdout.utf8.count)-byte output is not a JSON object: \(String(line.prefix(300)).debugDescription); status \(result.status), stderr: \(result.stderr.suffix(2_000))")
        }
    }

    @Test("The default concurrency follows the limit, by the documented formula")
    func concurrencyFormula() {
        #expect(FileDescriptorBudget.concurrency(forLimit: 1024) == 160)
        #expect(FileDescriptorBudget.concurrency(forLimit: 6_208) == 1024)
        #expect(FileDescriptorBudget.concurrency(forLimit: 1_048_576) == 1024)
        #expect(FileDescriptorBudget.concurrency(forLimit: 256) == 32)
        #expect(FileDescriptorBudget.concurrency(forLimit: 10) == 1)
        #expect(FileDescriptorBudget.headroom(forLimit: 1024) == 16)
        #expect(FileDescriptorBudget.headroom(forLimit: 64) == 8)
        #expect(FileDescriptorBudget.raiseSoftLimit() >= FileDescriptorBudget.softLimit)
    }

    /// A campaign of 3,000 payloads under `ulimit -n 1024`.
    enum Campaign: String, CaseIterable, Sendable {
        /// 3,000 URLs of one origin, at the default concurrency.
        case oneOrigin
        /// 3,000 origins (names pinned to the mock CDN), at the default concurrency.
        case distinctOrigins
        /// 3,000 URLs of one origin with `--concurrency 1024`, more than the limit affords:
        /// payloads beyond the transfers running wait without holding a descriptor.
        case oneOriginAtConcurrency1024
    }

    @Test(
        "At ulimit -n 1024, 3,000 URLs of one origin (at the default and at 1024 payloads in flight) and 3,000 origins all attach (cache on)",
        arguments: Campaign.allCases)
    func campaignWithinLimit(campaign: Campaign) async throws {
        let distinctHosts = campaign == .distinctOrigins
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            let port = server.port
            var lines = Data()
            for index in 0..<3_000 {
                let url = distinctHosts
                    ? "http://o\(index).cdn.test:\(port)/media/d\(index).png?bytes=600"
                    : server.url("/media/u\(index).png?bytes=600")
                lines.append(Payloads.braze(url: url))
                lines.append(UInt8(ascii: "\n"))
            }
            // Every name of the distinct-origin campaign resolves to the mock CDN, and only that
            // address is allowed.
            var network = distinctHosts
                ? ["--resolve", "*:\(port):127.0.0.1", "--allow-network", "127.0.0.1/32"] : ["--allow-private-networks"]
            if campaign == .oneOriginAtConcurrency1024 { network += ["--concurrency", "1024"] }
            let result = try await runLimited(
                1024,
                ["--json", "--deadline", "60", "--cache-dir", directory + "/cache", "--output-dir", directory + "/out"]
                    + network,
                batch: lines, in: directory)
            let objects = try outcomes(result)
            #expect(objects.count == 3_000, "\(result.stderr)")
            let failed = objects.filter { $0["status"] as? String != "attached" }
            #expect(failed.isEmpty, "\(failed.count) not attached, first: \(failed.first.map { "\($0)" } ?? "")")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(server.stats().requests == 3_000)
        }
    }

    @Test("Out of descriptors is reason resources, never storage or network", arguments: [true, false])
    func exhaustionIsResources(cached: Bool) async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            let batchPath = try writeBatch(in: directory) { server.url("/media/r\($0).png?bytes=600") }
            // A limit of 200 affords 22 transfers at once; the shell holds 161 of the 200
            // descriptors open across the exec, as other parts of a process might, so that the
            // fetcher runs out.
            let executable = CommandRunner.fetchAttachmentPath
            let script = "ulimit -n 200 && for i in $(seq 10 170); do eval \"exec $i</dev/null\"; done; exec \"$0\" \"$@\""
            let cache = cached ? ["--cache-dir", directory + "/cache"] : ["--no-cache"]
            let result = try await CommandRunner.run(
                "/bin/bash",
                [
                    "-c", script, executable, "--batch", batchPath, "--json", "--allow-private-networks",
                    "--output-dir", directory + "/out",
                ] + cache,
                timeout: .seconds(60))
            let reasons = try outcomes(result).map { $0["reason"] as? String ?? "attached" }
            #expect(reasons.count == 200, "\(result.stderr)")
            #expect(reasons.contains("resources"), "\(reasons)")
            #expect(Set(reasons).isSubset(of: ["attached", "resources"]), "\(Set(reasons))")
        }
    }

    /// Dispatch's thread pool reads `/proc/<tid>/stat` of each worker once a second while work
    /// waits, and kills the process with SIGILL when that `open` fails: a fetcher that filled the
    /// table crashed mid-batch. Its own descriptors stop short of the top 16 slots instead.
    @Test("Out of descriptors, the fetcher's own leave the top of the table free (cache on)")
    func exhaustionLeavesHeadroom() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.shuttingDown {
            // Slow answers keep the transfers that got descriptors holding them while the rest
            // of the batch runs out.
            let batchPath = try writeBatch(in: directory) { server.url("/media/h\($0).png?bytes=600&delay_ms=1500") }
            // As in `exhaustionIsResources`, the shell holds 161 of 200 descriptors across the
            // fork; it counts the fetcher's open descriptors until it exits (at most 3,000 times).
            let script = """
                ulimit -n 200 && for i in $(seq 10 170); do eval "exec $i</dev/null"; done
                "$0" "$@" & pid=$!
                most=0; samples=0
                while kill -0 $pid 2>/dev/null && [ $samples -lt 3000 ]; do
                  n=$(ls /proc/$pid/fd 2>/dev/null | wc -l); [ "$n" -gt "$most" ] && most=$n
                  samples=$((samples + 1))
                done
                wait $pid; status=$?
                echo "most open: $most" >&2
                exit $status
                """
            let result = try await CommandRunner.run(
                "/bin/bash",
                [
                    "-c", script, CommandRunner.fetchAttachmentPath, "--batch", batchPath, "--json",
                    "--allow-private-networks", "--output-dir", directory + "/out", "--cache-dir", directory + "/cache",
                ],
                timeout: .seconds(60))
            let reasons = try outcomes(result).map { $0["reason"] as? String ?? "attached" }
            #expect(reasons.count == 200, "\(result.stderr)")
            #expect(reasons.contains("resources"), "\(reasons)")
            #expect(Set(reasons).isSubset(of: ["attached", "resources"]), "\(Set(reasons))")
            let most = result.stderr.split(separator: "\n").last { $0.hasPrefix("most open: ") }
                .flatMap { Int($0.dropFirst("most open: ".count)) }
            let count = try #require(most, "\(result.stderr)")
            // The ceiling is 184; a descriptor above it is closed as soon as it is seen, which a
            // sample may catch.
            #expect(count > 150 && count <= 200 - FileDescriptorBudget.headroom(forLimit: 200) / 2, "\(count) open")
        }
    }

    @Test("The cache never remembers a resources failure against the URL")
    func resourcesNotRemembered() {
        #expect(!CachedDownloads.isRemembered(TransferFailure(reason: .resources, detail: "")))
        #expect(CachedDownloads.isRemembered(TransferFailure(reason: .network, detail: "")))
    }
}
