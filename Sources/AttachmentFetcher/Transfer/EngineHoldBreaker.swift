import Dispatch
import Synchronization

/// Frees the engine's thread from a connection that holds it inside one `curl_multi_perform`.
///
/// libcurl 7.88 reads an HTTP/2 connection for as long as frames are waiting on it: an origin
/// that floods its connection (endless `PRIORITY` or empty `DATA` frames, faster than they are
/// read) keeps the engine's one thread inside one `curl_multi_perform` call for as long as the
/// flood lasts, and every other transfer of the fetcher, from every other origin, waits with it
/// (no callback runs meanwhile: none can abort it). Each caller is still answered at its deadline
/// (`DeadlineWatch`), but with every payload of a batch that one URL held, as `deadline`.
///
/// A timer of its own (every `period`, only while the engine has turned lately) watches how long
/// the thread has been inside the current `curl_multi_perform`. Once that is over `limit` (longer
/// than the engine ever sleeps between turns: libcurl returns from a call as soon as nothing is
/// waiting), with no body bytes delivered meanwhile, it looks at libcurl's open sockets
/// (`CurlSockets`): one whose bytes the thread keeps reading from tick to tick is the
/// connection holding it, and is shut down (`shutdown(2)`, both ways). libcurl then reads its end
/// and returns. Its transfers fail (see `CurlFailures.heldEngine`): HTTP/2 multiplexes only
/// transfers of one origin on a connection, the flooding one's, and they are not asked again.
/// Sockets being read while bodies are delivered, or a thread held by anything else (a slow disk
/// under a write, a placement), are left alone; a socket is only touched under `CurlSockets`'s
/// lock, so a number libcurl closed and the system handed out again is never shut.
///
/// A flood of `DATA` frames that each carry a body byte or a few is a body, not a hold: libcurl
/// hands the bytes on as they come and returns between reads, and the body's size limit ends it
/// (an image's 10 MB, about 100 MB on the wire, in under a second on loopback, while another
/// origin's download goes on: `FloodedConnectionTests.oneByteFrames`).
///
/// In normal operation it costs the engine's thread two atomic increments per turn, one per body
/// chunk, and the timer a few atomic loads per tick.
final class EngineHoldBreaker: Sendable {
    /// How long the thread may be inside one `curl_multi_perform` before its sockets are looked
    /// at: longer than the engine's loop ever sleeps (`nextWakeUpMilliseconds`), far longer than
    /// a call takes when nothing floods it.
    static let limit = Duration.seconds(1)
    /// How often the timer looks: a hold is broken within about two periods after `limit`.
    static let period = Duration.milliseconds(100)

    private struct State {
        var judge = EngineHoldJudge()
        /// Running while the engine turns.
        var timer: (any DispatchSourceTimer)?
        /// The connections shut, by their ports, and when, for `shutConnection(of:)`.
        var shut: [(local: Int, peer: Int, at: ContinuousClock.Instant)] = []
    }

    private let sockets: CurlSockets
    /// Counts the thread's entries into and exits from `curl_multi_perform`: odd while inside.
    private let turns = Atomic<UInt64>(0)
    /// Body chunks delivered so far.
    private let chunks = Atomic<UInt64>(0)
    /// Whether the timer runs (its truth is `State.timer`; this spares the thread the lock).
    private let monitoring = Atomic<Bool>(false)
    /// Whether a connection was ever shut (spares a failure the lock when none was).
    private let everShut = Atomic<Bool>(false)
    private let state = Locked(State())

    init(sockets: CurlSockets) {
        self.sockets = sockets
    }

    deinit { stop() }

    /// The engine's thread enters `curl_multi_perform` (with transfers running).
    func enteringPerform() {
        turns.add(1, ordering: .sequentiallyConsistent)
        // Read after the increment; the timer stops only after it has read `turns` again, after
        // clearing `monitoring`: one of the two sees the other.
        if !monitoring.load(ordering: .sequentiallyConsistent) { startMonitor() }
    }

    /// The engine's thread left `curl_multi_perform`.
    func leftPerform() {
        turns.add(1, ordering: .sequentiallyConsistent)
    }

    /// A chunk of a body was delivered (libcurl's write callback): the current call is progressing.
    func bodyDelivered() {
        chunks.add(1, ordering: .relaxed)
    }

