import Foundation

/// What became of one requested attachment.
struct AttachmentResult: Sendable {
    var request: RequestedAttachment
    /// The URL in its normalised form, when it could be read.
    var url: AttachmentURL?
    var result: Result<DownloadedFile, TransferFailure>

    /// The URL as outcomes report it: normalised when it could be read, credentials redacted.
    var reportedURL: String { url?.reported ?? URLCredentials.redacted(request.url) }
    /// The payload's own spelling, credentials redacted, when it differs from `reported` (this
    /// result's `reportedURL`).
    func reportedPayloadURL(besides reported: String) -> String? {
        let spelling = url?.reportedPayloadSpelling ?? URLCredentials.redacted(request.url)
        return spelling == reported ? nil : spelling
    }
}

/// An outcome being put together for one payload.
struct OutcomeDraft {
    let payload: Data
    let startedAt: ContinuousClock.Instant
    var vendor: Vendor?
    var notification: NotificationContent?
    var otherPlatformNotifications: [NotificationContent] = []
    var warnings: [String] = []
    /// Each asked-for platform's verdict, when a preflight asks for them.
    var verdicts: [PlatformVerdict] = []
    /// The attachments that did not become files.
    var failures: [AttachmentFailure] = []
    /// How many distinct attachment URLs the per-payload limit left unfetched.
    var attachmentsPastLimit = 0

    init(payload: Data, startedAt: ContinuousClock.Instant) {
        self.payload = payload
        self.startedAt = startedAt
    }

    /// What the push shows on `platform`, when known (see `Outcome.notification(on:)`).
    func notification(on platform: Platform) -> NotificationContent? {
        Outcome.notification(on: platform, own: notification, others: otherPlatformNotifications)
    }

    /// The original content, for `reason`. A push whose extension attaches all of its media or
    /// none (Airship's on iOS) shows its texts as they were before the extension's changes when
    /// a download failed or time ran out (not when it named no media: its changes then stand).
    func original(_ reason: FallbackReason, _ detail: String) -> Outcome {
        let unchanged: Set<FallbackReason> = [.noAttachment, .internalPush, .invalidPayload]
        let notification = unchanged.contains(reason) ? notification : notification.map(\.withoutExtensionChanges)
        return Outcome(
            status: .original, reason: reason, detail: detail, vendor: vendor, attachments: [], warnings: warnings,
            elapsed: startedAt.duration(to: .now), payload: payload, notification: notification,
            otherPlatformNotifications: otherPlatformNotifications, failures: failures, verdicts: verdicts)
    }

