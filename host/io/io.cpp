#include "host/io/io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/common.hpp"

namespace bulkscore {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return std::move(ss).str();
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp-bulkscore";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename into place: " + why);
  }
}

}  // namespace bulkscore
