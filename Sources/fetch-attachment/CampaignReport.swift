import AttachmentFetcher
import Crypto
import Foundation
import Histogram

/// `--report FILE`: a campaign's outcomes as one self-contained HTML page (no network, no
/// external assets): the campaign's verdict (what failed, on which platform), the input it was;
/// totals by status and reason, per platform; every distinct URL with its
/// verdict, type, size, time and the payloads that use it, and a thumbnail of each attached image
/// (embedded as a data URI); every distinct warning with the payloads that got it; a latency
/// histogram drawn in SVG.
///
/// Everything a payload says is attacker input: every text is HTML-escaped, and only images of
/// the types browsers decode are embedded, from the files the fetcher itself checked.
final class CampaignReport: Sendable {
    /// The lowest payload numbers of a group (at most `listedPayloads`, in order, whatever order
    /// the payloads finished in), and how many there are in all.
    struct PayloadNumbers {
        var lowest: [Int] = []
        var count = 0

        mutating func record(_ index: Int) {
            count += 1
            if lowest.count < CampaignReport.listedPayloads || index < lowest[lowest.count - 1] {
                lowest.insert(index, at: lowest.firstIndex { $0 > index } ?? lowest.endIndex)
                if lowest.count > CampaignReport.listedPayloads { lowest.removeLast() }
            }
        }

        /// The input's line numbers, from 1 as the human output's "line N" (an outcome's JSON
        /// `index` is 0-based): "1, 2, 10", and "… (N in all)" when more were counted than listed.
        var text: String {
            lowest.map { String($0 + 1) }.joined(separator: ", ") + (count > lowest.count ? " … (\(count) in all)" : "")
        }
    }

    /// A row's identity: a URL as the outcomes name it, or the label of the payloads of a vendor
    /// (or none) that name no URL, which no payload's URL can take.
    enum RowKey: Hashable {
        case url(String)
        case noURL(label: String)
    }

    /// What the page shows of one URL.
    struct URLRow {
        var key: RowKey
        var verdicts: [String: Int] = [:]
        var mime: String?
        var bytes: Int?
        var path: String?
        var milliseconds: [Double] = []
        var payloads = PayloadNumbers()
        /// The payloads this URL failed: its own verdict on them, or (a payload naming it alone)
        /// a judged platform's, was not `attached`. The lines a campaign team fixes.
        var failedPayloads = PayloadNumbers()
        /// Each reason's first detail.
        var details: [String: String] = [:]
        /// Each platform's verdicts on the URL, counted over the payloads that name it alone (a
        /// verdict of a payload with several files is not this URL's alone): platform → code →
        /// count, with each code's first detail. Payloads of other vendors may be judged
        /// differently (FCM's picture limit is not Braze's).
        var platformVerdicts: [(platform: Platform, counts: [String: Int], details: [String: String])] = []
        /// What the first payload that uses the URL shows, on each platform it says (an FCM
        /// HTTP v1 message judged on iOS says what Android and iPhones show).
        var samples: [NotificationContent] = []
        /// The vendor of the payload the samples are from, whose SDK's rules some fields follow.
        var sampleVendor: Vendor?
        /// The payloads using the URL whose texts differ from the sample's (personalised copy, a
        /// variant, a template left unrendered): where to look beyond the one shown.
        var otherTexts = PayloadNumbers()

        /// The type, size and thumbnail of the row are those of the first file the URL gave, all
        /// three: an origin may serve another file to a later fetch (`no-store`, `--no-cache`),
        /// and a thumbnail is embedded only within limits its own size is checked against.
        mutating func keepFirstFile(_ file: Attachment) {
            guard path == nil else { return }
            path = file.path
            mime = file.mime
            bytes = file.bytes
        }

        /// What a notification says, to tell one payload's copy from another's.
        static func texts(_ notification: NotificationContent) -> [String?] {
            [notification.platform.rawValue, notification.shownTitle?.description, notification.shownSubtitle?.description, notification.shownBody?.description]
        }

        /// Whether a payload failed on the URL, by its own verdict or by a judged platform's.
        var failed: Bool { failedPayloads.count > 0 }