    /// Attached when at least one attachment is ready (the failures of others become warnings);
    /// otherwise the original, with the first failure's reason.
    ///
    /// Each platform of `judges` judges each downloaded file meant for it (every file, unless the
    /// payload names one per platform); a file no platform accepts is removed and counts as a
    /// failure (the payload's own platform's refusal, else the first platform's). A platform
    /// that shows nothing of this push (an FCM HTTP v1 message without texts for iPhones)
    /// judges no file. An iPhone that runs no
    /// service extension for the push shows none (its files are still judged). The outcome is
    /// the payload's own platform's verdict when that platform judges and shows the push, else
    /// attached when one of the judging platforms shows a file; when it is not, each file is a
    /// failure, for the decisive platform's reason (the own, else the first), and a file another
    /// platform shows stays, named by that platform's verdict. With
    /// `reportingVerdicts`, the outcome lists each platform's own verdict, with the first file it
    /// shows.
    func finish(with results: [AttachmentResult], judgedBy judges: [PlatformRules], reportingVerdicts: Bool) -> Outcome {
        var draft = self
        var attachments: [Attachment] = []
        /// The results `attachments` came from, in the same order.
        var attached: [AttachmentResult] = []
        var failures: [(AttachmentResult, TransferFailure)] = []
        var shownBy: [Platform: (path: String, url: String)] = [:]
        var refusals: [Platform: TransferFailure] = [:]
        let silent = Set(judges.map(\.platform).filter { notification(on: $0)?.visible == false })
        for attachment in results {
            let judges = judges.filter { attachment.request.isJudged(on: $0.platform) && !silent.contains($0.platform) }
            let reported = attachment.reportedURL
            if let url = attachment.url, url.string.hasPrefix("http:") {
                for judge in judges {
                    switch judge.platform {
                    case .ios:
                        draft.warnings.append(CleartextWarning.ios(reported))
                    case .android:
                        draft.warnings.append(CleartextWarning.android(reported))
                    case .linux:
                        break
                    }
                }
            }
            if let url = attachment.url, url.needsEncodingBeforeIOS17, judges.contains(where: { $0.platform == .ios }) {
                draft.warnings.append(
                    "\(url.reportedPayloadSpelling) holds characters a URL may not (a space, non-ASCII…): apps linked before iOS 17 read no URL there and show no attachment; iOS 17 and later encode them as \(reported)")
            }
            switch attachment.result {
            case .success(let file):
                var accepting: [Platform] = []
                // This file's refusal: the payload's own platform's, else the first platform's.
                var firstRefusal: TransferFailure?
                func refuse(_ refusal: TransferFailure, on platform: Platform) {
                    if firstRefusal == nil || platform == notification?.platform { firstRefusal = refusal }
                    if refusals[platform] == nil { refusals[platform] = refusal }
                }
                let scheme = RedirectSchemes.scheme(of: attachment.url?.string ?? "")
                let changedScheme = file.redirectSchemes.contains(scheme.other)
                if changedScheme, scheme == .https, judges.contains(where: { $0.platform == .ios }) {
                    draft.warnings.append(
                        "\(reported) redirects to plain http: App Transport Security refuses that hop unless the app allows arbitrary loads or its domain")
                }
                // URLSession sends a cookie a redirect set with the next hop; Android's
                // HttpURLConnection, without a CookieHandler, keeps none.
                if file.redirectSetCookie, judges.contains(where: { $0.platform == .android }) {
                    draft.warnings.append(
                        "\(reported): a redirect on the way set a cookie, which the next request sent back (as an iPhone does); Android's HttpURLConnection keeps no cookies, so if the server needs it, Android shows no picture")
                }
                // The vendor's iOS extension names the file, and iOS takes its type from that name.
                let unnamed = judges.contains { $0.platform == .ios }
                    ? PlatformRules.iOSNamingRefusal(by: draft.vendor, of: file, for: attachment) : nil
                for judge in judges {
                    if let unnamed, judge.platform == .ios {
                        refuse(unnamed, on: .ios)
                        continue
                    }
                    if changedScheme, let refusal = PlatformRules.schemeChangeRefusal(on: judge.platform, from: scheme) {
                        refuse(refusal, on: judge.platform)
                        continue
                    }
                    switch judge.judge(file.media, bytes: file.byteCount, downloadTime: file.downloadTime, url: reported) {
                    case .success(let warnings):
                        accepting.append(judge.platform)
                        draft.warnings.append(contentsOf: warnings)
                    case .failure(let refusal):
                        refuse(refusal, on: judge.platform)
                    }
                }
                if let firstRefusal, accepting.isEmpty {
                    TemporaryFiles.remove(file.path)
                    failures.append((attachment, firstRefusal))
                    continue
                }
                for platform in accepting where shownBy[platform] == nil { shownBy[platform] = (file.path, reported) }
                attached.append(attachment)
                attachments.append(
                    Attachment(
                        url: reported, payloadURL: attachment.reportedPayloadURL(besides: reported),
                        path: file.path, mime: file.media.mime, bytes: file.byteCount))
                if let warning = Self.typeHintWarning(attachment.request.claimedType, file.media) {
                    draft.warnings.append(warning)
                }
                if file.cutAtOrigin, let mark = BodyCompleteness.Format(file.media)?.endMark {
                    draft.warnings.append(
                        "\(reported): the file on the origin is cut short: it ends before \(mark.name), though the response's framing says it is whole, so phones draw only the part that is there")
                }
            case .failure(let failure):
                // Each platform's verdict in its own terms (a body over the image limit is over
                // FCM's 1 MiB; audio is no picture on Android); the failure listed is the
                // payload's own platform's.
                let own = judges.first { $0.platform == notification?.platform } ?? judges.first
                failures.append((attachment, own.map(failure.judged) ?? failure))
                // Several vendors' iOS extensions attach an error response's body all the same.
                if let response = failure.errorResponse, judges.contains(where: { $0.platform == .ios }),
                    notification(on: .ios)?.serviceExtension != false,
                    let warning = VendorFileNaming.errorResponseWarning(vendor: draft.vendor, response: response, url: reported)
                {
                    draft.warnings.append(warning)
                }
                for judge in judges where refusals[judge.platform] == nil { refusals[judge.platform] = failure.judged(by: judge) }
            }
        }
        // Airship's iOS extension attaches all of a push's media or none: it downloads them in
        // one throwing task group and makes every attachment before it sets a text, so one that
        // fails and the original shows, without the `content` override (`original`).
        // It decides for iPhones alone: another platform a preflight judges keeps its verdict.
        // Media past the per-payload limit were not fetched, so whether all would arrive is not
        // known: iPhones are not said to show any (`too-large`, the limit being the fetcher's).
        var outcomeDetail: String?
        if notification?.allOrNothing != nil, attachmentsPastLimit > 0, shownBy[.ios] != nil {
            let named = results.count + attachmentsPastLimit
            refusals[.ios] = TransferFailure(
                reason: .tooLarge,
                detail: "the push names \(named) attachments, more than the \(results.count) fetched per payload (maximumAttachmentsPerPayload, --max-attachments), so whether iOS shows them is not judged")
        }
        if notification?.allOrNothing != nil, shownBy[.ios] != nil, let refusal = refusals[.ios] {
            let failedURL = failures.first { $0.0.request.isJudged(on: .ios) }?.0.reportedURL
            let detail = (failedURL.map { "\($0): " } ?? "") + "\(refusal.detail); Airship's extension attaches all of a push's media or none"
            shownBy[.ios] = nil
            refusals[.ios] = TransferFailure(reason: refusal.reason, detail: detail)
            if shownBy.isEmpty {
                outcomeDetail = detail
                for (result, attachment) in zip(attached, attachments) {
                    TemporaryFiles.remove(attachment.path)
                    failures.append((result, TransferFailure(reason: refusal.reason, detail: detail)))
                }
                attachments = []
            }
        }
        let verdicts = judges.map { judge in
            if silent.contains(judge.platform) {
                return PlatformVerdict(
                    platform: judge.platform, status: .original, reason: .internalPush,
                    detail: "the push \(notification(on: judge.platform)?.invisibleEffect ?? "shows nothing") on \(judge.platform.rawValue)")
            }
            // A Linux client shows its files itself: no service extension decides.
            if judge.platform != .linux, notification(on: judge.platform)?.serviceExtension == false {
                // What it would show with one, or why it would show nothing even then.
                let would = shownBy[judge.platform].map { " (with one, it would show \($0.url))" }
                    ?? refusals[judge.platform].map { " (nor would it with one: \($0.reason): \($0.detail))" } ?? ""
                return PlatformVerdict(
                    platform: judge.platform, status: .original, reason: .noAttachment,
                    detail: "aps.mutable-content is not 1: iOS runs no service extension for this push, so it shows no attachment\(would)")
            }
            if let path = shownBy[judge.platform]?.path {
                return PlatformVerdict(platform: judge.platform, status: .attached, reason: nil, detail: nil, path: path)
            }
            let refusal = refusals[judge.platform]
                ?? TransferFailure(reason: .noAttachment, detail: "the payload names no attachment for \(judge.platform.rawValue)")
            return PlatformVerdict(platform: judge.platform, status: .original, reason: refusal.reason, detail: refusal.detail)
        }
        if reportingVerdicts { draft.verdicts = verdicts }
        draft.failures = failures.map { attachment, failure in
            let reported = attachment.reportedURL
            return AttachmentFailure(
                url: reported, payloadURL: attachment.reportedPayloadURL(besides: reported),
                reason: failure.reason, detail: failure.detail)
        }
        // The payload goes to its own platform's users: when that platform is judged and shows
        // the push, its verdict is the outcome (an iPhone without the service extension shows no
        // file), whatever another platform a preflight asks about would show of the same file.
        // Otherwise (a preflight of other platforms alone, or a push its own platform shows
        // nothing of) the outcome is attached when a judging platform shows a file. When it is
        // not, the files go, as files every platform refuses do, each a failure, for the
        // decisive verdict's reason (the own platform's, else the first platform's), whatever
        // order a preflight lists the platforms in; a file another platform shows stays, named
        // by that platform's verdict, for the preflight to look at.
        let own = verdicts.first { $0.platform == notification?.platform && !silent.contains($0.platform) }
        let shown = own.map { $0.status == .attached } ?? verdicts.contains { $0.status == .attached }
        if !attachments.isEmpty, !shown, let decisive = own ?? verdicts.first(where: { $0.platform == notification?.platform }) ?? verdicts.first,
            let reason = decisive.reason
        {
            let named = Set(verdicts.compactMap(\.path))
            for attachment in attachments {
                let stays = named.contains(attachment.path)
                if !stays { TemporaryFiles.remove(attachment.path) }
                draft.failures.append(
                    AttachmentFailure(
                        url: attachment.url, payloadURL: attachment.payloadURL, reason: reason, detail: decisive.detail ?? "",
                        file: stays ? attachment : nil))
            }
            return draft.original(reason, decisive.detail ?? "")
        }
        guard !attachments.isEmpty else {
            // An iPhone without the service extension shows no attachment, whatever the
            // download did: that is the reason, as its verdict says (naming the failure too).
            if let own = verdicts.first(where: { $0.platform == notification?.platform }), own.reason == .noAttachment,
                notification?.serviceExtension == false
            {
                return draft.original(.noAttachment, own.detail ?? "")
            }
            let (attachment, failure) = failures[0]
            let detail = outcomeDetail ?? (results.count > 1 ? "\(attachment.reportedURL): \(failure.detail)" : failure.detail)
            return draft.original(failure.reason, detail)
        }
        for (attachment, failure) in failures {
            draft.warnings.append("\(attachment.reportedURL) not attached: \(failure.reason): \(failure.detail)")
        }
        return Outcome(
            status: .attached, reason: nil, detail: nil, vendor: vendor, attachments: attachments,
            warnings: draft.warnings, elapsed: startedAt.duration(to: .now), payload: payload, notification: notification,
            otherPlatformNotifications: otherPlatformNotifications, failures: draft.failures, verdicts: draft.verdicts)
    }


