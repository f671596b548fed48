import Foundation
import Glibc
import Synchronization

/// A TCP proxy on loopback that forwards each connection to a port, and can stall the
/// connections it carries: their bytes stop flowing both ways, and neither side is told (no FIN,
/// no reset), as when a firewall forgets a connection or a server fails over without a word.
/// Connections made after a stall flow, unless ``stallsNewConnections`` is set.
final class StallingProxy: Sendable {
    /// The port the proxy listens on.
    let port: Int
    private let listener: Int32
    private let target: Int
    /// Each connection's pair of sockets, and whether it is stalled.
    private let connections = Mutex<[(client: Int32, server: Int32, stalled: Bool)]>([])
    private let closed = Atomic<Bool>(false)
    private let stallingNew = Atomic<Bool>(false)

    /// Whether connections made from now on are stalled from their start (their connection is
    /// made, and no byte flows).
    var stallsNewConnections: Bool {
        get { stallingNew.load(ordering: .relaxed) }
        set { stallingNew.store(newValue, ordering: .relaxed) }
    }

    /// A proxy to `target` on 127.0.0.1, accepting at once.
    init(to target: Int) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptForever() }
    }

    /// Stalls every connection carried now.
    func stallConnections() {
        connections.withLock { all in
            for index in all.indices { all[index].stalled = true }
        }
    }

    /// Stops accepting and closes every connection.
    func close() {
        closed.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for pair in connections.withLock({ $0 }) {
            shutdown(pair.client, Int32(SHUT_RDWR))
            shutdown(pair.server, Int32(SHUT_RDWR))
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptForever() {
        while !closed.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            connections.withLock { $0.append((client, server, stallsNewConnections)) }
            Thread.detachNewThread { [self] in pump(from: client, to: server, pair: client) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, pair: client) }
        }
    }

    /// Copies bytes from `source` to `destination` until either side closes, holding them while
    /// the connection (known by its client socket, `pair`) is stalled.
    private func pump(from source: Int32, to destination: Int32, pair: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func isStalled() -> Bool { connections.withLock { $0.first { $0.client == pair }?.stalled ?? true } }
        while !closed.load(ordering: .relaxed) {
            if isStalled() {
                usleep(10_000)
                continue
            }
            var ready = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) >= 0 else { break }
            // Asked again once bytes came: a stall while waiting holds them.
            guard ready.revents != 0, !isStalled() else { continue }
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            var written = 0
            while written < count {
                let wrote = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + written, count - written) }
                guard wrote > 0 else { return }
                written += wrote
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }
}