        /// Counts the `index`th payload's use of the URL, which it `failed` (the URL's verdict).
        mutating func record(_ outcome: Outcome, at index: Int, single: Bool, failed: Bool) {
            var failed = failed
            if single {
                for verdict in outcome.verdicts {
                    let code = verdict.reason?.code ?? "attached"
                    if !platformVerdicts.contains(where: { $0.platform == verdict.platform }) {
                        platformVerdicts.append((verdict.platform, [:], [:]))
                    }
                    let position = platformVerdicts.firstIndex { $0.platform == verdict.platform }!
                    platformVerdicts[position].counts[code, default: 0] += 1
                    if let detail = verdict.detail, platformVerdicts[position].details[code] == nil {
                        platformVerdicts[position].details[code] = detail
                    }
                    if verdict.reason != nil { failed = true }
                }
            }
            if failed { failedPayloads.record(index) }
            // A push that shows no banner but sets a badge or plays a sound is noticed too.
            let shown = outcome.notifications.filter(\.isNoticeable)
            if samples.isEmpty {
                samples = shown
                sampleVendor = outcome.vendor
            } else if !shown.isEmpty, shown.map(Self.texts) != samples.map(Self.texts) {
                otherTexts.record(index)
            }
            payloads.record(index)
            milliseconds.append(outcome.elapsedMilliseconds)
        }
    }

    private struct State {
        var rows: [RowKey: URLRow] = [:]
        var order: [RowKey] = []
        var byStatus: [String: Int] = [:]
        var byReason: [String: Int] = [:]
        var byPlatform: [String: [String: Int]] = [:]
        /// The payloads that failed by reason: those that named a picture they did not get, or
        /// ended for a reason other than `noPictureAsked`.
        var failedByReason: [String: Int] = [:]
        /// The payloads that asked for no picture, by reason (`noPictureAsked`).
        var notAskedByReason: [String: Int] = [:]
        /// Each judged platform's failed payloads, counted as `failedByReason` is.
        var failedByPlatform: [String: Int] = [:]
        // The summary's precision, so that both show the same percentiles.
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        /// The largest latency as recorded: the histogram's maximum is its bucket's upper edge.
        var largestMilliseconds = 0.0
        var payloads = 0
        /// Each distinct warning's payloads, for the first `listedWarnings` texts; the others are
        /// counted together.
        var warnings: [String: PayloadNumbers] = [:]
        var otherWarnings = PayloadNumbers()
        /// The payloads that use a URL without a row (each counted once), and their verdicts on those URLs.
        var otherURLPayloads = PayloadNumbers()
        var otherURLVerdicts: [String: Int] = [:]
    }

    /// The most URLs the page lists whatever their verdicts, the first met: each row keeps what a
    /// payload shows, and a campaign of a distinct URL per payload would otherwise grow the report
    /// without bound (20,000 payloads of four URLs each took 480 MB). Past them, a URL a payload
    /// fails on still gets a row, up to `listedURLs` more: the failures are what a campaign team
    /// reads the page for, and they come first in it. The payloads of the others are counted in
    /// one row, with their verdicts; the totals count every payload.
    static let listedURLs = 2_000

    /// The most payload numbers listed per URL (the lowest); the rest are counted.
    static let listedPayloads = 20
    /// The most distinct warning texts the page lists, the first met (the attachment URLs in them
    /// are written `<URL>`, but a warning may name another URL); the payloads with others are
    /// counted in one row.
    static let listedWarnings = 200
    /// The largest image embedded as a thumbnail.
    static let largestThumbnail = 2_000_000
    /// The most bytes of images the page embeds in all, the first URLs' first: a campaign of
    /// thousands of large pictures would otherwise make a page of gigabytes, built in memory.
    static let thumbnailBudget = 16_000_000
    private static let displayable: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/x-ms-bmp"]

    private let state = Locked(State())
    /// The platforms a preflight judges: a payload that got no verdict (nothing fetched) is
    /// counted in each one's table by its reason.
    private let platforms: [Platform]
    /// What the page says the batch was: its input ("standard input", or the file's path) and
    /// each payload's timeout, in seconds.
    private let input: String
    private let timeout: Double

