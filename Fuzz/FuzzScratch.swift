import Glibc

/// A private scratch folder for the targets that need files, made once per run under `$TMPDIR`.
enum FuzzScratch {
    /// A new folder (mode 0700) for `purpose`.
    static func folder(_ purpose: String) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/stc-fuzz-\(purpose)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("cannot make a scratch folder under \(base)")
        }
        return String(cString: made)
    }

    /// Writes `bytes` as the file `path` (mode 0600), replacing what was there.
    static func write(_ bytes: [UInt8], to path: String) {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { fatalError("cannot write the scratch file \(path)") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { fatalError("cannot write the scratch file \(path)") }
            written += count
        }
    }

    /// The bytes of the file `path`.
    static func read(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { fatalError("cannot read the scratch file \(path)") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return bytes }
            bytes += buffer[..<count]
        }
    }

    /// Removes `path` and everything under it.
    static func remove(_ path: String) {
        guard let directory = opendir(path) else {
            unlink(path)
            return
        }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name == "." || name == ".." { continue }
            remove(path + "/" + name)
        }
        closedir(directory)
        rmdir(path)
    }
}
