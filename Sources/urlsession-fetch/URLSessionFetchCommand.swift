import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `urlsession-fetch`: the URLSession baseline of the load test.
///
/// Downloads every URL of a file (one per line) with Foundation's `URLSession`, at most
/// `--concurrency` at once (a task group used as a sliding window, and the same number as the
/// session's `httpMaximumConnectionsPerHost`), and moves each body to `DIR/<index>.jpg`, where
/// `<index>` is the URL's 0-based line number among the non-empty lines. This is the code a Swift
/// developer on Linux would write first; the load test measures it as a child process, exactly
/// like `fetch-attachment --batch` and `curl --parallel`.
///
/// Exit status: 0 when every URL was saved, 1 otherwise, 64 for a bad command line.
@main
struct URLSessionFetchCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "urlsession-fetch",
        abstract: "Download every URL of a file with URLSession, N at a time (the load test's baseline).",
        discussion: """
            Writes the body of the URL on (non-empty) line i to DIR/i.jpg. A response other than \
            2xx counts as a failure and writes nothing. Prints one summary line to standard error. \
            Exit status: 0 when all URLs were saved, 1 otherwise.
            """
    )

    /// Downloads in flight at once, and connections per host.
    @Option(help: "Downloads in flight at once (also httpMaximumConnectionsPerHost).")
    var concurrency: Int = 48

    /// Where the bodies go (created if missing).
    @Option(name: .customLong("output-dir"), help: "Where DIR/<index>.jpg files go (created if missing).")
    var outputDirectory: String

    /// Seconds a request may stay idle before it fails (URLSession's `timeoutIntervalForRequest`).
    @Option(help: "Seconds a request may go without receiving data before it fails.")
    var timeout: Double = 60

    /// The file listing the URLs, one per line ('-' for standard input).
    @Argument(help: "A file with one URL per line, or '-' for standard input.")
    var urlFile: String

    /// Checks the numbers before anything starts.
    func validate() throws {
        guard (1...10_000).contains(concurrency) else {
            throw ValidationError("--concurrency must be between 1 and 10000")
        }
        guard timeout.isFinite, timeout > 0, timeout <= 3_600 else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most 3600")
        }
        guard !outputDirectory.isEmpty else { throw ValidationError("--output-dir must not be empty") }
    }

    /// Reads the list, downloads everything and reports.
    func run() async throws {
        let urls = try readURLs()
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let directory = URL(fileURLWithPath: outputDirectory, isDirectory: true)

        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        let clock = ContinuousClock()
        let started = clock.now
        var ok = 0
        var failures: [String] = []
        await withTaskGroup(of: DownloadResult.self) { group in
            var next = 0
            var inFlight = 0
            // The sliding window: start up to `concurrency`, then one more as each one ends.
            while next < urls.count || inFlight > 0 {
                while inFlight < concurrency, next < urls.count {
                    let index = next
                    let url = urls[index]
                    let destination = directory.appendingPathComponent("\(index).jpg")
                    group.addTask { await Self.download(url, to: destination, with: session, index: index) }
                    next += 1
                    inFlight += 1
                }
                guard let result = await group.next() else { break }
                inFlight -= 1
                switch result {
                case .saved: ok += 1
                case .failed(let message): failures.append(message)
                }
            }
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var summary = "urlsession-fetch: \(ok) ok, \(failures.count) failed of \(urls.count)"
        summary += String(format: " in %.3f s (concurrency %d)", seconds, concurrency)
        if let first = failures.first { summary += "; first failure: \(first)" }
        FileHandle.standardError.write(Data((summary + "\n").utf8))
        throw ExitCode(failures.isEmpty ? 0 : 1)
    }

    /// The outcome of one download.
    enum DownloadResult: Sendable {
        case saved
        case failed(String)
    }

    /// Downloads `url` to a temporary file and moves it to `destination`.
    static func download(_ url: URL, to destination: URL, with session: URLSession, index: Int) async -> DownloadResult {
        do {
            let (temporary, response) = try await session.download(from: url)
            defer { try? FileManager.default.removeItem(at: temporary) }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                return .failed("#\(index) \(url.absoluteString): HTTP status \(status)")
            }
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: temporary, to: destination)
            return .saved
        } catch {
            return .failed("#\(index) \(url.absoluteString): \(error.localizedDescription)")
        }
    }

    /// The non-empty lines of the URL file, each an absolute URL.
    func readURLs() throws -> [URL] {
        let data: Data
        do {
            data = urlFile == "-"
                ? FileHandle.standardInput.readDataToEndOfFile()
                : try Data(contentsOf: URL(fileURLWithPath: urlFile))
        } catch {
            throw ValidationError("cannot read '\(urlFile)': \(error.localizedDescription)")
        }
        var urls: [URL] = []
        for (number, line) in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let url = URL(string: text), url.scheme != nil else {
                throw ValidationError("line \(number + 1) is not a URL: \(text)")
            }
            urls.append(url)
        }
        return urls
    }
}