    init(platforms: [Platform] = [], input: String = "standard input", timeout: Double = 30) {
        self.platforms = platforms
        self.input = input
        self.timeout = timeout
    }

    /// The reasons of payloads that may have asked for no picture: a silent or internal push, or
    /// one naming none. A payload that names a picture and ends with one of them (on iOS, no
    /// `mutable-content`: no extension sees it) failed, as with any other reason.
    static let noPictureAsked: Set<String> = [FallbackReason.internalPush.code, FallbackReason.noAttachment.code]

    /// Whether the verdict `code` is a failure for a payload that `namesPicture` (or not): any
    /// but `attached`, save `noPictureAsked` for a payload that names no picture. The one rule
    /// the verdict, the platforms' counts and the rows' lines and colours follow.
    static func fails(_ code: String, namesPicture: Bool) -> Bool {
        code != "attached" && (namesPicture || !noPictureAsked.contains(code))
    }

    /// A warning with the payload's attachment URLs written `<URL>`: one row for "<URL> is plain
    /// http: …" however many URLs a campaign has (the URLs table lists each URL). Only what has
    /// a scheme's `://`: an invalid "URL" may be any text (`a`, `ios`), which would turn every
    /// occurrence of it in the payload's warnings into `<URL>`.
    static func withoutURLs(_ warning: String, of outcome: Outcome) -> String {
        let urls: [String?] = outcome.attachments.flatMap { [$0.url, $0.payloadURL] } + outcome.failures.flatMap { [$0.url, $0.payloadURL] }
        // The longest first: a URL may be a prefix of another.
        return Set(urls.compactMap { $0 }.filter { $0.contains("://") }).sorted { $0.count > $1.count }
            .reduce(warning) { $0.replacingOccurrences(of: $1, with: "<URL>") }
    }

    /// Counts one outcome, the `index`th payload of the batch.
    func add(_ outcome: Outcome, at index: Int) {
        state.withLock { state in
            state.payloads += 1
            state.byStatus[outcome.status.rawValue, default: 0] += 1
            if let reason = outcome.reason { state.byReason[reason.code, default: 0] += 1 }
            _ = state.latency.record(UInt64(max(1, min(3_600_000_000, (outcome.elapsedMilliseconds * 1_000).rounded()))))
            state.largestMilliseconds = max(state.largestMilliseconds, outcome.elapsedMilliseconds)
            var hasOtherWarnings = false
            for warning in Set(outcome.warnings.map { Self.withoutURLs($0, of: outcome) }) {
                if state.warnings[warning] != nil || state.warnings.count < Self.listedWarnings {
                    state.warnings[warning, default: PayloadNumbers()].record(index)
                } else {
                    hasOtherWarnings = true
                }
            }
            // A payload counts once among the others, however many of theirs it has.
            if hasOtherWarnings { state.otherWarnings.record(index) }
            // Each platform's verdict; a payload that got none (nothing fetched) counts in each
            // judged platform's table by its own reason. Without judged platforms (no
            // `--platform`), a payload counts on its own shape's platform, by its outcome.
            let verdicts: [(Platform, FallbackReason?)] =
                if !outcome.verdicts.isEmpty { outcome.verdicts.map { ($0.platform, $0.reason) } }
                else if !platforms.isEmpty { platforms.map { ($0, outcome.reason) } }
                else { outcome.notification.map { [($0.platform, outcome.reason)] } ?? [] }
            let namesPicture = !outcome.attachments.isEmpty || !outcome.failures.isEmpty
            for (platform, reason) in verdicts {
                let code = reason?.code ?? "attached"
                state.byPlatform[platform.rawValue, default: [:]][code, default: 0] += 1
                if Self.fails(code, namesPicture: namesPicture) { state.failedByPlatform[platform.rawValue, default: 0] += 1 }
            }
            if let reason = outcome.reason {
                if Self.fails(reason.code, namesPicture: namesPicture) { state.failedByReason[reason.code, default: 0] += 1 } else { state.notAskedByReason[reason.code, default: 0] += 1 }
            }
            let single = outcome.attachments.count + outcome.failures.count == 1
            var usesOtherURL = false
            func touch(_ key: RowKey, verdict: String, _ update: (inout URLRow) -> Void) {
                if state.rows[key] == nil {
                    let limit = verdict == "attached" ? Self.listedURLs : 2 * Self.listedURLs
                    guard state.rows.count < limit else {
                        usesOtherURL = true
                        state.otherURLVerdicts[verdict, default: 0] += 1
                        return
                    }
                    state.rows[key] = URLRow(key: key)
                    state.order.append(key)
                }
                update(&state.rows[key]!)
                // A payload that names no picture, silent or not, did not fail on its row.
                state.rows[key]!.record(outcome, at: index, single: single, failed: Self.fails(verdict, namesPicture: namesPicture))
            }
            for attachment in outcome.attachments {
                touch(.url(attachment.url), verdict: "attached") { row in
                    row.verdicts["attached", default: 0] += 1
                    row.keepFirstFile(attachment)
                }
            }
            for failure in outcome.failures {
                touch(.url(failure.url), verdict: failure.reason.code) { row in
                    row.verdicts[failure.reason.code, default: 0] += 1
                    if row.details[failure.reason.code] == nil { row.details[failure.reason.code] = failure.detail }
                    // A file another judged platform shows: its type, size and thumbnail.
                    if let file = failure.file { row.keepFirstFile(file) }
                }
            }
            // Payloads that name nothing to fetch: a row per vendor (an FCM push that shows
            // nothing is no Iterable ghost push), each reason's detail the first payload's, with
            // its line (the others' may differ: a malformed payload's offset).
            if outcome.attachments.isEmpty, outcome.failures.isEmpty, let reason = outcome.reason {
                touch(.noURL(label: "(no attachment URL\(outcome.vendor.map { ": \($0)" } ?? ""))"), verdict: reason.code) { row in
                    row.verdicts[reason.code, default: 0] += 1
                    if row.details[reason.code] == nil { row.details[reason.code] = outcome.detail.map { "line \(index + 1): \($0)" } }
                }
            }
            if usesOtherURL { state.otherURLPayloads.record(index) }
        }
    }

