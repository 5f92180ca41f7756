import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// How a process that holds a key's lock shows the processes waiting for it that it is alive,
/// without process ids (PID namespaces differ between containers) and without writing anything.
///
/// Each process that holds a lock long enough claims a slot: one byte of the lock file at
/// `slotBase` plus a number below `slots`, locked exclusively by no other live process. Every
/// `period` a thread of its own changes the type of that lock (exclusive, shared, exclusive…;
/// `F_OFD_SETLK` changes it in place): one `fcntl` a beat, however many keys it holds. Each key
/// it holds at its `markedAfter`th beat since the lock gets a shared lock on the range at
/// `keyOffset(of:)` whose length is the slot's number plus one: one `fcntl` once per key, and one
/// when it goes. A waiter reads that range's lock (`F_OFD_GETLK` gives its length, so the slot),
/// then the slot's type, each time it polls (`HolderLiveness`): a live holder's changes every
/// `period`; a stopped one's (SIGSTOP, a frozen cgroup) never does. A process that ends lets its slot and ranges go with its locks. A
/// download held across fewer than `markedAfter` beats touches none of this: a miss's lock and
/// unlock cost what they did.
///
/// One thread per store, started at its first lock, beating while the store holds a lock and
/// asleep otherwise: none of the threads Swift's tasks and Dispatch's queues share, which a
/// spike's work can keep busy for longer than a beat. A holder whose engine is busy, or whose
/// origin is slow, still beats.
final class Heartbeat: Sendable {
    /// How often the holder's slot changes type.
    static let period = Duration.milliseconds(250)

    /// Where `key`'s heartbeat range starts: 2^62 plus the low 61 bits of its lock's offset (the
    /// lock's own byte is below 2^62).
    static func keyOffset(of key: CacheKey) -> Int64 { (1 << 62) | (CacheStore.lockOffset(of: key) & ((1 << 61) - 1)) }

    /// The slots' bytes: `slotBase + n` for `n` below `slots`, above where any key's range starts.
    static let slotBase: Int64 = (1 << 62) | (1 << 61)
    static let slots: Int64 = 1 << 16

    /// At which beat since its lock a key's range names the slot: the fourth (0.75 to 1 s on), so
    /// that a spike's downloads held (queued) across fewer beats cost nothing more, and a waiter
    /// still sees the slot a second after the key was locked, within `HolderLiveness.stillness`.
    static let markedAfter = 4

    private struct State {
        /// The keys held, each with the beats it has been held for (up to `markedAfter`, when its
        /// range is locked).
        var held: [CacheKey: Int] = [:]
        /// This process's slot, once claimed, and whether its lock is exclusive now.
        var slot: Int64?
        var exclusive = true
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

    /// What the heartbeat of the process holding `key`'s lock shows through `lockFile` (another
    /// open file description's view): `.none` when no slot is named there.
    static func mark(of key: CacheKey, in lockFile: FileDescriptor) throws(Errno) -> HolderMark {
        let offset = keyOffset(of: key)
        let range = try Syscalls.lockHeld(lockFile, at: offset)
        guard range.type != Int32(F_UNLCK), range.start == offset, (1...slots).contains(range.length) else { return .none }
        return HolderMark(lockType: try Syscalls.lockHeld(lockFile, at: slotBase + range.length - 1).type)
    }

    /// The lock of `key` was taken: its range names this process's slot from the next beat,
    /// until `ended(key)`. Wakes the thread only when it sleeps for want of a held key.
    func started(_ key: CacheKey) {
        let (start, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.held[key] = 0
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

    /// The lock of `key` is about to go: its range goes first (under the same lock as a beat, so
    /// that no beat takes it again once it went).
    func ended(_ key: CacheKey) {
        state.withLock { state in
            guard state.held.removeValue(forKey: key) == Self.markedAfter, let slot = state.slot, !state.stopped else { return }
            Syscalls.unlock(lockFile, at: Self.keyOffset(of: key), length: slot + 1)
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

    private static let periodSeconds = period.timeInterval

    /// One beat: the slot claimed if it is not yet (at most 64 tries of numbers drawn at random),
    /// each key at its `markedAfter`th beat given its range, and the slot's type changed. Under the
    /// state's lock one `fcntl` at a time, so that `started` and `ended` wait for one at most.
    private func beat() {
        let (slot, unmarked) = state.withLock { state -> (Int64?, [CacheKey]) in
            guard !state.stopped else { return (nil, []) }
            if state.slot == nil {
                for _ in 0..<64 {
                    let candidate = Int64.random(in: 0..<Self.slots)
                    if (try? Syscalls.tryLock(lockFile, at: Self.slotBase + candidate, exclusive: true)) == true {
                        state.slot = candidate
                        state.exclusive = true
                        break
                    }
                }
            }
            let due = state.held.filter { $0.value == Self.markedAfter - 1 }.map(\.key)
            for (key, beats) in state.held where beats < Self.markedAfter - 1 { state.held[key] = beats + 1 }
            return (state.slot, due)
        }
        guard let slot else { return }
        for key in unmarked {
            state.withLock { state in
                guard !state.stopped, state.held[key] == Self.markedAfter - 1 else { return }
                // A range another process holds (two keys held at once whose ranges overlap, against
                // odds of about 2^-44) stays theirs: this key shows no slot.
                if (try? Syscalls.tryLock(lockFile, at: Self.keyOffset(of: key), length: slot + 1, exclusive: false)) == true {
                    state.held[key] = Self.markedAfter
                }
            }
        }
        state.withLock { state in
            guard !state.stopped else { return }
            if (try? Syscalls.tryLock(lockFile, at: Self.slotBase + slot, exclusive: !state.exclusive)) == true { state.exclusive.toggle() }
        }
    }
}

/// What a waiter sees of the heartbeat of the process holding the key it waits for (`Heartbeat`).
enum HolderMark: Equatable, Sendable {
    /// No slot named: a holder before its first beat, or one that never beats (an earlier version).
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

    /// Records that the holder's heartbeat showed `mark` at `now`; `true` once it has shown
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
