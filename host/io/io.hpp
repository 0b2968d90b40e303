// File helpers shared by the loaders and the CLI (host only).
//
// The promises (docs/reliability.md): an output file appears whole or not
// at all; it is never written through a temporary whose name another user
// could predict or plant a symlink at; device, FIFO and pipe targets are
// written in place, never replaced; every write is checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulkscore {

// Reads a whole file: a regular file, a pipe or FIFO (`<(kubectl ...)`), a
// character device, or standard input for "-". Throws
// InputError("<path>: cannot read: <reason>").
std::string read_file(const std::string& path);

// Whether `path` names something that can be mapped or sized up front (a
// regular file), as opposed to a stream that must be read to its end.
bool is_regular_file(const std::string& path);
// The size stat reports for a regular file (0 for /proc and sysfs files,
// whose content is made as it is read: read those to the end), or 0.
uint64_t regular_file_size(const std::string& path);

// Writes `content` to `path` so that it appears whole or not at all:
//  * "-": standard output (write_stdout);
//  * a character device, FIFO or socket (/dev/null, /dev/stdout onto a pipe):
//    written in place, never replaced by a regular file;
//  * a symlink: followed to its final target, which is then treated as here;
//  * a regular file, or nothing yet: the content goes to a new temporary
//    file created exclusively (O_EXCL, not following symlinks, random name)
//    in the target's directory, is flushed to disk (fsync), takes the
//    replaced file's permission bits (else 0666 less the umask), and is
//    renamed over the target; the directory is synced too.
// Throws Error naming the path on any failure, leaving the target as it was.
void write_file_atomically(const std::string& path, std::string_view content);

// Several outputs as a unit: every one is written, or (on failure) none is
// changed, as far as POSIX allows. Every target is opened (a temporary
// created, a device or FIFO opened) before anything is written; the
// temporaries are written and flushed; only then are standard output ("-",
// at most once) and the in-place targets written, and the temporaries
// renamed over their targets (replaced files are kept aside until every
// rename succeeded, and put back otherwise). A device, FIFO or standard
// output cannot be taken back once written: they are written after every
// file is ready, so only a failed rename (rare: the folders were writable
// a moment before) can leave them written while the files are not. Paths
// must differ (InputError).
void write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files);

// Refuses (InputError naming `flag`) an output name that is empty or holds
// a control character (a newline, an escape): such a name is never what a
// user meant, and would corrupt any message or script that repeats it.
void check_output_name(const char* flag, const std::string& path);

// A command's file named by the flag that gave it ("-o", "--pods").
struct FlagPath {
  std::string flag;
  std::string path;  // "-": standard input or output
};
// Checks a command's outputs before it computes anything (InputError):
// every output name passes check_output_name, is not a directory, and
// lies in a folder that exists (so that a long run does not end in a
// write that was bound to fail); no two outputs name the same
// file (through any link) or both standard output; no output names an
// input (the same path or the same file), since writing it would replace
// what was read. Inputs that are "" are left out.
void check_output_paths(const std::vector<FlagPath>& outputs, const std::vector<FlagPath>& inputs);

// The CLI's signal handling for outputs in progress (never called by the
// library itself): on SIGTERM, SIGINT, SIGHUP and SIGQUIT the temporaries
// of outputs not yet renamed into place are removed before the process
// dies of the signal as it would have; SIGXFSZ (a write past the file size
// limit) is ignored, so that the write fails with EFBIG and is reported
// and cleaned up like any other failed write. SIGKILL and a power loss
// can still leave a `.bulkscore-XXXXXX` file beside a target
// (docs/reliability.md). Handlers installed later for SIGINT (perf's
// graceful stop) take precedence while they are installed.
void install_output_signal_cleanup();

// Writes to standard output, checking every write and the final flush; a
// full device or a closed pipe throws Error (the CLI exits 1 with it).
void write_stdout(std::string_view content);

// Whether two paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace bulkscore