    /// Whether the connection of `easy`'s last transfer (by its ports, `CURLINFO_LOCAL_PORT` and
    /// `CURLINFO_PRIMARY_PORT`, read only once some connection was ever shut) was shut here in
    /// the last minute. Called on the engine's thread.
    func shutConnection(of easy: CurlEasy) -> Bool {
        guard everShut.load(ordering: .relaxed) else { return false }
        let localPort = easy.localPort, peerPort = easy.primaryPort
        guard localPort > 0 else { return false }
        let now = ContinuousClock.now
        return state.withLock { state in
            state.shut.removeAll { $0.at.duration(to: now) > .seconds(60) }
            return state.shut.contains { $0.local == localPort && $0.peer == peerPort }
        }
    }

    /// Stops the timer for good (the engine's thread ends).
    func stop() {
        let timer = state.withLock { state in
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    private func startMonitor() {
        state.withLock { state in
            monitoring.store(true, ordering: .sequentiallyConsistent)
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global())
            let period = DispatchTimeInterval.milliseconds(Int(Self.period / .milliseconds(1)))
            timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(10))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            state.timer = timer
        }
    }

    private func tick() {
        let idle = state.withLock { state -> (any DispatchSourceTimer)? in
            let verdict = state.judge.tick(
                turn: turns.load(ordering: .sequentiallyConsistent), chunks: chunks.load(ordering: .relaxed),
                now: .now)
            switch verdict {
            case .running:
                return nil
            case .idle:
                monitoring.store(false, ordering: .sequentiallyConsistent)
                // The thread entered a call since: it saw `monitoring` still set, so this goes on.
                guard turns.load(ordering: .sequentiallyConsistent) % 2 == 0 else {
                    monitoring.store(true, ordering: .sequentiallyConsistent)
                    return nil
                }
                defer { state.timer = nil }
                return state.timer
            case .held:
                sockets.withOpenSockets { open in
                    var read: [UInt64: UInt64] = [:]
                    for socket in open {
                        if let bytes = Syscalls.bytesRead(fromSocket: socket.descriptor) { read[socket.serial] = bytes }
                    }
                    let holding = Set(state.judge.inspected(read))
                    let now = ContinuousClock.now
                    for socket in open where holding.contains(socket.serial) {
                        if let ports = Syscalls.ports(ofSocket: socket.descriptor) {
                            state.shut.append((ports.local, ports.peer, now))
                            everShut.store(true, ordering: .relaxed)
                        }
                        Syscalls.shutDownSocket(socket.descriptor)
                    }
                }
                return nil
            }
        }
        idle?.cancel()
    }
}

/// What `EngineHoldBreaker`'s timer makes of what it sees, as a value: no clock, no sockets.
struct EngineHoldJudge: Sendable {
    enum Verdict: Sendable, Hashable {
        /// The thread turns, or has been inside its current call for less than the limit.
        case running
        /// The thread has been outside `curl_multi_perform`, in the same turn, for `idleTicks`
        /// ticks: the timer may stop (the thread starts it again with its next call).
        case idle
        /// The thread has been inside one call for longer than the limit, and no body bytes were
        /// delivered since the last tick: its sockets are to be read (`inspected`).
        case held
    }

    /// Ticks outside a call after which the timer stops.
    static let idleTicks = 20

    let limit: Duration
    private var turn: UInt64?
    private var since: ContinuousClock.Instant?
    private var chunks: UInt64 = 0
    private var quietTicks = 0
    /// The bytes read from each socket (by its serial) at the last inspection of this hold.
    private var read: [UInt64: UInt64] = [:]

    init(limit: Duration = EngineHoldBreaker.limit) {
        self.limit = limit
    }

    /// A tick: `turn` counts the thread's entries into and exits from `curl_multi_perform` (odd
    /// while inside), `chunks` the body chunks delivered so far.
    mutating func tick(turn: UInt64, chunks: UInt64, now: ContinuousClock.Instant) -> Verdict {
        defer { self.chunks = chunks }
        guard turn == self.turn, let since else {
            self.turn = turn
            since = now
            quietTicks = 0
            read = [:]
            return .running
        }
        guard turn % 2 == 1 else {
            quietTicks += 1
            return quietTicks >= Self.idleTicks ? .idle : .running
        }
        // Bodies arrive: the call is slow, not held.
        guard chunks == self.chunks else {
            read = [:]
            return .running
        }
        return since.duration(to: now) >= limit ? .held : .running
    }

    /// The bytes read so far from each socket (by serial), after `.held`: the sockets read from
    /// since the last inspection, none at the first of a hold.
    mutating func inspected(_ read: [UInt64: UInt64]) -> [UInt64] {
        defer { self.read = read }
        return read.compactMap { serial, bytes in
            guard let earlier = self.read[serial], bytes > earlier else { return nil }
            return serial
        }.sorted()
    }
}
