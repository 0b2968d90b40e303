// File helpers shared by the loaders and the CLI (host only).
//
// The promises (docs/reliability.md): an output file appears whole or not
// at all; it is never written through a temporary whose name another user
// could predict or plant a symlink at; device, FIFO and pipe targets are
// written in place, never replaced; every write is checked.
#pragma once

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

// Several files as a unit: every one is written, or (on failure) none is
// changed, as far as POSIX renames allow (replaced files are kept aside until
// every rename succeeded, and put back otherwise). Paths must differ.
void write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files);

// Writes to standard output, checking every write and the final flush; a
// full device or a closed pipe throws Error (the CLI exits 1 with it).
void write_stdout(std::string_view content);

// Whether two paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace bulkscore
