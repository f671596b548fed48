import Glibc

/// Tells when a group changed: inotify on a folder, reporting events on the files that announce a
/// commit. For the file and keyring stores that is the announcement every store makes after
/// publishing a generation (``SharedState/bumpGeneration()``: every commit and every compaction,
/// by any process, this one included); for a cache the other SDKs share, the document or its
/// signal file, which they write or touch. Each event is a hint to compare generations, not a
/// change list; it comes after the change, so a comparison made after it sees the change.
///
/// Events coalesce: a slow consumer sees at least one event after the last change. The watcher
/// stops (and the stream finishes) when it is released.
final class GroupChangeWatcher: Sendable {
    /// One element after each burst of changes to the group.
    let changes: AsyncStream<Void>
    private let stopFD: Int32

    /// State handed to the watcher thread, which owns and closes the descriptors.
    private final class Context {
        let inotifyFD: Int32
        let stopFD: Int32
        let files: [[UInt8]]
        let continuation: AsyncStream<Void>.Continuation
        let onChange: (@Sendable () -> Void)?

        init(
            inotifyFD: Int32, stopFD: Int32, files: [[UInt8]], continuation: AsyncStream<Void>.Continuation,
            onChange: (@Sendable () -> Void)?
        ) {
            self.inotifyFD = inotifyFD
            self.stopFD = stopFD
            self.files = files
            self.continuation = continuation
            self.onChange = onChange
        }
    }

    /// Starts watching `files` (names) in the folder `directory` for `events` (an inotify mask;
    /// by default the attribute change a store's shared page announces a commit with).
    /// `onChange` runs on the watcher's thread after each burst of events, before the stream
    /// yields, so that whoever the stream wakes sees what `onChange` did.
    init(
        directory: String, files: [String] = [SharedState.fileName], events: UInt32 = UInt32(IN_ATTRIB),
        onChange: (@Sendable () -> Void)? = nil
    ) throws {
        let inotifyFD = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotifyFD >= 0 else { throw SystemCall.error("inotify_init1", "watching the group for changes") }
        guard inotify_add_watch(inotifyFD, directory, events) >= 0 else {
            let error = SystemCall.error("inotify_add_watch", "watching the group for changes")
            close(inotifyFD)
            throw error
        }
        // Closing the pipe's write end (on release) wakes the thread with POLLHUP.
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let error = SystemCall.error("pipe", "watching the group for changes")
            close(inotifyFD)
            throw error
        }
        _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
        let stopFD = pipeFDs[1]
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let context = Context(
            inotifyFD: inotifyFD, stopFD: pipeFDs[0], files: files.map { Array($0.utf8) }, continuation: continuation,
            onChange: onChange)
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
                GroupChangeWatcher.run(context)
                return nil
            }, Unmanaged.passRetained(context).toOpaque())
        guard started == 0 else {
            close(inotifyFD)
            close(pipeFDs[0])
            close(pipeFDs[1])
            throw TokenCacheError(
                .ioFailure, "could not start the change watcher thread",
                underlying: .posix(call: "pthread_create", errno: started))
        }
        pthread_detach(thread)
        self.changes = stream
        self.stopFD = stopFD
    }

    deinit {
        close(stopFD)
    }

    private static func run(_ context: Context) {
        defer {
            context.continuation.finish()
            close(context.inotifyFD)
            close(context.stopFD)
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let headerSize = MemoryLayout<inotify_event>.size
        while true {
            var fds = [
                pollfd(fd: context.inotifyFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: context.stopFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            var changed = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(context.inotifyFD, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                var offset = 0
                while offset + headerSize <= count {
                    let (length, mask) = buffer.withUnsafeBytes {
                        (
                            $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self),
                            $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        )
                    }
                    let nameStart = offset + headerSize
                    let nameEnd = min(nameStart + Int(length), count)
                    let name = buffer[nameStart..<nameEnd].prefix { $0 != 0 }
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 || context.files.contains(where: { name.elementsEqual($0) }) {
                        changed = true
                    }
                    offset = nameEnd
                }
            }
            if changed {
                context.onChange?()
                context.continuation.yield(())
            }
        }
    }
}
