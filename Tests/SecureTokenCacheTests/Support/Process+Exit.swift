import Foundation

extension Process {
    /// Stops the process with SIGKILL, unless it has ended, and waits for it. Not `terminate()`:
    /// a child that a test starts inherits the test runner's signal mask, in which SIGTERM is
    /// blocked.
    func kill() {
        if isRunning { Foundation.kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }

    /// Waits for the process to exit, on a thread of its own, reading `output` to its end first
    /// when given (a full pipe would stop the process before it exits); returns its exit status
    /// and what was read.
    ///
    /// Not with a `terminationHandler`: swift-corelibs-foundation keeps every process that has
    /// one alive after it exits (its run-loop source and the process hold each other), which
    /// LeakSanitizer reports for each process a test starts. Waiting on a thread of its own keeps
    /// the cooperative pool free for the tasks the process may need meanwhile.
    func exit(readingToEndOf output: FileHandle? = nil) async -> (status: Int32, output: Data) {
        let waited = Waited(process: self, output: output)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = waited.output?.readDataToEndOfFile() ?? Data()
                waited.process.waitUntilExit()
                continuation.resume(returning: (waited.process.terminationStatus, data))
            }
        }
    }
}

/// A process and its output handed to the thread that waits for it: only that thread touches
/// them until the process exits.
private struct Waited: @unchecked Sendable {
    let process: Process
    let output: FileHandle?
}
