import Glibc

@testable import SecureTokenCache

/// One folder of a disk as a power cut sees it: what is durable, and what was changed since the
/// last sync and may or may not have reached the platter. It is fed the ``SystemCall/Event``s of
/// a run, in order, and asked between two of them for every state of the folder a power cut there
/// could leave (``crashStates()``), in the manner of SQLite's crash tests.
///
/// The model, and why:
/// - A file's data is durable once `fsync` of it returns. Changes since then (writes, truncations)
///   may each have been written back or not, and a write may have been torn: only some of its
///   512-byte sectors written. A sector is written whole or not at all (the atomic-sector
///   assumption SQLite also makes).
/// - Names (creations, renames, removals) are durable once `fsync` of the folder returns. Before
///   that, a journaling file system applies them in order, so a power cut leaves some prefix of
///   them: a rename may not have happened, but never a later change without an earlier one.
/// - A file mapped shared changes with no system call at all; its states are the contents it had
///   at each ``Step/snapshot(path:bytes:)`` (the writer announces every store with a
///   `touch`), any one of which the kernel may have written back, and `msync` makes the current
///   one durable.
///
/// What is enumerated per file (bounded, and covering each failure a log must survive): none of
/// its unsynced changes; every prefix of them, whole; each unsynced write torn after each of its
/// sectors (the ones before kept, the rest lost); and each unsynced write with one sector lost and
/// the others kept (written back out of order). States of the folder are every prefix of its
/// unsynced names, times every combination of its files' states.
struct SimulatedDisk {
    /// What a power cut keeps or loses as a whole.
    static let sectorByteCount = 512

    /// One step of a recorded run: a system call, what a mapped file held when it was announced,
    /// or a mark the workload made between calls.
    enum Step: Sendable {
        case call(SystemCall.Event)
        /// The bytes of the file at `path` when a writer announced a change to its mapping.
        case snapshot(path: String, bytes: [UInt8])
        /// Transaction `index` (from 1) is about to be committed.
        case began(Int)
        /// The commit of transaction `index` returned.
        case acknowledged(Int)
    }

