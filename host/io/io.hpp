// File helpers shared by the loaders and the CLI (host only).
#pragma once

#include <string>
#include <string_view>

namespace bulkscore {

// Reads a whole file. Throws InputError("<path>: cannot read: <reason>").
std::string read_file(const std::string& path);

// Writes via a temporary file in the same folder and a rename, so `path`
// appears whole or not at all. Throws Error on failure.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace bulkscore
