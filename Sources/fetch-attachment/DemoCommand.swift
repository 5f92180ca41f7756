import ArgumentParser
import AttachmentFetcher
import Foundation
import MockCDN

/// `fetch-attachment demo`: the bundled example payloads against the bundled mock CDN, no
/// internet needed.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the bundled example payloads against a mock CDN started on 127.0.0.1.",
        discussion: """
            Starts the mock CDN in this process on a free loopback port, points the example payloads \
            at it, processes them all at once through one fetcher, and prints each outcome. Exits 0 \
            when every outcome is the one the example expects.
            """
    )

    @Option(name: .customLong("output-dir"), help: "Where attachment files go. Default: a fresh temporary directory.")
    var outputDirectory: String?

    @Option(name: .customLong("timeout"), parsing: .unconditional, help: ArgumentHelp("Seconds each payload may take (default 2; the stalling example waits this long).", valueName: "seconds"))
    var timeoutSeconds: Double?

    /// `--timeout`'s old name, still accepted.
    @Option(name: .customLong("deadline"), parsing: .unconditional, help: .hidden)
    var deadlineSeconds: Double?

    /// Seconds each payload may take: `--timeout`, or `--deadline`, or 2.
    var timeout: Double { timeoutSeconds ?? deadlineSeconds ?? 2 }

    @Flag(help: "Print one JSON object per outcome, with the example's name, instead of a table.")
    var json = false

    func validate() throws {
        try TimeoutOption.validate(timeout: timeoutSeconds, deadline: deadlineSeconds, maximum: 60)
    }

    func run() async throws {
        let server = try await MockCDNServer.start()
        let directory = outputDirectory ?? NSTemporaryDirectory() + "attachment-fetcher-demo-\(UUID().uuidString.prefix(8))"
        var configuration = PushAttachmentFetcher.Configuration(
            outputDirectory: directory, timeout: TimeoutOption.duration(timeout))
        configuration.userAgent = "fetch-attachment-demo"
        configuration.cache = .init(directory: directory + "/.cache")
        // The mock CDN's loopback address, and only it, joins the public addresses: the
        // example that points at another loopback address shows the refusal.
        configuration.addressPolicy.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
        let results: [(ExamplePayload, Outcome)]
        do {
            results = try await withPushAttachmentFetcher(configuration: configuration) { fetcher in
                try await withThrowingTaskGroup { group in
                    for (index, example) in ExamplePayload.all.enumerated() {
                        let bytes = Data(example.payload(cdn: server.baseURL).utf8)
                        group.addTask { (index, await fetcher.process(bytes)) }
                    }
                    var outcomes = [Outcome?](repeating: nil, count: ExamplePayload.all.count)
                    for try await (index, outcome) in group { outcomes[index] = outcome }
                    return zip(ExamplePayload.all, outcomes.compactMap { $0 }).map { ($0, $1) }
                }
            }
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()

        var unexpected = 0
        var cleartextWarnings = 0
        let width = LineWrapping.width(of: .standardOutput)
        for (example, var outcome) in results {
            let got = outcome.reason?.code ?? "attached"
            let matches = got == example.expected
            if !matches { unexpected += 1 }
            if json {
                print(outcome.jsonLine().replacingOccurrences(
                    of: "{", with: "{\"example\":\"\(example.name)\",", options: [.anchored]))
            } else {
                // The mock CDN serves plain http, so each example would carry the same
                // warning: one note below says it instead.
                let count = outcome.warnings.count
                outcome.warnings.removeAll(where: CleartextWarning.isCleartextWarning)
                cleartextWarnings += count - outcome.warnings.count
                let mark = matches ? "ok " : "UNEXPECTED"
                print("\(mark) \(example.name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(got)")
                // Indented under the example's name, within the width.
                let summary = LineWrapping.wrapped(OutcomePrinter.summary(outcome), width: width - 5)
                print(summary.split(separator: "\n").map { "     " + $0 }.joined(separator: "\n"))
            }
        }
        if !json {
            print(LineWrapping.wrapped(
                "\n\(results.count - unexpected) of \(results.count) examples gave the expected outcome; files in \(directory)", width: width))
            if cleartextWarnings > 0 {
                print(LineWrapping.wrapped(
                    "note: the mock CDN serves plain http, so each example's URL has a warning left out above (--json keeps them): on iOS, App Transport Security refuses plain http unless the app allows arbitrary loads or the domain; Android 9 and later refuse it unless the app allows cleartext traffic. A campaign's https URLs have neither.", width: width))
            }
            // The demo's address policy is in force (only the mock CDN's address joins the public ones).
            if results.contains(where: { BatchSummary.hidesNetworkDetail($0.1) }) {
                print(LineWrapping.wrapped(
                    "note: network: while the address policy is in force, a network failure says only '\(FallbackReason.uniformNetworkDetail)', so that it does not describe the port (fetch-attachment --allow-private-networks shows libcurl's reason)", width: width))
            }
        }
        throw ExitCode(unexpected == 0 ? 0 : 1)
    }
}

/// An example payload with `{{CDN}}` where the mock CDN's base URL goes, and the outcome it
/// should get ("attached" or a reason code).
struct ExamplePayload: Sendable {
    var name: String
    var template: String
    var expected: String

    func payload(cdn: String) -> String { template.replacingOccurrences(of: "{{CDN}}", with: cdn) }

