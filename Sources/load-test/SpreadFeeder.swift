import Foundation

/// Hands payload lines to `fetch-attachment --batch FIFO` spread evenly over a window, from a
/// thread of its own (opening and writing a FIFO blocks).
enum SpreadFeeder {
    /// Makes the FIFO in `directory`, starts writing `lines` into it over `window` seconds once a
    /// reader opens it, and returns its path.
    static func start(_ lines: [String], over window: Double, in directory: String) throws -> String {
        let path = directory + "/batch.fifo"
        guard mkfifo(path, 0o600) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot make the FIFO \(path): \(String(cString: strerror(errno)))"])
        }
        let thread = Thread {
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            defer { try? handle.close() }
            let started = Date()
            let step = lines.isEmpty ? 0 : window / Double(lines.count)
            for (index, line) in lines.enumerated() {
                let due = started.addingTimeInterval(Double(index) * step)
                let wait = due.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                do { try handle.write(contentsOf: Data((line + "\n").utf8)) } catch { return }
            }
        }
        thread.start()
        return path
    }
}
