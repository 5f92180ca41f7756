/// A redirect a transfer followed: its status and its caching header lines (`Cache-Control`,
/// `Expires`, `Age`), unparsed.
struct RedirectResponse: Sendable, Hashable {
    /// Whether a response of this status, followed by another response, was a redirect that
    /// libcurl followed (`CURLOPT_FOLLOWLOCATION`): a 3xx but 304.
    static func isRedirect(_ status: Int) -> Bool { (300...399).contains(status) && status != 304 }

    var status: Int
    var headerBlock: String
}