    /// The vendors' own example shapes, as their documentation gives them, iOS and Android, pointed at
    /// the mock CDN, plus one example per failure the fetcher reports.
    static let all: [ExamplePayload] = [
        .init(
            name: "braze-jpeg",
            template: #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/img.jpg?bytes=150000","type":"jpg"}},"c":null}"#,
            expected: "attached"),
        .init(
            name: "moengage-png",
            template: #"{"aps":{"mutable-content":1,"alert":{"title":"Message","body":"msg"}},"moengage":{"media-type":"image","media-attachment":"{{CDN}}/media/rocks.png?bytes=80000","cid":"0000_L_0"},"app_extra":{}}"#,
            expected: "attached"),
        .init(
            name: "braze-mp4-video",
            template: #"{"aps":{"alert":"video","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/clip.mp4?bytes=3000000","type":"mp4"}}}"#,
            expected: "attached"),
        .init(
            name: "moengage-mp3-audio",
            template: #"{"aps":{"alert":"listen","mutable-content":1},"moengage":{"media-type":"audio","media-attachment":"{{CDN}}/media/jingle.mp3?bytes=400000"}}"#,
            expected: "attached"),
        .init(
            name: "braze-says-jpg-is-gif",
            template: #"{"aps":{"alert":"gif","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/anim.gif?bytes=50000","type":"jpg"}}}"#,
            expected: "attached"),
        .init(
            name: "braze-redirect-chain",
            template: #"{"aps":{"alert":"moved","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/moved.jpg?bytes=20000&redirects=3"}}}"#,
            expected: "attached"),
        .init(
            name: "braze-uninstall-tracking",
            template: #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true}"#,
            expected: "internal-push"),
        .init(
            name: "moengage-silent-push",
            template: #"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#,
            expected: "internal-push"),
        .init(
            name: "airship-two-attachments",
            template: #"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"urls":[{"url":"{{CDN}}/media/1.jpg?bytes=60000","url_id":"a"},{"url":"{{CDN}}/media/2.gif?bytes=30000","url_id":"b"}],"thumbnail_id":"a"}}"#,
            expected: "attached"),
        .init(
            name: "onesignal-filename-hint",
            template: #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"att":{"id1":"{{CDN}}/media/c528c899_720_960.png?bytes=80000&filename=f.png"}}"#,
            expected: "attached"),
        .init(
            name: "firebase-image",
            template: #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"fcm_options":{"image":"{{CDN}}/media/img.png?bytes=40000"}}"#,
            expected: "attached"),
        .init(
            name: "braze-android-picture",
            template: #"{"_ab":"true","t":"Sale","a":"50% off","s":"Deals","cid":"camp-1","uri":"myapp://sale","sd":"d","ab_bc":"3","ab_iu":"{{CDN}}/media/sale.png?bytes=60000","extra":"{\"promo_id\":\"42\"}","ab_a0_a":"ab_uri","ab_a0_t":"Details","ab_a0_uri":"https://example.com/e","ab_a0_id":"details","ab_a1_a":"ab_none","ab_a1_t":"Close"}"#,
            expected: "attached"),
        .init(
            name: "firebase-http-v1-android",
            template: #"{"message":{"token":"device-token","notification":{"title":"Your order","body":"is on its way","image":"{{CDN}}/media/parcel.jpg?bytes=50000"},"android":{"notification":{"channel_id":"orders","notification_count":2}},"data":{"order":"7"}}}"#,
            expected: "attached"),
        .init(
            name: "clevertap-android",
            template: #"{"wzrk_pn":"true","nt":"New in","nm":"Spring collection","wzrk_st":"Shop","wzrk_bp":"{{CDN}}/media/spring.jpg?bytes=40000","wzrk_dl":"myapp://spring","wzrk_sound":"true","wzrk_id":"1700000000_20260101","wzrk_acts":"[{\"l\":\"Open\",\"dl\":\"myapp://spring\",\"id\":\"open\"},{\"l\":\"Later\",\"id\":\"later\"}]"}"#,
            expected: "attached"),
        .init(
            name: "braze-android-silent",
            template: #"{"_ab":"true","extra":"{\"sync\":\"1\"}","ab_iu":"{{CDN}}/media/never.jpg?bytes=1000"}"#,
            expected: "internal-push"),
        .init(
            name: "unknown-vendor",
            template: #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"image_url":"{{CDN}}/media/img.jpg"}"#,
            expected: "no-attachment"),
        .init(
            name: "not-json",
            template: #"{"aps":"#,
            expected: "invalid-payload"),
        .init(
            name: "braze-file-url",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"file:///etc/passwd"}}}"#,
            expected: "invalid-url"),
        .init(
            name: "braze-404",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/gone.jpg?status=404"}}}"#,
            expected: "http-status"),
        .init(
            name: "braze-connection-reset",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/cut.jpg?bytes=200000&reset_after=10000"}}}"#,
            expected: "network"),
        .init(
            name: "braze-stall-past-deadline",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/slow.jpg?bytes=200000&stall_after=10000"}}}"#,
            expected: "deadline"),
        .init(
            name: "braze-12MB-image",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/huge.jpg?bytes=12000000"}}}"#,
            expected: "too-large"),
        .init(
            name: "braze-internal-address",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"http://[::1]:9/latest/meta-data/x.jpg"}}}"#,
            expected: "address-refused"),
        .init(
            name: "braze-html-as-jpeg",
            template: #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"{{CDN}}/media/page.html?content_type=image/jpeg","type":"jpg"}}}"#,
            expected: "unsupported-type"),
    ]
}
