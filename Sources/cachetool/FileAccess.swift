import Glibc

/// Reading input files and writing export files the safe way: exports are written to a new
/// 0600 file (`mkstemp`: `O_EXCL`, owner-only) and moved into place only once complete and
/// durable, so a crash never leaves a half-written or world-readable cache behind.
enum FileAccess {
    /// The whole of `path`, or of standard input for `-`.
    static func read(_ path: String) throws -> [UInt8] {
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot read \(path)", errno: errno) }
        defer { if path != "-" { close(descriptor) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read \(path)", errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Writes `bytes` to `path` (standard output for `-`) as a new file with mode 0600.
    ///
    /// An existing `path` is left alone unless `replace` is set; then it is replaced in one
    /// `rename` (a symbolic link at `path` is replaced, not followed).
    static func write(_ bytes: [UInt8], to path: String, replace: Bool) throws {
        if path == "-" {
            let written = bytes.withUnsafeBufferPointer { Console.write(STDOUT_FILENO, bytes: $0) }
            guard written else { throw failure("cannot write to standard output", errno: errno) }
            return
        }
        if !replace, exists(path) {
            throw CommandFailure(.usage, "\(path) already exists; choose another file or pass --force to replace it")
        }
        let directory = parent(of: path)
        var template = Array("\(directory)/.cachetool-export-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure("cannot create a file in \(directory)", errno: errno) }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer { if !committed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            // mkostemp already creates 0600; fchmod makes it so whatever the C library does.
            guard fchmod(descriptor, 0o600) == 0 else { throw failure("cannot set permissions on \(temporary)", errno: errno) }
            let written = bytes.withUnsafeBufferPointer { Console.write(descriptor, bytes: $0) }
            guard written else { throw failure("cannot write \(path)", errno: errno) }
            // The bytes must be on disk before the name points at them.
            guard fsync(descriptor) == 0 else { throw failure("cannot flush \(path)", errno: errno) }
        }
        if replace {
            guard rename(temporary, path) == 0 else { throw failure("cannot replace \(path)", errno: errno) }
        } else {
            // link() fails if the name exists: no window in which another file could be clobbered.
            guard link(temporary, path) == 0 else {
                let code = errno
                if code == EEXIST {
                    throw CommandFailure(.usage, "\(path) already exists; choose another file or pass --force to replace it")
                }
                throw failure("cannot create \(path)", errno: code)
            }
            unlink(temporary)
        }
        committed = true
        // Make the new name durable too.
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Whether anything (a dangling symbolic link included) has this name.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `path` from the working directory, as a shell names it: the shared caches' files are
    /// watched and locked by their folders, which the library takes only as absolute paths.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let folder = String(cString: cwd)
        return (folder == "/" ? "" : folder) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// The folder a path is in.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// The total size of the regular files under `path`, not following symbolic links; `nil`
    /// when `path` can't be read.
    static func diskUsage(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        if (info.st_mode & S_IFMT) == S_IFREG { return Int64(info.st_size) }
        guard (info.st_mode & S_IFMT) == S_IFDIR, let directory = opendir(path) else { return 0 }
        defer { closedir(directory) }
        var total: Int64 = 0
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            total += diskUsage("\(path)/\(name)") ?? 0
        }
        return total
    }

    /// A failure naming the file and the system's reason; a missing file is "not found".
    static func failure(_ what: String, errno code: Int32) -> CommandFailure {
        CommandFailure(code == ENOENT ? .notFound : .failure, "\(what): \(Console.describe(errno: code))")
    }
}