    private static func typeHintWarning(_ claimed: ClaimedType?, _ media: MediaType) -> String? {
        switch claimed {
        case .fileExtension(let suffix) where AttachmentTypes.canonicalExtension(suffix) != media.fileExtension:
            return "the payload says type '\(suffix)' but the bytes are \(media.mime): saved as .\(media.fileExtension)"
        case .kind(let kind) where Self.kindName(kind) != media.kind.rawValue:
            return "the payload says media type '\(kind)' but the bytes are \(media.mime) (\(media.kind.rawValue))"
        default:
            return nil
        }
    }

    /// MoEngage and CleverTap also say "gif" for an animated image.
    private static func kindName(_ claimed: String) -> String {
        let lowered = claimed.lowercased()
        return lowered == "gif" ? "image" : lowered
    }
}

/// The warnings for a URL a platform refuses because it is plain http, given once per URL and
/// platform judged.
package enum CleartextWarning {
    private static let iOSSuffix = " is plain http: App Transport Security refuses it unless the app allows arbitrary loads or this domain"
    private static let androidSuffix = " is plain http: Android 9 (API 28) and later refuse it unless the app allows cleartext traffic"

    /// iOS's warning for `url`.
    static func ios(_ url: String) -> String { url + iOSSuffix }

    /// Android's warning for `url`.
    static func android(_ url: String) -> String { url + androidSuffix }

    /// Whether `warning` is one of these, for any URL.
    package static func isCleartextWarning(_ warning: String) -> Bool {
        warning.hasSuffix(iOSSuffix) || warning.hasSuffix(androidSuffix)
    }
}
