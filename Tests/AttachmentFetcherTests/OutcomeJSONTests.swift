import AttachmentFetcher
import Foundation
import Testing

@Suite("Outcome JSON: the direct writer and JSONEncoder agree", .timeLimit(.minutes(2)))
struct OutcomeJSONTests {
    private static let awkward = "q\"uote \\ back/slash \n\r\t \u{01}\u{1F} café 🚀 \u{7F}"

    static let outcomes: [Outcome] = [
        Outcome(
            status: .attached, reason: nil, detail: nil, vendor: .braze,
            attachments: [
                LibraryAttachment(url: "http://127.0.0.1:1/a.jpg?x=1&y=\"2\"", path: "/tmp/a \(awkward).jpg", mime: "image/jpeg", bytes: 12_345),
                LibraryAttachment(url: "https://cdn.example/b.gif", path: "/tmp/b.gif", mime: "image/gif", bytes: 0),
            ],
            warnings: [awkward, "plain"], elapsed: .milliseconds(12) + .microseconds(345), payload: Data()),
        Outcome(
            status: .original, reason: .network, detail: awkward, vendor: nil, attachments: [], warnings: [],
            elapsed: .seconds(2), payload: Data("{}".utf8)),
        // Normalised URLs with the payload's spelling, failed attachments, each platform's verdict.
        Outcome(
            status: .attached, reason: nil, detail: nil, vendor: .oneSignal,
            attachments: [
                LibraryAttachment(
                    url: "http://cdn.example/a%20b.webp", payloadURL: "http://cdn.example/a b.webp", path: "/tmp/a.webp",
                    mime: "image/webp", bytes: 7)
            ],
            warnings: [], elapsed: .milliseconds(3), payload: Data(),
            failures: [
                AttachmentFailure(url: "http://cdn.example/x%7C.png", payloadURL: "http://cdn.example/x|.png", reason: .httpStatus, detail: awkward),
                AttachmentFailure(url: "http://cdn.example/y.png", reason: .tooLarge, detail: "plain"),
            ],
            verdicts: [
                PlatformVerdict(platform: .ios, status: .original, reason: .unsupportedType, detail: awkward),
                PlatformVerdict(platform: .android, status: .attached, reason: nil, detail: nil),
            ]),
        // A preflight whose own platform refuses the file another platform shows: it stays.
        Outcome(
            status: .original, reason: .unsupportedType, detail: "webp", vendor: .braze, attachments: [], warnings: [],
            elapsed: .milliseconds(2), payload: Data(),
            failures: [
                AttachmentFailure(
                    url: "http://cdn.example/a%20b.webp", payloadURL: "http://cdn.example/a b.webp", reason: .unsupportedType, detail: "webp",
                    file: LibraryAttachment(
                        url: "http://cdn.example/a%20b.webp", payloadURL: "http://cdn.example/a b.webp", path: "/tmp/\(awkward).webp",
                        mime: "image/webp", bytes: 7))
            ],
            verdicts: [
                PlatformVerdict(platform: .ios, status: .original, reason: .unsupportedType, detail: "webp"),
                PlatformVerdict(platform: .android, status: .attached, reason: nil, detail: nil, path: "/tmp/\(awkward).webp"),
            ]),
        // An FCM HTTP v1 message judged on both platforms: Android's notification and the iPhone's.
        Outcome(
            status: .original, reason: .noAttachment, detail: "plain", vendor: .firebase, attachments: [], warnings: [],
            elapsed: .milliseconds(1), payload: Data(), notification: Self.notification(.android, title: "Sale"),
            otherPlatformNotifications: [Self.notification(.ios, title: awkward)]),
    ]

    private static func notification(_ platform: Platform, title: String) -> NotificationContent {
        var content = NotificationContent(platform: platform, visible: true)
        content.title = title
        content.badge = .set(3)
        content.extras = ["deep": .string("x")]
        content.buttons = [
            NotificationContent.Button(id: "a", title: "A", url: "https://example.com/a", webview: true),
            NotificationContent.Button(id: "b", tap: .dismisses), NotificationContent.Button(id: "c", title: awkward),
        ]
        if platform == .android {
            content.accentColor = "#80FF0000"
            content.smallIcon = title
            content.lockScreenVisibility = .private
            content.publicVersion = NotificationContent.PublicVersion(title: "Locked \"T\"", summary: "S")
            content.staysAfterTap = true
            content.ongoing = true
            content.dismissAfterSeconds = 1.5
        }
        return content
    }

    @Test("Same object, with and without index", arguments: outcomes, [nil, 0, 41])
    func agree(outcome: Outcome, index: Int?) throws {
        let direct = try #require(JSONSerialization.jsonObject(with: Data(outcome.jsonLine(index: index).utf8)) as? NSDictionary)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let encoded = try #require(JSONSerialization.jsonObject(with: encoder.encode(outcome)) as? [String: Any])
        var expected = encoded
        if let index { expected["index"] = index }
        #expect(direct == expected as NSDictionary)
        #expect(!outcome.jsonLine(index: index).contains("\n"))
    }

    @Test("elapsed_ms is the whole microseconds in milliseconds, written short: 1903.43, never 1903.4299999999998")
    func elapsedMillisecondsWrittenShort() {
        for (elapsed, written) in [
            (Duration.seconds(1) + .microseconds(903_430), "1903.43"), (.seconds(1) + .microseconds(509_822), "1509.822"),
            (.seconds(3) + .microseconds(903_162) + .nanoseconds(999), "3903.162"), (.microseconds(3_200), "3.2"), (.zero, "0.0"),
        ] {
            let outcome = Outcome(status: .original, reason: .deadline, detail: nil, vendor: nil, attachments: [], warnings: [], elapsed: elapsed, payload: Data())
            #expect(outcome.jsonLine().contains(#""elapsed_ms":\#(written),"#), "\(outcome.jsonLine())")
        }
    }
}
