import Foundation
import MockCDN
import Testing

/// `--report`: one self-contained HTML page, opened in a real headless browser.
@Suite("Campaign report", .serialized)
struct ReportTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The report of a batch of `lines`, processed one at a time (what the page lists first is
    /// what was met first, so the input's order), none of which is attached.
    static func reportOfBatch(_ lines: [String], in directory: String) async throws -> String {
        let run = try await runBatch(lines, in: directory, ["--concurrency", "1", "--json"])
        #expect(run.result.status == 1)
        return run.html
    }

    /// Writes `lines` as a batch in `directory` and runs `fetch-attachment --batch` on it with
    /// `--no-cache`, an output directory and a report there, and `arguments`; returns the run,
    /// the report's path and its text.
    static func runBatch(
        _ lines: [String], in directory: String, _ arguments: [String]
    ) async throws -> (result: CommandRunner.Result, report: String, html: String) {
        let batch = directory + "/batch.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: batch))
        let report = directory + "/report.html"
        let result = try await CommandRunner.run(
            "fetch-attachment", ["--batch", batch, "--no-cache", "--output-dir", directory + "/out", "--report", report] + arguments)
        return (result, report, try String(contentsOfFile: report, encoding: .utf8))
    }

    /// A batch of every kind of verdict, with its report.
    static func makeReport(in directory: String) async throws -> (html: String, path: String) {
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let urls = [
            server.url("/files/photo.jpg"), server.url("/files/photo.jpg"), server.url("/files/logo.png"),
            server.url("/files/animated.gif"), server.url("/files/photo.webp"), server.url("/files/tone.mp3"),
            server.url("/media/gone.png?status=404"), server.url("/media/page.jpg?bytes=900&content_type=text/html").replacingOccurrences(of: ".jpg", with: ".html"),
            #"javascript:<img src=x onerror=alert(1)>"#, server.url("/files/photo.jpg"),
        ]
        var lines = urls.map { url in
            let escaped = url.replacingOccurrences(of: "\"", with: "\\\"")
            return #"{"aps":{"alert":{"title":"Spring <sale>","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(escaped)"}}}"#
        }
        // A warning that quotes the payload: its text is attacker input too.
        lines.append(#"{"aps":{"alert":"B","mutable-content":1,"interruption-level":"<b>x</b>"},"ab":{"att":{"url":"\#(urls[0])"}}}"#)
        let run = try await runBatch(lines, in: directory, ["--json", "--platform", "ios,android"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(run.result.status == 1)  // not every payload attached
        #expect(run.result.stderr.contains("report: \(run.report)"), "\(run.result.stderr)")
        return (run.html, run.report)
    }

    @Test("The report is one self-contained page: totals, every URL once, thumbnails embedded, payload text escaped")
    func content() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (html, _) = try await Self.makeReport(in: directory)
        // Nothing to fetch: no external script, style, image or link.
        #expect(!html.contains("src=\"http"))
        #expect(!html.contains("href="))
        #expect(html.components(separatedBy: "<tr class=\"url-row\">").count - 1 == 8)  // 8 distinct URLs
        #expect(html.components(separatedBy: "src=\"data:image/").count - 1 == 4)  // jpg, png, gif, webp
        #expect(html.contains("<h2>On android</h2>") && html.contains("<h2>On ios</h2>"))
        #expect(html.contains("<td class=\"wide\">1, 2, 10, 11</td>"))  // the lines (from 1) whose payloads use photo.jpg
        #expect(html.contains("<th>lines</th>"))
        // Every distinct warning, with how many payloads had it and which.
        #expect(html.contains("<h2>Warnings</h2>"))
        #expect(html.contains("<td>Android draws only the first frame of an animated GIF: the animation does not play</td><td class=\"num\">1</td><td>4</td>"), "\(html)")
        #expect(html.contains("aps.interruption-level is &#39;&lt;b&gt;x&lt;/b&gt;&#39;"))
        // A warning about each payload's own URL is one row, its URL written <URL>.
        #expect(html.contains("<td>&lt;URL&gt; is plain http: App Transport Security refuses it unless the app allows arbitrary loads or this domain</td><td class=\"num\">10</td><td>1, 2, 3, 4, 5, 6, 7, 8, 10, 11</td>"), "\(html)")
        let warnings = try #require(html.components(separatedBy: "<h2>Warnings</h2>").last?.components(separatedBy: "</table>").first)
        #expect(!warnings.contains("127.0.0.1"), "\(warnings)")
        #expect(!html.contains("<b>x</b>"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("<svg"))
        #expect(html.contains("<b>Spring &lt;sale&gt;</b>"))  // a payload's title, escaped
    }

    @Test("The report's counts are in words a person writes: 1 payload, 1 origin request, 0 cache hits")
    func countsInWords() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let one = [#"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(server.url("/files/logo.png"))"}}}"#]
        let single = try await Self.runBatch(one, in: directory, Nginx.loopbackFlags)
        let two = try await Self.runBatch(one + one, in: directory, Nginx.loopbackFlags)
        try await server.shutdown()
        let bytes = try RealMediaTests.size(of: "logo.png")
        #expect(single.html.contains(" s; 1 origin request, 0 cache hits, \(bytes) bytes downloaded.</p>"), "\(single.html)")
        #expect(single.html.contains("<p>1 payload in "))
        #expect(two.html.contains("<p>2 payloads in ") && two.html.contains(" s; 2 origin requests, 0 cache hits, "), "\(two.html)")
    }

    @Test("An FCM HTTP v1 message judged on both platforms: each URL's sample shows the Android and the iPhone notification")
    func firebaseHTTPv1Samples() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let message = #"{"message":{"notification":{"title":"Sale","image":"\#(server.url("/files/photo.jpg"))"},"apns":{"payload":{"aps":{"alert":{"title":"iOS <sale>"},"mutable-content":1}}}}}"#
        let (result, _, html) = try await Self.runBatch([message], in: directory, ["--platform", "ios,android"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(html.contains("<div class=\"detail\">android</div><div class=\"text\" dir=\"auto\"><b>Sale</b></div>"), "\(html)")
        #expect(html.contains("<div class=\"detail\">ios</div><div class=\"text\" dir=\"auto\"><b>iOS &lt;sale&gt;</b></div>"), "\(html)")
    }

    @Test("A URL's sample shows the badge and sound, and Android's small icon, accent colour (a swatch and #AARRGGBB), lock-screen visibility, public version and dismissal, escaped")
    func sampleShowsBadgeSoundAndAndroidLook() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let lines = [
            ##"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\##(server.url("/media/a.jpg?bytes=2000"))","gcm.n.notification_count":"3","gcm.n.sound2":"<chime>","gcm.n.icon":"ic_<sale>","gcm.n.color":"#80FF0000","gcm.n.visibility":"-1","gcm.n.sticky":"1"}"##,
            ##"{"_ab":"true","t":"T2","a":"B2","ab_iu":"\##(server.url("/media/c.jpg?bytes=2000"))","nd":"30000","ab_pn":"{\"t\":\"<Locked>\"}"}"##,
            #"{"aps":{"alert":"B","badge":5,"sound":"<bell>.caf","mutable-content":1},"ab":{"att":{"url":"\#(server.url("/media/b.jpg?bytes=2000"))"}}}"#,
        ]
        let (result, _, html) = try await Self.runBatch(lines, in: directory, ["--platform", "ios,android"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        for expected in [
            "<div class=\"detail\">badge: 3</div>",
            "<div class=\"detail\">sound: the channel&#39;s (the default channel); &lt;chime&gt; before Android 8</div>",
            "<div class=\"detail\">small icon: ic_&lt;sale&gt;</div>",
            "<div class=\"detail\">accent colour: <span class=\"swatch\" style=\"background:rgba(255,0,0,0.502)\"></span> #80FF0000</div>",
            "<div class=\"detail\">lock screen: secret (not shown on a secure lock screen)</div>",
            "<div class=\"detail\">after a tap: stays in the shade (sticky)</div>",
            "<div class=\"detail\">lock screen: private (Android&#39;s default); a secure lock screen shows &quot;&lt;Locked&gt;&quot; instead</div>",
            "<div class=\"detail\">removed after: 30 s</div>",
            "<div class=\"detail\">badge: 5</div>", "<div class=\"detail\">sound: &lt;bell&gt;.caf</div>",
        ] {
            #expect(html.contains(expected), "\(expected)")
        }
        #expect(!html.contains("<chime>") && !html.contains("ic_<sale>") && !html.contains("<Locked>"))
    }

    @Test("A sample shows each field of the notification as the human output does: the sound's rules, the tap's web view, each button's target and tap, the summary, arguments, a badge without a banner")
    func sampleAgreesWithHumanOutput() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let lines = [
            ##"{"_ab":"true","t":"Sale","a":"50% off","s":"Deals","uri":"https://example.com/sale","ab_use_webview":"true","ab_nc":"promos","p":"2","sd":"d","ab_iu":"\##(server.url("/media/r1.jpg?bytes=3000"))","ab_li":"https://cdn.example/li.png","ab_a0_a":"ab_uri","ab_a0_t":"Details","ab_a0_uri":"https://example.com/e","ab_a0_use_webview":"true","ab_a1_a":"ab_none","ab_a1_t":"Close"}"##,
            ##"{"aps":{"alert":{"title":"Quiet","body":"B"},"mutable-content":1,"interruption-level":"passive","sound":"default","category":"ab_cat_yes_no"},"ab":{"att":{"url":"\##(server.url("/media/r2.jpg?bytes=3000"))","type":"jpg"}},"ab_uri":"https://example.com","ab_use_webview":true}"##,
            ##"{"aps":{"alert":{"title-loc-key":"WELCOME","title-loc-args":["Ann"],"loc-key":"BODY_FMT","loc-args":["3","shoes"]},"mutable-content":1,"badge":4},"ab":{"att":{"url":"\##(server.url("/media/r3.jpg?bytes=3000"))","type":"jpg"}}}"##,
            ##"{"aps":{"badge":7,"sound":"ping.caf"},"ab":{"att":{"url":"\##(server.url("/media/r4.jpg?bytes=3000"))","type":"jpg"}}}"##,
            ##"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"\##(server.url("/media/r5.jpg?bytes=2000"))","gcm.n.sound2":"<chime>","gcm.n.visibility":"-1","gcm.n.sticky":"1"}"##,
        ]
        let (_, _, html) = try await Self.runBatch(lines, in: directory, Nginx.loopbackFlags)
        // Each line's notification as the human output prints it, field by field.
        for line in lines {
            let human = try await CommandRunner.run(
                "fetch-attachment", ["--no-cache", "--output-dir", directory + "/human"] + Nginx.loopbackFlags, stdin: Data(line.utf8))
            let fields = human.stdout.unwrapped.split(separator: "\n").filter { $0.hasPrefix("    ") && !$0.hasPrefix("     ") }
                .map { $0.dropFirst(4) }
                .filter { !$0.hasPrefix("attachment:") && !$0.hasPrefix("picture:") }
            #expect(!fields.isEmpty, "\(human.stdout)")
            for field in fields {
                let label = field.prefix { $0 != ":" }
                let text = field.dropFirst(label.count + 2)
                switch label {
                case "title": #expect(html.contains("<b>\(CampaignReportText.escape(String(text)))</b>"), "\(field)")
                case "subtitle", "body": #expect(html.contains("dir=\"auto\">\(CampaignReportText.escape(String(text)))</div>"), "\(field)")
                case "buttons":
                    for button in text.dropFirst().dropLast().components(separatedBy: "] [") {
                        #expect(html.contains("<span class=\"button\"><bdi>\(CampaignReportText.escape(button))</bdi></span>"), "\(button) of \(field)")
                    }
                default: #expect(html.contains("<div class=\"detail\">\(CampaignReportText.escape(String(field)))</div>"), "\(field)")
                }
            }
        }
        try await server.shutdown()
        for expected in [
            "sound: none (default, not played: a passive notification plays no sound)", "sound: the channel&#39;s (promos); default before Android 8",
            "tap opens: https://example.com/sale in a web view", "summary: Deals", "<span class=\"button\"><bdi>Close: only dismisses</bdi></span>",
            "[BODY_FMT] with arguments &quot;3&quot;, &quot;shoes&quot;", "<div class=\"detail\">badge: 7</div>", "<div class=\"detail\">sound: ping.caf</div>",
            "<div class=\"detail\">shows no banner</div>",
        ] {
            #expect(html.contains(expected), "\(expected)")
        }
    }

    @Test("The page opens with the campaign's verdict and what it was, lists a URL a judged platform fails on first with the lines that failed, and sets each text in its own direction, line breaks kept")
    func verdictFirst() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: Fixture.mediaDirectory)
        let photo = server.url("/files/photo.jpg"), webp = server.url("/files/photo.webp"), gone = server.url("/media/gone.png?status=404")
        let logo = server.url("/files/logo.png")
        let lines = [
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(photo)"}}}"#,
            // Android shows WebP, iOS does not: the payload is attached on its own platform.
            #"{"_ab":"true","t":"عرض خاص: خصم 50%!","a":"Line one\nLine two","ab_iu":"\#(webp)"}"#,
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(gone)"}}}"#,
            // No mutable-content: iOS runs no extension for it.
            #"{"aps":{"alert":"B"},"ab":{"att":{"url":"\#(photo)"}}}"#,
            #"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#,
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(logo)"}}}"#,
            // The photo again, with other copy: a template left unrendered.
            #"{"aps":{"alert":{"title":"Hi {{first_name}}","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(photo)"}}}"#,
        ]
        let (_, _, html) = try await Self.runBatch(lines, in: directory, ["--platform", "ios,android"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(html.contains(#"<meta name="viewport""#))
        #expect(html.contains("\(directory)/batch.jsonl, 20") && html.contains("; judged on ios and android</p>"), "\(html)")
        let verdict = try #require(html.components(separatedBy: "<p class=\"verdict\">").dropFirst().first?.components(separatedBy: "</p>").first, "\(html)")
        // The payload without mutable-content named a picture: it failed, and did not ask for none.
        #expect(verdict.hasPrefix("<b>2 of 7 payloads failed</b> (http-status 1, no-attachment 1)"), "\(verdict)")
        #expect(verdict.contains("; 4 attached; no picture asked for: internal-push 1; on android 1 failed, on ios 3 failed."), "\(verdict)")
        // The WebP row, attached on its own platform but refused by iOS, comes before the logo's,
        // which every platform shows, though it was met later.
        let urls = try #require(html.components(separatedBy: "<table id=\"urls\">").last)
        let webpRow = try #require(urls.range(of: webp)), logoRow = try #require(urls.range(of: logo))
        #expect(webpRow.lowerBound < logoRow.lowerBound)
        // The photo's row names the line that failed on it, then every line.
        #expect(urls.contains("<span class=\"bad\">failed:</span> 4<br>all: 1, 4, 7</td>"), "\(urls)")
        // Its sample is the first payload's; the line whose copy differs is named under it.
        #expect(urls.contains("<div class=\"detail\">other texts: lines 7</div>"), "\(urls)")
        #expect(html.contains("title holds &#39;{{first_name}}&#39;, a template placeholder left unrendered"), "\(html)")
        #expect(html.contains("<div class=\"text\" dir=\"auto\"><b>عرض خاص: خصم 50%!</b></div><div class=\"text\" dir=\"auto\">Line one\nLine two</div>"), "\(html)")
    }

    @Test("The report takes outcomes in input order: its rows and each row's sample do not depend on which payload finished first")
    func rowsInInputOrder() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let slow = server.url("/media/first.jpg?bytes=2000&delay_ms=800")
        let lines = [
            #"{"aps":{"alert":{"title":"LINE-1","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(slow)"}}}"#,
            #"{"aps":{"alert":{"title":"LINE-2","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(server.url("/media/second.jpg?bytes=2000"))"}}}"#,
            #"{"aps":{"alert":{"title":"LINE-3","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(slow)"}}}"#,
        ]
        let (result, _, html) = try await Self.runBatch(lines, in: directory, ["--concurrency", "3", "--json"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let first = try #require(html.range(of: "first.jpg")), second = try #require(html.range(of: "second.jpg"))
        #expect(first.lowerBound < second.lowerBound, "the second line finished first, and its row came first")
        // The slow URL's sample is its first line's notification.
        #expect(html.contains("LINE-1") && !html.contains("LINE-3"), "\(html)")
    }

    @Test("A URL's row counts each platform's verdicts over every payload that names it, not the first payload's alone")
    func platformVerdictsPerRow() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let shared = server.url("/media/shared.jpg?bytes=3000000")
        let lines = [
            #"{"_ab":"true","t":"a","a":"x","ab_iu":"\#(shared)"}"#,
            #"{"gcm.n.e":"1","gcm.n.title":"b","gcm.n.body":"x","gcm.n.image":"\#(shared)"}"#,
            #"{"aps":"#, #"{"aps":{"content-available":1},"ab":{}}"#,
        ]
        let (result, _, html) = try await Self.runBatch(lines, in: directory, ["--platform", "ios,android", "--json"] + Nginx.loopbackFlags)
        try await server.shutdown()
        // The summary says what each platform's devices show, beside the outcomes' count.
        #expect(result.stderr.contains("by platform: ios 2 attached, "), "\(result.stderr)")
        #expect(result.stderr.contains("; android 1 attached, "), "\(result.stderr)")
        // Braze's 5 MB Android limit takes the picture; FCM's 1 MiB does not.
        #expect(html.contains(#"android: <span class="ok">attached</span> 1; <span class="bad">too-large</span> 1 (<bdi>the body is larger than the Android picture limit, 1048576 bytes</bdi>)"#), "\(html)")
        #expect(html.contains(#"ios: <span class="ok">attached</span> 2"#), "\(html)")
        // The row of payloads without a URL gives each reason its own detail.
        #expect(html.contains(#"invalid-payload</span> 1<div class="detail">line 3: the payload is not JSON"#), "\(html)")
        #expect(html.contains(#"internal-push</span> 1<div class="detail">"#), "\(html)")
    }

    @Test("The report lists the first 2,000 URLs met, then up to 2,000 more that a payload failed on, failures first, and counts the payloads of the others in one row with their verdicts")
    func urlsBounded() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        func braze(_ url: String) -> String { #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(url)"}}}"# }
        // Line 1 attached; 1,999 URLs of their own, each refused before any request (invalid-url);
        // past the first 2,000 URLs, 3 attached (counted together) and 2 more failures (listed).
        var lines = [braze(server.url("/media/first.jpg?bytes=2000"))]
        lines += (0..<1_999).map { braze("javascript:alert(\($0))") }
        lines += (0..<3).map { braze(server.url("/media/late-\($0).jpg?bytes=2000")) }
        lines += [braze("javascript:late(1)"), braze("javascript:late(2)")]
        let (_, _, html) = try await Self.runBatch(lines, in: directory, ["--concurrency", "1", "--json"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(html.components(separatedBy: "<tr class=\"url-row\">").count - 1 == 2_002)
        #expect(html.contains("javascript:late(1)") && html.contains("javascript:late(2)") && !html.contains("late-0.jpg"))
        // The failures first: line 1's attached URL after the last of them.
        let attached = try #require(html.range(of: "first.jpg")), failed = try #require(html.range(of: "javascript:late(2)"))
        #expect(failed.lowerBound < attached.lowerBound)
        #expect(html.contains(#"<td>(other URLs: the first 2000 met are listed, then up to 2000 more that a payload failed on)</td><td><span class="ok">attached</span> 3</td>"#), "\(html.suffix(2_000))")
        #expect(html.contains("<td>2001, 2002, 2003</td>"))
        #expect(html.contains("<p>2005 payloads"), "\(html.prefix(3_000))")
        // Without --platform each payload counts on its own shape's platform.
        let ios = try #require(html.components(separatedBy: "<h2>On ios</h2>").last?.components(separatedBy: "</table>").first)
        #expect(ios.contains("<td>attached</td><td>4</td>") && ios.contains("<td>invalid-url</td><td>2001</td>"), "\(ios)")

        // Failures past the first 2,000 URLs take 2,000 rows more at most.
        let failures = (0..<4_010).map { braze("javascript:alert(\($0))") }
        let bounded = try await Self.reportOfBatch(failures, in: directory)
        #expect(bounded.components(separatedBy: "<tr class=\"url-row\">").count - 1 == 4_000)
        #expect(bounded.contains(#"<td><span class="bad">invalid-url</span> 10</td>"#), "\(bounded.suffix(2_000))")
        #expect(bounded.contains("<td>4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008, 4009, 4010</td>"))
    }

    @Test("Only a payload's URLs are written <URL> in its warnings: an invalid 'URL' that is a word, or empty, leaves the text alone")
    func invalidURLsLeaveWarningsAlone() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = ["a", "", "ios"].map { url in
            #"{"aps":{"alert":"B","mutable-content":1,"interruption-level":"zz"},"ab":{"att":{"url":"\#(url)"}}}"#
        }
        let html = try await Self.reportOfBatch(lines, in: directory)
        #expect(html.contains("<td>aps.interruption-level is &#39;zz&#39;: iOS knows passive, active, time-sensitive and critical</td><td class=\"num\">3</td>"), "\(html)")
        #expect(!html.contains("&lt;URL&gt;"), "\(html)")
    }

    @Test("The report lists at most 200 distinct warnings, the most common first, and counts the rest in one row")
    func warningsBounded() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 205 payloads, each with a warning of its own, and one warning they all share.
        // The last 6 have two each of their own: counted once among the others.
        let lines = (0..<205).map { index in
            let score = index >= 199 ? #","relevance-score":\#(index)"# : ""
            return #"{"aps":{"alert":"B","interruption-level":"level-\#(index)"\#(score)},"ab":{"c":"1"}}"#
        }
        let html = try await Self.reportOfBatch(lines, in: directory)
        let section = try #require(html.components(separatedBy: "<h2>Warnings</h2>").last?.components(separatedBy: "</table>").first)
        let rows = section.components(separatedBy: "<tr><td>").dropFirst()
        #expect(rows.count == 201, "\(rows.count)")
        #expect(rows.first?.hasPrefix("aps.mutable-content is not 1") == true, "\(rows.first ?? "")")
        #expect(rows.first?.contains("<td class=\"num\">205</td><td>1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 … (205 in all)</td>") == true)
        #expect(rows.last?.hasPrefix("(other warnings)</td><td class=\"num\">6</td>") == true, "\(rows.last ?? "")")
    }

    @Test("Thumbnails are embedded up to 16,000,000 bytes in all: a campaign of large pictures cannot make the page unbounded")
    func thumbnailsBounded() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        var lines = (0..<20).map { index in
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(server.url("/media/p\(index).png?bytes=1000000"))"}}}"#
        }
        // One picture over the largest thumbnail: a note, not a blank cell.
        lines.insert(#"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(server.url("/media/big.png?bytes=2500000"))"}}}"#, at: 0)
        let (result, _, html) = try await Self.runBatch(lines, in: directory, ["--concurrency", "1", "--json"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(html.components(separatedBy: "src=\"data:image/").count - 1 == 16)
        #expect(html.components(separatedBy: "not embedded: the page holds 16000000 bytes of pictures at most").count - 1 == 4)
        #expect(html.components(separatedBy: "not embedded: over 2000000 bytes").count - 1 == 1)
        #expect(html.utf8.count < 24_000_000)
    }

    @Test("Each platform's table counts every payload of a preflight, those that fetched nothing too")
    func platformTotals() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let lines = [
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(server.url("/media/a.jpg?bytes=900"))"}}}"#,
            "not json",
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{}}"#,
            #"{"aps":{"content-available":1},"ab":{"att":{"url":"\#(server.url("/media/b.jpg?bytes=900"))"}}}"#,
            // A URL spelled as that row's label is a URL of its own, not counted in it.
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"(no attachment URL: braze)"}}}"#,
        ]
        let (result, _, html) = try await Self.runBatch(lines, in: directory, ["--json", "--platform", "ios,android"] + Nginx.loopbackFlags)
        try await server.shutdown()
        // Payloads without a URL: a row per vendor, each detail with the line it came from,
        // their label in italics where URLs are not.
        // A silent push is no failure: its verdict is not red.
        #expect(html.contains("<td><i>(no attachment URL: braze)</i></td><td class=\"wide\"><span class=\"quiet\">internal-push</span> 1"), "\(html)")
        #expect(html.contains("<td><i>(no attachment URL)</i></td>"))
        #expect(html.contains("<td><span class=\"url\">(no attachment URL: braze)</span></td><td class=\"wide\"><span class=\"bad\">invalid-url</span> 1"), "\(html)")
        #expect(html.contains("<div class=\"detail\">line 2: "), "\(html)")
        // The histogram's caption has room, however few its bars.
        #expect(html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"420\""))
        // The terminal's summary counts the same payloads as the report's tables.
        #expect(result.stderr.contains("  by platform: ios 1 attached, 4 original; android 1 attached, 4 original\n"), "\(result.stderr)")
        for platform in ["ios", "android"] {
            let section = try #require(html.components(separatedBy: "<h2>On \(platform)</h2>").last?.components(separatedBy: "</table>").first)
            let counts = section.components(separatedBy: "<tr><td>").dropFirst().compactMap { row in
                row.components(separatedBy: "</td><td>").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
            }
            #expect(counts.reduce(0, +) == 5, "\(platform): \(section)")
            #expect(section.contains("<td>invalid-payload</td>"), "\(section)")
        }
    }

    @Test("A URL whose file changed between fetches shows its first file's type and size beside that file's thumbnail, which is embedded only within the limits its own size meets")
    func thumbnailMatchesItsRow() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        // The first fetch gets 3,000,000 bytes, over the 2,000,000 a thumbnail may have; the
        // second (no cache) 2,000.
        let url = server.url("/media/changed.png?bytes=2000&first_bytes=3000000")
        let line = #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(url)"}}}"#
        let (result, _, html) = try await Self.runBatch([line, line], in: directory, ["--concurrency", "1"] + Nginx.loopbackFlags)
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!html.contains("src=\"data:image/png"))
        #expect(html.contains("not embedded: over 2000000 bytes"), "\(html)")
        #expect(html.contains("<td class=\"num\">3000000</td>"), "\(html)")
    }

    @Test(
        "The report embeds an attachment only as the regular file it is: a symbolic link or a FIFO put in its place by whoever can write the output directory is left out, and the batch still ends",
        arguments: ["symlink", "fifo"])
    func thumbnailOnlyOfRegularFiles(replacement: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let secret = Data(String(repeating: "not for the report ", count: 20).utf8)
        try secret.write(to: URL(fileURLWithPath: directory + "/secret"))
        // The first file is placed at once; the second payload keeps the batch going while the
        // first is replaced, before the report reads it.
        let lines = [server.url("/media/first.png?bytes=2000"), server.url("/media/second.png?bytes=2000&delay_ms=2500")].map {
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#($0)"}}}"#
        }
        let batch = directory + "/batch.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: batch))
        let output = directory + "/out", report = directory + "/report.html"
        async let run = CommandRunner.run(
            "fetch-attachment",
            ["--batch", batch, "--no-cache", "--output-dir", output, "--report", report, "--timeout", "20"] + Nginx.loopbackFlags,
            timeout: .seconds(40))
        var first: String?
        for _ in 0..<400 where first == nil {
            first = (try? FileManager.default.contentsOfDirectory(atPath: output))?.first { $0.hasPrefix("first-") }
            if first == nil { try await Task.sleep(for: .milliseconds(25)) }
        }
        let placed = output + "/" + (try #require(first, "the first file was not placed"))
        try FileManager.default.removeItem(atPath: placed)
        if replacement == "symlink" {
            try FileManager.default.createSymbolicLink(atPath: placed, withDestinationPath: directory + "/secret")
        } else {
            #expect(mkfifo(placed, 0o600) == 0)
        }
        let result = try await run
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(!html.contains(String(secret.base64EncodedString().prefix(40))))
        // The second file, placed as it was, is embedded.
        #expect(html.components(separatedBy: "src=\"data:image/png;base64,").count == 2, "\(html)")
    }

    @Test("A headless Chromium renders the report's rows and images", .enabled(if: chromium != nil, "Chromium is not installed"))
    func rendersInABrowser() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, path) = try await Self.makeReport(in: directory)
        let browser = ["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"]
        let dom = try await CommandRunner.run(Self.chromium!, browser + ["--dump-dom", "file://" + path], timeout: .seconds(90))
        #expect(dom.stdout.contains(#"data-images-rendered="4""#), "\(dom.stdout.prefix(300)) \(dom.stderr.suffix(500))")
        #expect(dom.stdout.contains(#"data-rows="8""#))
        // The page's policy lets its own script run (above) and nothing else: a script that got
        // into the page, inline or in an attribute, does not.
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains(#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; "#))
        let injected = directory + "/injected.html"
        try Data(html.replacingOccurrences(
            of: "</body>", with: #"<script>document.body.dataset.injected = 1</script><img src="data:," onerror="document.body.dataset.handler = 1"></body>"#
        ).utf8).write(to: URL(fileURLWithPath: injected))
        let blocked = try await CommandRunner.run(Self.chromium!, browser + ["--dump-dom", "file://" + injected], timeout: .seconds(90))
        #expect(blocked.stdout.contains(#"data-images-rendered=""#), "\(blocked.stdout.prefix(300))")
        #expect(!blocked.stdout.contains("data-injected") && !blocked.stdout.contains("data-handler"), "\(blocked.stdout.prefix(300))")
        let screenshot = directory + "/report.png"
        let shot = try await CommandRunner.run(
            Self.chromium!, browser + ["--screenshot=" + screenshot, "--window-size=1200,1600", "file://" + path], timeout: .seconds(90))
        let size = (try? FileManager.default.attributesOfItem(atPath: screenshot)[.size] as? Int) ?? 0
        #expect(size > 20_000, "\(shot.stderr.suffix(500))")  // a page of text, tables and pictures, not a blank one
        if let keep = ProcessInfo.processInfo.environment["REPORT_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
    }
}

/// Text as the report writes it in HTML: `&`, `<`, `>`, `"` and `'` escaped.
enum CampaignReportText {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }
}