    /// The page, with the fetcher's counters, the batch's wall time and, when a signal ended it,
    /// the signal and the first line not processed.
    func html(statistics: PushAttachmentFetcher.Statistics, wall: Duration, interruption: (signal: Int32, line: Int?)? = nil) -> String {
        let state = state.withLock { $0 }
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="\(Self.contentSecurityPolicy)">
            <title>Campaign report</title>
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
            h1{font-size:22px}h2{font-size:17px;margin-top:28px}
            table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
            th{background:#f3f3f3}.num{text-align:right}.ok{color:#17692c;font-weight:600}.bad{color:#a31515;font-weight:600}
            td{overflow-wrap:anywhere}td.num,td.type{overflow-wrap:normal;white-space:nowrap}.scroll{overflow-x:auto}
            .quiet{color:#555;font-weight:600}
            .url{display:block;min-width:14em;max-width:420px;word-break:break-all}img.thumb{max-width:96px;max-height:96px;display:block}
            .sample{min-width:14em;max-width:420px}.wide{min-width:12em}.text{white-space:pre-line}
            .verdict{font-size:15px;padding:8px 12px;border-left:4px solid #a31515;background:#fbf1f1}
            .verdict.clean{border-left-color:#17692c;background:#f0f8f2}
            .detail{color:#666;font-size:12px}
            .button{display:inline-block;border:1px solid #999;border-radius:4px;padding:0 6px;margin-top:2px;font-size:12px}
            .swatch{display:inline-block;width:12px;height:12px;border:1px solid #999;vertical-align:middle}
            </style></head><body>
            <h1>Campaign report</h1>

            """
        let seconds = wall.timeInterval
        let generated = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        page += "<p class=\"detail\">\(Self.escape(input)), \(Self.escape(generated)); timeout \(String(format: "%g", timeout)) s"
        page += platforms.isEmpty ? "; each payload judged on its own platform" : "; judged on \(platforms.map(\.rawValue).joined(separator: " and "))"
        page += "</p>\n" + Self.verdictHTML(state)
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        page += "<p>\(count(state.payloads, "payload")) in \(String(format: "%.2f", seconds)) s; "
        page += "\(count(statistics.originRequests, "origin request")), \(count(statistics.cacheHits, "cache hit")), "
        page += "\(count(statistics.bytesDownloaded, "byte")) downloaded.</p>\n"
        if let interruption {
            page += "<p class=\"bad\">Interrupted by \(Self.escape(BatchSummary.signalName(interruption.signal))): "
            page += interruption.line.map { "the input from line \($0 + 1) on was not processed.</p>\n" } ?? "every line of the input had started.</p>\n"
        }
        page += "<h2>Totals</h2>\n" + Self.table(["status", "payloads"], state.byStatus.sorted { $0.key < $1.key }.map { [$0.key, "\($0.value)"] })
        if !state.byReason.isEmpty {
            page += Self.table(["reason", "payloads"], state.byReason.sorted { $0.key < $1.key }.map { [$0.key, "\($0.value)"] })
        }
        for (platform, counts) in state.byPlatform.sorted(by: { $0.key < $1.key }) {
            page += "<h2>On \(Self.escape(platform))</h2>\n"
            page += Self.table(["verdict", "payloads"], counts.sorted { $0.key < $1.key }.map { [$0.key, "\($0.value)"] })
        }
        if !state.warnings.isEmpty {
            // The most common first: a warning every payload has is a campaign's to fix.
            var rows = state.warnings.sorted { $0.value.count != $1.value.count ? $0.value.count > $1.value.count : $0.key < $1.key }
                .map { [$0.key, "\($0.value.count)", $0.value.text] }
            if state.otherWarnings.count > 0 {
                rows.append(["(other warnings)", "\(state.otherWarnings.count)", state.otherWarnings.text])
            }
            page += "<h2>Warnings</h2>\n" + Self.table(["warning", "payloads", "lines"], rows, numeric: [1])
        }
        page += "<h2>Latency</h2>\n" + Self.histogramSVG(state.latency, largest: state.largestMilliseconds)
        page += "<h2>URLs</h2>\n<div class=\"scroll\"><table id=\"urls\"><tr><th>picture</th><th>URL</th><th>verdict</th><th>type</th>"
        page += "<th class=\"num\">bytes</th><th class=\"num\">median ms</th><th>lines</th><th>a payload shows</th></tr>\n"
        var thumbnailBytes = 0
        // The URLs that failed a payload first, then those that attached every one; each in the
        // order met.
        let rows = state.order.compactMap { state.rows[$0] }
        for row in rows.filter(\.failed) + rows.filter({ !$0.failed }) {
            page += Self.row(row, thumbnailBytes: &thumbnailBytes)
        }
        if state.otherURLPayloads.count > 0 {
            let verdicts = state.otherURLVerdicts.sorted { $0.key < $1.key }.map { key, count in
                "<span class=\"\(key == "attached" ? "ok" : "bad")\">\(Self.escape(key))</span> \(count)"
            }.joined(separator: "<br>")
            page += "<tr class=\"other-urls\"><td></td><td>(other URLs: the first \(Self.listedURLs) met are listed, "
            page += "then up to \(Self.listedURLs) more that a payload failed on)</td>"
            page += "<td>\(verdicts)</td><td>-</td><td class=\"num\">-</td><td class=\"num\">-</td><td>\(state.otherURLPayloads.text)</td><td></td></tr>\n"
        }
        page += "</table></div>\n"
        page += "<script>\(Self.script)</script>\n</body></html>\n"
        return page
    }

    /// The campaign at a glance: how many payloads failed and on what, how many asked for no
    /// picture, how many attached; with judged platforms, each one's failures.
    private static func verdictHTML(_ state: State) -> String {
        let failures = state.failedByReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let failed = failures.reduce(0) { $0 + $1.value }
        let notAsked = state.notAskedByReason.sorted { $0.key < $1.key }
        var parts: [String] = []
        if failed > 0 {
            parts.append("<b>\(failed) of \(state.payloads) payloads failed</b> (" + failures.map { "\(escape($0.key)) \($0.value)" }.joined(separator: ", ")
                + "): the URLs below list them first, with their lines")
        } else {
            parts.append("<b>No payload failed</b>")
        }
        parts.append("\(state.byStatus["attached"] ?? 0) attached")
        if !notAsked.isEmpty {
            parts.append("no picture asked for: " + notAsked.map { "\(escape($0.key)) \($0.value)" }.joined(separator: ", "))
        }
        let platformFailures = state.failedByPlatform.sorted { $0.key < $1.key }.map { "on \(escape($0.key)) \($0.value) failed" }
        if !platformFailures.isEmpty { parts.append(platformFailures.joined(separator: ", ")) }
        let clean = failed == 0 && platformFailures.isEmpty
        return "<p class=\"verdict\(clean ? " clean" : "")\">" + parts.joined(separator: "; ") + ".</p>\n"
    }

    /// The page's one script: once loaded, it sets `data-images-rendered` and `data-rows` on the
    /// body (the pictures the browser decoded, and the URLs' rows), for whoever checks the page
    /// in a browser.
    static let script = """

        window.addEventListener('load', () => {
          const rendered = [...document.images].filter(i => i.complete && i.naturalWidth > 0).length;
          document.body.dataset.imagesRendered = rendered;
          document.body.dataset.rows = document.querySelectorAll('#urls tr.url-row').length;
        });

        """

    /// What the page may load and run, so that a text that escaped its escaping could do nothing:
    /// nothing from anywhere (no fetch, no font, no frame, no form), pictures from `data:` URIs
    /// alone, its own styles (an accent colour's swatch is an inline style), and `script` alone,
    /// named by its SHA-256.
    static let contentSecurityPolicy: String = {
        let digest = Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()
        return "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-\(digest)'; base-uri 'none'; form-action 'none'"
    }()

    private static func row(_ row: URLRow, thumbnailBytes: inout Int) -> String {
        var cells: [String] = []
        cells.append(thumbnail(row, thumbnailBytes: &thumbnailBytes))
        switch row.key {
        case .url(let url): cells.append("<span class=\"url\">\(escape(url))</span>")
        case .noURL(let label): cells.append("<i>\(escape(label))</i>")
        }
        // A silent push, or one naming no picture, is no failure: its row's verdict is not red.
        let namesPicture: Bool = if case .url = row.key { true } else { false }
        let quiet: (String) -> Bool = { !fails($0, namesPicture: namesPicture) }
        let verdicts = row.verdicts.sorted { $0.key < $1.key }.map { key, count in
            "<span class=\"\(key == "attached" ? "ok" : quiet(key) ? "quiet" : "bad")\">\(escape(key))</span> \(count)"
                + (row.details[key].map { "<div class=\"detail\">\(escape($0))</div>" } ?? "")
        }.joined(separator: "<br>")
        let platforms = row.platformVerdicts.map { platform in
            let codes = platform.counts.sorted { $0.key < $1.key }.map { code, count in
                "<span class=\"\(code == "attached" ? "ok" : quiet(code) ? "quiet" : "bad")\">\(escape(code))</span> \(count)"
                    + (platform.details[code].map { " (\(isolated($0)))" } ?? "")
            }
            return "<div class=\"detail\">\(escape(platform.platform.rawValue)): " + codes.joined(separator: "; ") + "</div>"
        }.joined()
        cells.append(verdicts + platforms)
        cells.append(escape(row.mime ?? "-"))
        cells.append(row.bytes.map(String.init) ?? "-")
        let sorted = row.milliseconds.sorted()
        cells.append(sorted.isEmpty ? "-" : String(format: "%.1f", sorted[sorted.count / 2]))
        cells.append(
            row.failed && row.failedPayloads.count < row.payloads.count
                ? "<span class=\"bad\">failed:</span> \(row.failedPayloads.text)<br>all: \(row.payloads.text)" : row.payloads.text)
        cells.append(
            row.samples.map { sampleHTML($0, vendor: row.sampleVendor) }.joined()
                + (row.otherTexts.count > 0 ? "<div class=\"detail\">other texts: lines \(row.otherTexts.text)</div>" : ""))
        let classes = ["", "", "wide", "type", "num", "num", "wide", "sample"]
        return "<tr class=\"url-row\">" + zip(cells, classes).map { cell, cls in
            cls.isEmpty ? "<td>\(cell)</td>" : "<td class=\"\(cls)\">\(cell)</td>"
        }.joined() + "</tr>\n"
    }

    /// What a notification of a payload from `vendor` shows, as its platform would show it: the
    /// lines the human output prints (`NotificationContent.shownLines`), the texts in their own
    /// direction, the buttons as buttons, the accent colour with a swatch.
    private static func sampleHTML(_ notification: NotificationContent, vendor: Vendor?) -> String {
        var html = "<div class=\"detail\">\(escape(notification.platform.rawValue))</div>"
        if !notification.visible { html += "<div class=\"detail\">\(escape(notification.invisibleHeading))</div>" }
        for line in notification.shownLines(vendor: vendor) {
            switch line.field {
            // Each text in the direction of its own first strong character (Arabic, Hebrew), its
            // line breaks kept.
            case .title: html += "<div class=\"text\" dir=\"auto\"><b>\(escape(line.text))</b></div>"
            case .subtitle, .body: html += "<div class=\"text\" dir=\"auto\">\(escape(line.text))</div>"
            case .buttons where !line.items.isEmpty:
                html += "<div>" + line.items.map { "<span class=\"button\">\(isolated($0))</span>" }.joined(separator: " ") + "</div>"
            case .accentColour: html += "<div class=\"detail\">\(escape(line.label)): \(swatch(line.text))\(escape(line.text))</div>"
            default: html += "<div class=\"detail\">\(escape("\(line.label): \(line.text)"))</div>"
            }
        }
        return html
    }

    /// A square of the accent colour `argb` (`#AARRGGBB`) and a space before its text, as CSS's
    /// `rgba()` of its parsed digits; nothing for a text of another form.
    private static func swatch(_ argb: String) -> String {
        guard argb.utf8.count == 9, argb.hasPrefix("#"), let value = UInt32(argb.dropFirst(), radix: 16) else { return "" }
        let alpha = String(format: "%.3f", Double(value >> 24) / 255)
        return "<span class=\"swatch\" style=\"background:rgba(\(value >> 16 & 0xFF),\(value >> 8 & 0xFF),\(value & 0xFF),\(alpha))\"></span> "
    }

    /// The attached file as an image embedded by a data URI, for images browsers decode that
    /// are not too large, while the page's `thumbnailBudget` lasts (`thumbnailBytes` so far);
    /// past it, a note that says so.
    private static func thumbnail(_ row: URLRow, thumbnailBytes: inout Int) -> String {
        guard let mime = row.mime?.lowercased(), displayable.contains(mime), let path = row.path, let bytes = row.bytes
        else { return "" }
        guard bytes <= largestThumbnail else {
            return "<span class=\"detail\">not embedded: over \(largestThumbnail) bytes</span>"
        }
        guard thumbnailBytes + bytes <= thumbnailBudget else {
            return "<span class=\"detail\">not embedded: the page holds \(thumbnailBudget) bytes of pictures at most</span>"
        }
        // The file as it is now (its receiver may have replaced it): read no more than a
        // thumbnail may hold, and counted by what was read; nothing unless it is a regular file
        // (a link put in its place is not followed, a FIFO not waited on).
        guard let bytes = CommandSyscalls.readRegularFile(path, upTo: largestThumbnail + 1) else { return "" }
        let data = Data(bytes)
        guard data.count <= largestThumbnail, thumbnailBytes + data.count <= thumbnailBudget else {
            return "<span class=\"detail\">not embedded: the file changed since it was fetched</span>"
        }
        thumbnailBytes += data.count
        // The text stands in where this browser cannot decode the picture (HEIC, AVIF…).
        return "<img class=\"thumb\" alt=\"\(escape(mime)), which this browser could not draw\" src=\"data:\(mime);base64,\(data.base64EncodedString())\">"
    }

    /// A table of escaped texts; the columns in `numeric` are aligned as numbers.
    private static func table(_ header: [String], _ rows: [[String]], numeric: Set<Int> = []) -> String {
        var html = "<table><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows {
            html += "<tr>" + row.enumerated().map { column, text in
                numeric.contains(column) ? "<td class=\"num\">\(escape(text))</td>" : "<td>\(escape(text))</td>"
            }.joined() + "</tr>\n"
        }
        return html + "</table>\n"
    }

    /// Payloads per latency bucket (powers of two of milliseconds), as SVG bars.
    /// `largest`: the largest latency as recorded, in milliseconds; no figure shown exceeds it.
    private static func histogramSVG(_ histogram: Histogram<UInt64>, largest: Double) -> String {
        guard histogram.totalCount > 0 else { return "<p>No payloads.</p>\n" }
        var buckets: [(label: String, count: UInt64)] = []
        var lower: UInt64 = 0
        var upper: UInt64 = 1_000  // microseconds: the first bucket is [0, 1 ms]
        let highest = histogram.max
        while lower <= highest, buckets.count < 24 {
            let count = histogram.count(within: lower...upper)
            buckets.append(("≤" + Self.durationLabel(microseconds: upper), count))
            lower = upper + 1
            upper *= 2
        }
        let tallest = max(1, buckets.map(\.count).max() ?? 1)
        // A margin above the tallest bar for its count.
        let width = 48, height = 160, top = 18
        // Wide enough for the caption below the bars, however few they are.
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(max(buckets.count * width + 20, 420))\" height=\"\(height + top + 60)\" role=\"img\" aria-label=\"latency histogram\">\n"
        for (position, bucket) in buckets.enumerated() {
            let barHeight = Int(Double(bucket.count) / Double(tallest) * Double(height))
            let x = 10 + position * width
            svg += "<rect x=\"\(x + 4)\" y=\"\(top + height - barHeight)\" width=\"\(width - 8)\" height=\"\(barHeight)\" fill=\"#3b73b9\"><title>\(bucket.count) payloads \(escape(bucket.label))</title></rect>\n"
            svg += "<text x=\"\(x + width / 2)\" y=\"\(top + height + 16)\" font-size=\"9\" text-anchor=\"middle\">\(escape(bucket.label))</text>\n"
            if bucket.count > 0 {
                svg += "<text x=\"\(x + width / 2)\" y=\"\(top - 4 + height - barHeight)\" font-size=\"10\" text-anchor=\"middle\">\(bucket.count)</text>\n"
            }
        }
        let p50 = min(largest, Double(histogram.valueAtPercentile(50)) / 1_000)
        let p99 = min(largest, Double(histogram.valueAtPercentile(99)) / 1_000)
        svg += "<text x=\"10\" y=\"\(top + height + 40)\" font-size=\"12\">p50 \(String(format: "%.1f", p50)) ms, p99 \(String(format: "%.1f", p99)) ms, max \(String(format: "%.1f", largest)) ms</text>\n"
        return svg + "</svg>\n"
    }

    /// A bucket's bound as few characters as fit under its bar: "512 µs", "256 ms", "4.1 s".
    static func durationLabel(microseconds: UInt64) -> String {
        switch microseconds {
        case ..<1_000: "\(microseconds) µs"
        case ..<1_000_000: "\(microseconds / 1_000) ms"
        case ..<10_000_000: String(format: "%.1f s", Double(microseconds) / 1e6)
        default: "\(Int((Double(microseconds) / 1e6).rounded())) s"
        }
    }

    /// `escape(text)` in a `<bdi>`: text set among others on one line (a platform's verdicts, a
    /// row of buttons), whose bidirectional controls (U+202E, say) then reorder nothing outside it.
    static func isolated(_ text: String) -> String {
        "<bdi>\(escape(text))</bdi>"
    }

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default:
                if character.value < 0x20 && character != "\n" && character != "\t" {
                    escaped += "\u{FFFD}"  // not even a character reference may name C0 controls
                } else {
                    escaped.unicodeScalars.append(character)
                }
            }
        }
        return escaped
    }
}
