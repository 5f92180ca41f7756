import Foundation
import Testing

/// A name server that never answers, as an attacker's authoritative server for the payload's host
/// may: libcurl's threaded resolver is still waiting when the payload's deadline passes.
@Suite("A name server that never answers")
struct HostileNameServerTests {
    /// Whether this machine lets us make a network and mount namespace with its loopback up
    /// (root, or unprivileged user namespaces, and iproute2's `ip`).
    static func canIsolate() async -> Bool {
        let result = try? await CommandRunner.run(
            "/usr/bin/unshare", ["-rmn", "/bin/sh", "-c", "ip link set lo up"], timeout: .seconds(30))
        return result?.status == 0
    }

    @Test(
        "A lookup that hangs ends with its payload's deadline, and holds up neither other payloads nor the exit",
        .enabled("unshare -rmn or ip is unavailable here") { await HostileNameServerTests.canIsolate() })
    func hangingLookup() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Each try of a lookup waits 30 s, glibc's longest: a payload whose deadline had to wait
        // for it would end 28 s late.
        try Data("nameserver 127.0.0.1\noptions timeout:30 attempts:1\n".utf8).write(to: URL(fileURLWithPath: directory + "/resolv.conf"))
        let products = CommandRunner.productsDirectory
        let script = """
            set -e
            ip link set lo up
            mount --bind "$1/resolv.conf" /etc/resolv.conf
            "$2" --silent-dns-port 53 --threads 1 --duration 120 > "$1/port" 2> "$1/mock-cdn.log" &
            server=$!
            i=0
            while [ ! -s "$1/port" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
            port=$(head -n 1 "$1/port")
            {
                echo '{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://cdn.hangs.test/a.jpg"}}}'
                echo '{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://127.0.0.1:'"$port"'/media/b.jpg?bytes=2000"}}}'
                echo '{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://127.0.0.1:'"$port"'/media/c.jpg?bytes=2000&delay_ms=1500"}}}'
            } > "$1/campaign.jsonl"
            status=0
            "$3" --batch "$1/campaign.jsonl" --json --no-cache --allow-private-networks --timeout 2 --output-dir "$1/out" || status=$?
            kill "$server" 2> /dev/null || true
            wait "$server" 2> /dev/null || true
            exit $status
            """
        let result = try await CommandRunner.run(
            "/usr/bin/unshare",
            ["-rmn", "/bin/sh", "-c", script, "sh", directory, products.appendingPathComponent("mock-cdn").path,
             products.appendingPathComponent("fetch-attachment").path],
            timeout: .seconds(90))
        #expect(result.status == 1, "\(result.stderr)")
        let outcomes = try result.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(outcomes.map { $0["reason"] as? String } == ["deadline", nil, nil], "\(result.stdout)")
        // Within the deadline's 2 s and a generous margin for a loaded machine, far from the
        // lookup's 30 s.
        let elapsed = outcomes.compactMap { $0["elapsed_ms"] as? Double }
        #expect(elapsed.count == 3 && elapsed.allSatisfy { $0 < 15_000 }, "\(elapsed)")
    }

    @Test(
        "A name that does not resolve says so under the address policy too: a typo in a URL is not 'could not fetch'",
        .enabled("unshare -rmn or ip is unavailable here") { await HostileNameServerTests.canIsolate() })
    func unresolvedName() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A name server on 127.0.0.1 that is not there: each lookup is refused at once, and
        // nothing leaves the namespace.
        try Data("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".utf8).write(to: URL(fileURLWithPath: directory + "/resolv.conf"))
        try Data(#"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://cdn.typo.test/a.jpg"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/payload.json"))
        let script = #"ip link set lo up && mount --bind "$1/resolv.conf" /etc/resolv.conf && "$2" "$1/payload.json" --json --no-cache --output-dir "$1/out" --timeout 10"#
        let result = try await CommandRunner.run(
            "/usr/bin/unshare", ["-rmn", "/bin/sh", "-c", script, "sh", directory, CommandRunner.fetchAttachmentPath],
            stdin: Data(), timeout: .seconds(60))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)\(result.stderr)")
        #expect(object["reason"] as? String == "network")
        #expect((object["detail"] as? String)?.contains("Could not resolve host: cdn.typo.test") == true, "\(object)")
    }
}
