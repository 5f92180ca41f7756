import ArgumentParser
import Foundation

/// The load test's scenarios (the names are the command line's).
enum ScenarioName: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// One URL × 10,000 payloads at once, cold cache; and with `--no-cache`, what the origin sees when
    /// each payload fetches its own copy.
    case sameURL = "same-url"
    /// 2,000 distinct 100 KB JPEGs at once: fetch-attachment (cache on, as the CLI's defaults, and
    /// `--no-cache`) vs curl --parallel vs URLSession.
    case distinctURLs = "distinct-urls"
    /// 20 × 50 MB MP4 at once.
    case videos
    /// 1,000 payloads, 10 % faulty, deadline 2 s.
    case faultMix = "fault-mix"
    /// 100,000 payloads for one URL on a warm cache, against the hard-link floor.
    case warmCache = "warm-cache"
    /// 100 payloads over 10 URLs plus a few faults (CI).
    case smoke
    /// A spike of your own: `--payloads`, `--urls`, `--bytes`, `--media-type`, `--fault-percent`,
    /// `--deadline`, `--window`.
    case custom

    /// What `load-test` runs without `--scenario`.
    static let defaultSet: [ScenarioName] = [.sameURL, .distinctURLs, .videos, .faultMix, .warmCache]

    /// One line about the scenario, for the report.
    var summary: String {
        switch self {
        case .sameURL:
            "one 100 KB JPEG URL in every payload, all at once, cold cache, and with --no-cache (each payload its own copy)"
        case .distinctURLs:
            "distinct 100 KB JPEG URLs (personalised images), all at once, fetch-attachment with its cache and without"
        case .videos: "50 MB MP4 videos, all at once"
        case .faultMix: "10 % faulty (stall, reset, truncation, 404, 500, lying Content-Type), deadline 2 s"
        case .warmCache: "one URL, second run on a warm cache, against a bare hard-link loop"
        case .smoke: "100 payloads over 10 URLs plus faults, deadline 2 s (CI)"
        case .custom: "a spike described by --payloads, --urls, --bytes, --media-type, --fault-percent, --timeout, --window"
        }
    }
}

/// A Braze payload for `url` with type hint `type`.
func brazePayload(url: String, type: String = "jpg") -> String {
    #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"\#(type)"}}}"#
}

/// Writes `payloads` to `path`, a line each, and returns `path`.
func writeBatch(_ payloads: [PlannedPayload], to path: String) throws -> String {
    var text = ""
    text.reserveCapacity(payloads.count * 160)
    for payload in payloads {
        text += payload.json
        text += "\n"
    }
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

/// One payload line with the outcome the scenario expects for it ("attached", a reason code, or nil).
struct PlannedPayload: Sendable {
    /// The JSON payload (one line).
    var json: String
    /// The expected outcome.
    var expected: String?
}

/// The faults the fault mix and the smoke test inject, each with the URL query and the outcome expected.
enum Fault: CaseIterable, Sendable {
    /// The body stops after 10 KB and the connection stays open: the deadline ends it.
    case stall
    /// TCP reset after 20 KB.
    case reset
    /// Clean close after 20 KB of a 100 KB Content-Length.
    case truncate
    /// 404 Not Found.
    case notFound
    /// 500 Internal Server Error.
    case serverError
    /// An HTML page served as image/jpeg: the bytes are refused.
    case htmlAsJPEG
    /// A real JPEG served as text/html: the bytes win, it is attached.
    case lyingContentType

    /// The media path and query for fault number `n`.
    func pathAndQuery(_ n: Int) -> String {
        switch self {
        case .stall: "/media/fault-stall-\(n).jpg?bytes=100000&stall_after=10000"
        case .reset: "/media/fault-reset-\(n).jpg?bytes=100000&reset_after=20000"
        case .truncate: "/media/fault-truncate-\(n).jpg?bytes=100000&truncate_after=20000"
        case .notFound: "/media/fault-404-\(n).jpg?status=404"
        case .serverError: "/media/fault-500-\(n).jpg?status=500"
        case .htmlAsJPEG: "/media/fault-html-\(n).html?bytes=3000&content_type=image/jpeg"
        case .lyingContentType: "/media/fault-lie-\(n).jpg?bytes=50000&content_type=text/html"
        }
    }

    /// The outcome expected.
    var expected: String {
        switch self {
        case .stall: "deadline"
        case .reset, .truncate: "network"
        case .notFound, .serverError: "http-status"
        case .htmlAsJPEG: "unsupported-type"
        case .lyingContentType: "attached"
        }
    }
}

/// The spike the `custom` scenario replays.
struct CustomSpike: Codable, Sendable {
    /// Payloads in all.
    var payloads: Int
    /// Distinct URLs the asset payloads share (the k-th asset payload asks for URL k mod urls; see `SpikePlan`).
    var urls: Int
    /// Size of each asset.
    var bytes: Int
    /// The assets' type (a mock CDN extension: jpg, png, gif, mp3, m4a, wav, aiff, mp4, mpg, avi).
    var mediaType: String
    /// Share of payloads, in percent, whose URL injects a fault (stall past the deadline, reset,
    /// truncation, 404, 500, HTML served as a JPEG, a lying Content-Type), in turn: exactly
    /// ⌊payloads × percent / 100⌋ of them, spread evenly (see `SpikePlan`).
    var faultPercent: Int
    /// Each payload's deadline in seconds.
    var deadline: Double
    /// Seconds over which the payloads are handed in, evenly; 0 hands them in all at once.
    var window: Double
}