    /// A change to a file's bytes since its last sync.
    enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(length: Int)
    }

    /// A change to the folder's names since its last sync.
    enum NameChange {
        case link(name: String, file: Int)
        case remove(name: String)
        case rename(source: String, destination: String)
    }

    /// One file (an inode: it keeps its data when renamed, and after its last name is gone).
    struct File {
        var durable: [UInt8]
        var pending: [Change] = []
        var live: [UInt8]
    }

    private enum Descriptor {
        case file(Int)
        case folder
    }

    /// The folder's path.
    let folder: String
    /// Names whose files keep their durable contents in every state: their bytes are diagnostics
    /// that no open of the group reads.
    let fixedNames: Set<String>
    private var files: [File] = []
    private var durableNames: [String: Int] = [:]
    private var liveNames: [String: Int] = [:]
    private var pendingNames: [NameChange] = []
    private var descriptors: [Int32: Descriptor] = [:]
    private var mappings: [UInt: Int] = [:]
    /// Calls on the folder the model does not expect of a healthy run (a new subfolder, a rename
    /// out of the folder): a run that makes one fails.
    private(set) var surprises: [String] = []

    /// A folder holding `contents` (name → bytes), all durable.
    init(folder: String, contents: [String: [UInt8]], fixedNames: Set<String>) {
        self.folder = folder
        self.fixedNames = fixedNames
        for (name, bytes) in contents.sorted(by: { $0.key < $1.key }) {
            durableNames[name] = files.count
            files.append(File(durable: bytes, live: bytes))
        }
        liveNames = durableNames
    }

    /// The file's name in the folder, or `nil` for a path elsewhere.
    private func name(of path: String) -> String? {
        guard path.hasPrefix(folder + "/") else { return nil }
        let name = String(path.dropFirst(folder.count + 1))
        return name.contains("/") ? nil : name
    }

    /// Applies one recorded step. Returns whether it changed what a power cut could leave, which
    /// makes the point after it a crash point.
    mutating func apply(_ step: Step) -> Bool {
        switch step {
        case .began, .acknowledged: return false
        case .snapshot(let path, let bytes):
            guard let name = name(of: path), let id = liveNames[name], files[id].live != bytes else { return false }
            change(id, .write(offset: 0, bytes: bytes))
            return true
        case .call(let event): return apply(event)
        }
    }

    private mutating func apply(_ event: SystemCall.Event) -> Bool {
        switch event {
        case .opened(let path, let flags, let fd):
            descriptors[fd] = nil
            if path == folder {
                descriptors[fd] = .folder
                return false
            }
            guard let name = name(of: path) else { return false }
            if let id = liveNames[name] {
                descriptors[fd] = .file(id)
                if flags & O_TRUNC != 0 { surprises.append("open with O_TRUNC of \(name)") }
                return false
            }
            guard flags & O_CREAT != 0 else { return false }
            files.append(File(durable: [], live: []))
            descriptors[fd] = .file(files.count - 1)
            liveNames[name] = files.count - 1
            pendingNames.append(.link(name: name, file: files.count - 1))
            return true
        case .closed(let fd):
            descriptors[fd] = nil
            return false
        case .wrote(let fd, let offset, let bytes):
            guard case .file(let id) = descriptors[fd] else { return false }
            change(id, .write(offset: Int(offset), bytes: bytes))
            return true
        case .truncated(let fd, let length):
            guard case .file(let id) = descriptors[fd] else { return false }
            change(id, .truncate(length: Int(length)))
            return true
        case .synced(let fd):
            switch descriptors[fd] {
            case .file(let id):
                files[id].durable = files[id].live
                files[id].pending = []
            case .folder:
                durableNames = liveNames
                pendingNames = []
            case nil: return false
            }
            return true
        case .mapped(let fd, let address, _):
            if case .file(let id) = descriptors[fd] { mappings[address] = id }
            return false
        case .unmapped(let address):
            mappings[address] = nil
            return false
        case .syncedMapping(let address, let bytes):
            guard let id = mappings[address] else { return false }
            files[id] = File(durable: bytes, live: bytes)
            return true
        case .touched: return false
        case .renamed(let source, let destination):
            let from = name(of: source)
            let to = name(of: destination)
            guard from != nil || to != nil else { return false }
            guard let from, let to, let id = liveNames[from] else {
                surprises.append("rename of \(source) to \(destination)")
                return false
            }
            liveNames[to] = id
            liveNames[from] = nil
            pendingNames.append(.rename(source: from, destination: to))
            return true
        case .linked(let source, let destination):
            guard let to = name(of: destination) else { return false }
            guard let from = name(of: source), let id = liveNames[from] else {
                surprises.append("link of \(source) as \(destination)")
                return false
            }
            liveNames[to] = id
            pendingNames.append(.link(name: to, file: id))
            return true
        case .removed(let path):
            guard let name = name(of: path), liveNames[name] != nil else { return false }
            liveNames[name] = nil
            pendingNames.append(.remove(name: name))
            return true
        case .madeDirectory(let path):
            if name(of: path) != nil { surprises.append("a new folder \(path)") }
            return false
        }
    }

    /// `step` for a person, naming files as they are named before it.
    func describe(_ step: Step) -> String {
        func file(_ fd: Int32) -> String {
            switch descriptors[fd] {
            case .file(let id): liveNames.filter { $0.value == id }.keys.sorted().first ?? "a removed file"
            case .folder: "the folder"
            case nil: "fd \(fd)"
            }
        }
        func short(_ path: String) -> String { name(of: path) ?? path }
        switch step {
        case .call(.wrote(let fd, let offset, let bytes)): return "write of \(bytes.count) bytes at \(offset) to \(file(fd))"
        case .call(.synced(let fd)): return "fsync of \(file(fd))"
        case .call(.truncated(let fd, let length)): return "ftruncate of \(file(fd)) to \(length) bytes"
        case .call(.opened(let path, _, _)): return "creation of \(short(path))"
        case .call(.renamed(let source, let destination)): return "rename of \(short(source)) to \(short(destination))"
        case .call(.linked(let source, let destination)): return "link of \(short(source)) as \(short(destination))"
        case .call(.removed(let path)): return "unlink of \(short(path))"
        case .call(.syncedMapping): return "msync of the state page"
        case .snapshot(let path, _): return "a store into the mapped \(short(path))"
        default: return "\(step)"
        }
    }

    private mutating func change(_ id: Int, _ change: Change) {
        files[id].pending.append(change)
        Self.apply(change, to: &files[id].live)
    }

    private static func apply(_ change: Change, to bytes: inout [UInt8]) {
        switch change {
        case .write(let offset, let written): write(written, at: offset, keeping: nil, to: &bytes)
        case .truncate(let length):
            if length < bytes.count {
                bytes.removeLast(bytes.count - length)
            } else {
                bytes += [UInt8](repeating: 0, count: length - bytes.count)
            }
        }
    }

    /// Writes those bytes of `written` (meant for `offset`) whose sectors `keeping` accepts (all
    /// when `nil`). The file grows to the end of the last byte kept, and a gap reads as zeros,
    /// as a hole in a sparse file does.
    private static func write(_ written: [UInt8], at offset: Int, keeping: ((Int) -> Bool)?, to bytes: inout [UInt8]) {
        var start = offset
        let end = offset + written.count
        while start < end {
            let sector = start / sectorByteCount
            let sectorEnd = min(end, (sector + 1) * sectorByteCount)
            if keeping?(sector) ?? true {
                if bytes.count < sectorEnd { bytes += repeatElement(0, count: sectorEnd - bytes.count) }
                bytes.replaceSubrange(start..<sectorEnd, with: written[(start - offset)..<(sectorEnd - offset)])
            }
            start = sectorEnd
        }
    }

    /// Every content of file `id` a power cut could leave (see the type's description).
    private func states(of id: Int) -> [[UInt8]] {
        let file = files[id]
        var states = [file.durable]
        var base = file.durable
        for change in file.pending {
            if case .write(let offset, let written) = change, !written.isEmpty {
                let first = offset / Self.sectorByteCount
                let last = (offset + written.count - 1) / Self.sectorByteCount
                if last > first {
                    for tornAfter in first..<last {
                        var torn = base
                        Self.write(written, at: offset, keeping: { $0 <= tornAfter }, to: &torn)
                        states.append(torn)
                    }
                    for lost in first...last {
                        var holed = base
                        Self.write(written, at: offset, keeping: { $0 != lost }, to: &holed)
                        // The file's new size reached the disk, the lost sector's data did not.
                        if holed.count < offset + written.count {
                            holed += [UInt8](repeating: 0, count: offset + written.count - holed.count)
                        }
                        states.append(holed)
                    }
                }
            }
            Self.apply(change, to: &base)
            states.append(base)
        }
        return states
    }

    /// Every state of the folder (name → contents) a power cut now could leave; some may repeat.
    func crashStates() -> [[String: [UInt8]]] {
        var result: [[String: [UInt8]]] = []
        var names = durableNames
        for count in 0...pendingNames.count {
            if count > 0 {
                switch pendingNames[count - 1] {
                case .link(let name, let file): names[name] = file
                case .remove(let name): names[name] = nil
                case .rename(let source, let destination):
                    names[destination] = names[source]
                    names[source] = nil
                }
            }
            let ids = Set(names.filter { !fixedNames.contains($0.key) }.values).sorted()
            var combinations: [[Int: [UInt8]]] = [[:]]
            for id in ids {
                let states = states(of: id)
                combinations = combinations.flatMap { combination in
                    states.map { state in combination.merging([id: state]) { $1 } }
                }
            }
            for combination in combinations {
                result.append(names.mapValues { combination[$0] ?? files[$0].durable })
            }
        }
        return result
    }
}
