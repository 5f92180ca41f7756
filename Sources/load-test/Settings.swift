import Foundation

/// The executables the load test runs as children.
struct Tools: Sendable {
    /// fetch-attachment (the contender measured), beside load-test.
    var fetchAttachment: String
    /// urlsession-fetch (the URLSession baseline), beside load-test.
    var urlsessionFetch: String
    /// curl (the libcurl command-line baseline).
    var curl: String
    /// load-test itself (for the hidden hardlink-floor subcommand).
    var loadTest: String

    /// Finds the siblings in `directory` (default: the directory of the running load-test binary).
    static func locate(directory override: String?) -> Tools {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let directory = override ?? me.deletingLastPathComponent().path
        return Tools(
            fetchAttachment: directory + "/fetch-attachment",
            urlsessionFetch: directory + "/urlsession-fetch",
            curl: "/usr/bin/curl",
            loadTest: me.path)
    }
}

/// The knobs of one load-test invocation.
struct Settings: Codable, Sendable {
    /// Multiplies every payload count (except smoke's and custom's).
    var scale: Double
    /// Measured runs per contender.
    var runs: Int
    /// Transfers per host for the baselines (curl --parallel-max, URLSession); fetch-attachment's own per-host
    /// limit is the library's default, 48.
    var concurrency: Int
    /// fetch-attachment's `--concurrency` (payloads in flight), when given; else its default.
    var batchConcurrency: Int?
    /// Whether the scratch directory is on tmpfs (/dev/shm); else it is on disk, under the working
    /// directory or `--work-dir`.
    var tmpfs: Bool
    /// With `--tls`: the mock CDN's certificate, which fetch-attachment and curl trust (`--cacert`).
    var trustedCertificate: String?
    /// The scratch directory (removed afterwards): every contender's output, and fetch-attachment's caches, go there,
    /// so that a cache and its output share one file system.
    var scratch: String
    /// How the children's peak RSS is measured ("gnu-time" or "wait4").
    var rssMethod: String
    /// The `custom` scenario's spike.
    var custom: CustomSpike
}
