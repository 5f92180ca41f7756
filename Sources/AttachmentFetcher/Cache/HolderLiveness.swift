import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// How a process that holds a key's lock shows the processes waiting for it that it is alive,
/// without process ids (PID namespaces differ between containers).
///
/// Each key's lock (one byte of the lock file, `CacheStore.lockOffset`) has a heartbeat byte,
/// 2^62 further on. Every `period`, a thread of the holding process's own locks that byte for each
/// key it has held since the last beat, or changes the lock's type, shared to exclusive and back
/// (`F_OFD_SETLK` changes it in place). A waiter reads the type (`F_OFD_GETLK`) each time it
/// polls (`HolderLiveness`): a live holder's changes every `period`; a stopped one's (SIGSTOP, a
/// frozen cgroup) never does. Nothing is written, and a process that ends lets the byte go with
/// its lock. A download shorter than `period` never touches its heartbeat byte: a miss's lock
/// and unlock cost what they did.
///
/// One thread per store, started at its first lock, beating while the store holds a lock and
/// asleep otherwise: none of the threads Swift's tasks and Dispatch's queues share, which a
/// spike's work can keep busy for longer than a beat. A holder whose engine is busy, or whose
/// origin is slow, still beats.
final class Heartbeat: Sendable {
    /// How often the holder's heartbeat bytes change.
    static let period = Duration.milliseconds(250)

    /// Where `key`'s heartbeat byte is: `lockOffset` plus 2^62 (offsets are below 2^62).
    static func offset(of key: CacheKey) -> Int64 { CacheStore.lockOffset(of: key) | (1 << 62) }

    private struct State {
        /// The keys held, each with the type its heartbeat byte is locked with: `nil` before its
        /// first beat, else whether exclusive.
        var held: [CacheKey: Bool?] = [:]
        var started = false
        /// Whether the thread waits for a key to be held (and must be woken for one).
        var idle = false
        var stopped = false
    }

    private let state = Locked(State())
    /// What the thread sleeps on: between beats, and while nothing is held.
    private let condition = NSCondition()
    private let lockFile: FileDescriptor

    /// Beats on `lockFile`, which the caller keeps open until `stop()`.
    init(lockFile: FileDescriptor) {
        self.lockFile = lockFile
    }

    /// The lock of `key` was taken: beat for it until `ended(key)`. Wakes the thread only when
    /// it sleeps for want of a held key.
    func started(_ key: CacheKey) {
        let (start, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.held[key] = .some(nil)
            defer { state.started = true }
            return (!state.started, state.idle)
        }
        if start { startThread() }
        if wake {
            condition.lock()
            condition.signal()
            condition.unlock()
        }
    }

    /// The lock of `key` is about to go: its heartbeat byte goes first (under the same lock as a
    /// beat, so that no beat takes the byte again once it went).
    func ended(_ key: CacheKey) {
        state.withLock { state in
            guard let beaten = state.held.removeValue(forKey: key), beaten != nil, !state.stopped else { return }
            Syscalls.unlock(lockFile, at: Self.offset(of: key))
        }
    }

    /// No more beats: after this returns, the lock file is not touched again, and the thread ends.
    func stop() {
        state.withLock { $0.stopped = true }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    private func startThread() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                // Asleep while nothing is held; `started` wakes it.
                while state.withLock({ state -> Bool in
                    state.idle = state.held.isEmpty && !state.stopped
                    return state.idle
                }) {
                    condition.wait()
                }
                // Then one period, unless stopped meanwhile.
                if !state.withLock({ $0.stopped }) { _ = condition.wait(until: Date(timeIntervalSinceNow: Self.periodSeconds)) }
                condition.unlock()
                guard !state.withLock({ $0.stopped }) else { return }
                beat()
            }
        }
        thread.name = "attachment-fetcher.heartbeat"
        thread.start()
    }

    private static let periodSeconds = Double(period.components.attoseconds) / 1e18 + Double(period.components.seconds)

    /// One beat: each held key's heartbeat byte locked, or its type changed. One key at a time
    /// under the state's lock, so that `started` and `ended` wait for one `fcntl` at most. A byte
    /// another process holds (two keys' offsets the same, against odds of 2^-62) keeps its lock.
    private func beat() {
        let keys = state.withLock { Array($0.held.keys) }
        for key in keys {
            state.withLock { state in
                guard !state.stopped, let beaten = state.held[key] else { return }
                let exclusive = beaten.map { !$0 } ?? false
                if (try? Syscalls.tryLock(lockFile, at: Self.offset(of: key), exclusive: exclusive)) == true {
                    state.held[key] = .some(exclusive)
                }
            }
        }
    }
}

/// What a waiter sees of the heartbeat byte of the key it waits for (`Heartbeat`).
enum HolderMark: Equatable, Sendable {
    /// Not locked: a holder before its first beat, or one that never beats (an earlier version).
    case none
    case shared
    case exclusive

    /// The mark `F_OFD_GETLK` reported as `type`.
    init(lockType type: Int32) {
        switch type {
        case Int32(F_RDLCK): self = .shared
        case Int32(F_WRLCK): self = .exclusive
        default: self = .none
        }
    }
}

/// A waiter's judgement of the process that holds the key it waits for, from the heartbeat marks
/// it sees as it polls: stopped once the mark has stayed the same for `stillness`, looked at
/// without a gap longer than `gap` (a waiter that was itself held up, or stopped, starts again
/// rather than judge a mark it may have seen change and change back).
///
/// `stillness` is eight heartbeat periods: a live holder whose thread is held up by a busy
/// machine for less is still waited for. A stopped holder costs each wait for it about this
/// long, after which the waiter downloads on its own and keeps nothing (the key's lock is not
/// its to take). A holder of an earlier version, which never beats, is taken for a stopped one.
struct HolderLiveness {
    static let stillness = Heartbeat.period * 8
    static let gap = Heartbeat.period * 2

    private var mark: HolderMark?
    private var since: ContinuousClock.Instant?
    private var seen: ContinuousClock.Instant?

    /// Records that the holder's heartbeat byte showed `mark` at `now`; `true` once it has shown
    /// that mark, and nothing else, for `stillness`.
    mutating func isStopped(showing mark: HolderMark, at now: ContinuousClock.Instant) -> Bool {
        defer { seen = now }
        guard mark == self.mark, let since, let seen, seen.duration(to: now) <= Self.gap else {
            self.mark = mark
            since = now
            return false
        }
        return since.duration(to: now) >= Self.stillness
    }
}
