import AttachmentFetcher
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One child process to run and measure: its command line, where its output goes, and how long it may take.
struct ChildCommand: Sendable {
    /// The executable's absolute path.
    var executable: String
    /// The arguments (without the program name).
    var arguments: [String]
    /// The file that receives the child's standard output.
    var stdoutPath: String
    /// The file that receives the child's standard error.
    var stderrPath: String
    /// The child (with its whole process group) is killed with SIGKILL when it runs longer.
    var timeout: Duration

    /// The command line as a shell would show it (for reports only).
    var displayString: String {
        ([executable] + arguments).map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }
}

/// What was measured for one child process.
struct ChildMeasurement: Codable, Sendable {
    /// The exit code, or 128 + the signal number when the child was killed by a signal.
    var exitStatus: Int32
    /// True when the child was killed for running past its timeout.
    var timedOut: Bool
    /// Wall time from just before `posix_spawn` to the moment the child's exit was seen (ContinuousClock).
    var wallSeconds: Double
    /// User CPU time of the child (from `wait4`).
    var userSeconds: Double
    /// System CPU time of the child (from `wait4`).
    var systemSeconds: Double
    /// User + system CPU time.
    var cpuSeconds: Double
    /// Peak resident set size of the child, in bytes.
    var peakRSSBytes: Int
    /// Where the peak RSS comes from: `gnu-time` (the measuring wrapper's `wait4` of its own fork, exact) or
    /// `wait4` (may include load-test's own peak, see ``ChildRunner``).
    var rssSource: String
}

/// An error starting a child.
struct SpawnError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String
}

/// Runs child processes one at a time and measures each alone.
///
/// Every child is started with `posix_spawn` in a process group of its own, with standard input from
/// `/dev/null` and standard output and error redirected to files, and reaped with `wait4`, whose
/// `rusage` gives that child's CPU time (user + system; the child's own reaped children included, no
/// other process's).
///
/// Peak RSS needs care: glibc's `posix_spawn` (like `vfork`) runs the child on the parent's address
/// space until `exec`, and Linux carries the high-water RSS of the address space being left into the
/// new program's `ru_maxrss`, so a child spawned directly by load-test (which holds the mock CDN)
/// would report at least load-test's own peak. When GNU time is installed (`/usr/bin/time`, Debian's
/// `time` package), each child is therefore started through it: `time` is about 1 MB, forks the real
/// child from its own small address space and writes that child's `ru_maxrss` (`%M`) to a file. The
/// CPU numbers still come from load-test's own `wait4`, which include the wrapper's ~1 ms.
enum ChildRunner {
    /// `/usr/bin/time` when it is GNU time, else nil.
    static let gnuTime: String? = {
        let path = "/usr/bin/time"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// Runs `command` to completion (or its timeout) and measures it. `scratch` holds the wrapper's report file.
    static func run(_ command: ChildCommand, scratch: String) async throws -> ChildMeasurement {
        let rssFile = scratch + "/.rss-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: rssFile) }
        var argv = [command.executable] + command.arguments
        if let gnuTime {
            argv = [gnuTime, "-f", "%M", "-o", rssFile, "--"] + argv
        }
        let state = ChildState()
        let clock = ContinuousClock()
        let started = clock.now
        let pid = try spawn(argv, stdout: command.stdoutPath, stderr: command.stderrPath)
        let watchdog = Task {
            try? await Task.sleep(for: command.timeout)
            guard !Task.isCancelled else { return }
            state.killIfRunning(processGroup: pid)
        }
        let exit = await waitForExit(pid, state: state)
        watchdog.cancel()

        var peakKB = exit.maxRSSKilobytes
        var source = "wait4"
        if gnuTime != nil {
            // GNU time writes "Command exited with non-zero status N" etc. before the format's line.
            let text = (try? String(contentsOfFile: rssFile, encoding: .utf8)) ?? ""
            if let last = text.split(whereSeparator: \.isNewline).last, let kb = Int(last.trimmingCharacters(in: .whitespaces)) {
                peakKB = kb
                source = "gnu-time"
            }
        }
        return ChildMeasurement(
            exitStatus: exit.status,
            timedOut: state.timedOut,
            wallSeconds: (exit.ended - started).timeInterval,
            userSeconds: exit.userSeconds,
            systemSeconds: exit.systemSeconds,
            cpuSeconds: exit.userSeconds + exit.systemSeconds,
            peakRSSBytes: peakKB * 1024,
            rssSource: source)
    }

    /// What `wait4` said.
    private struct Exit: Sendable {
        var status: Int32
        var userSeconds: Double
        var systemSeconds: Double
        var maxRSSKilobytes: Int
        var ended: ContinuousClock.Instant
    }

    /// Waits on a dedicated thread (never on the cooperative pool): first `waitid(WNOWAIT)` to see the exit
    /// while the pid still belongs to the zombie (so the watchdog can never signal a reused pid), then `wait4`.
    private static func waitForExit(_ pid: pid_t, state: ChildState) async -> Exit {
        await withCheckedContinuation { (continuation: CheckedContinuation<Exit, Never>) in
            let thread = Thread {
                var info = siginfo_t()
                var attempts = 0
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR, attempts < 1_000_000 {
                    attempts += 1
                }
                let ended = ContinuousClock.now
                state.markExited()
                var status: Int32 = 0
                var usage = rusage()
                attempts = 0
                while wait4(pid, &status, 0, &usage) < 0, errno == EINTR, attempts < 1_000_000 { attempts += 1 }
                let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                continuation.resume(
                    returning: Exit(
                        status: code,
                        userSeconds: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
                        systemSeconds: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
                        maxRSSKilobytes: Int(usage.ru_maxrss),
                        ended: ended))
            }
            thread.name = "load-test wait4 \(pid)"
            thread.start()
        }
    }

    /// `posix_spawn` with stdin from /dev/null, stdout/stderr to files, default signal dispositions, an empty
    /// signal mask and a new process group.
    private static func spawn(_ argv: [String], stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let environment = childEnvironment(ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard result == 0 else {
            throw SpawnError(description: "cannot start \(argv[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// Whether a child has exited and whether the watchdog killed it (shared by the waiting thread and the watchdog).
private final class ChildState: Sendable {
    private struct Flags {
        var exited = false
        var timedOut = false
    }

    private let flags = Locked(Flags())

    /// The waiting thread saw the exit (the zombie is not reaped yet).
    func markExited() {
        flags.withLock { $0.exited = true }
    }

    /// True when the watchdog killed the child.
    var timedOut: Bool { flags.withLock { $0.timedOut } }

    /// SIGKILLs the child's process group unless it has already exited.
    func killIfRunning(processGroup: pid_t) {
        flags.withLock { flags in
            guard !flags.exited else { return }
            flags.timedOut = true
            kill(-processGroup, SIGKILL)
        }
    }
}

/// Proxy variables libcurl (curl) and Foundation (URLSession) read, in either case; fetch-attachment
/// ignores them. None reaches a child, so that every contender talks to the mock CDN directly.
let proxyVariables: Set<String> = ["http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"]

/// The load test's environment without the proxy variables.
func childEnvironment(_ environment: [String: String]) -> [String: String] {
    environment.filter { !proxyVariables.contains($0.key.lowercased()) }
}
