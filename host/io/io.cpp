#include "host/io/io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host/common.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

std::string errno_text() { return std::strerror(errno); }

// The temporaries of outputs in progress, for the signal handler to remove:
// fixed slots of plain characters, claimed and released with atomics, so
// that the handler (async-signal-safe calls only) reads a slot only while
// its path is complete.
constexpr size_t kTempSlots = 64;
struct TempSlot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 holds a path
  char path[PATH_MAX];
};
TempSlot g_temp_slots[kTempSlots];

// Claims a slot for `path`; -1 when none is free or the path is too long
// (the temporary is then only removed by the writer itself).
int register_temp(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (size_t i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!g_temp_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temp_slots[i].path, path.c_str(), path.size() + 1);
    g_temp_slots[i].state.store(2);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_temp_slots[static_cast<size_t>(slot)].state.store(0);
}

void remove_temps_and_die(int sig) {
  for (TempSlot& t : g_temp_slots) {
    int expected = 2;
    // Claimed here so that no other thread's handler unlinks it twice.
    if (t.state.compare_exchange_strong(expected, 1)) ::unlink(t.path);
  }
  // Die of the signal, as without the handler (its exit status says so).
  ::signal(sig, SIG_DFL);  // NOLINT(cert-err33-c): async-signal-safe; nothing to do on failure
  ::raise(sig);            // NOLINT(cert-err33-c)
}

// Reads everything from `fd` until end of file (no seeking: pipes work).
bool read_all(int fd, std::string& out) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

// Writes all of `data` to `fd`, retrying short writes and EINTR.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The path an output really goes to: a symlink followed to its final target
// (which need not exist yet when the link dangles into an existing folder).
std::string resolve_output(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  // A dangling link: resolve its folder, keep the last component it names.
  std::string target(PATH_MAX, '\0');
  const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n <= 0) throw Error(path + ": cannot resolve the symlink: " + errno_text());
  target.resize(static_cast<size_t>(n));
  if (target[0] != '/') target = dir_of(path) + "/" + target;
  return target;
}

// One output in preparation: a temporary next to the target, or the target
// itself opened in place (devices, FIFOs).
struct PendingOutput {
  std::string path;       // as given, for messages
  std::string target;     // after following symlinks
  std::string temp;       // the temporary, until renamed over the target
  bool in_place = false;  // a device or FIFO, written directly
  bool is_stdout = false;  // "-"
  int fd = -1;
  int temp_slot = -1;  // the signal handler's record of `temp`

  PendingOutput() = default;
  PendingOutput(const PendingOutput&) = delete;
  PendingOutput& operator=(const PendingOutput&) = delete;
  ~PendingOutput() {
    if (fd >= 0) ::close(fd);
    if (!temp.empty()) ::unlink(temp.c_str());
    unregister_temp(temp_slot);
  }
  // The temporary now lives under the target's name.
  void renamed() {
    temp.clear();
    unregister_temp(temp_slot);
    temp_slot = -1;
  }
};

void open_output(PendingOutput& out) {
  out.target = resolve_output(out.path);
  struct stat st;
  const bool exists = ::stat(out.target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw Error(out.path + ": is a directory");
    // Character device, FIFO, socket: write in place, never replace it.
    out.fd = ::open(out.target.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (out.fd < 0) throw Error(out.path + ": cannot write: " + errno_text());
    out.in_place = true;
    return;
  }
  // mkstemp: a random name, created with O_EXCL (a planted file or symlink
  // makes it pick another name, never write through it).
  std::string temp = dir_of(out.target) + "/.bulkscore-XXXXXX";
  out.fd = ::mkstemp(temp.data());
  if (out.fd < 0) throw Error(out.path + ": cannot create a temporary file next to it: " + errno_text());
  out.temp = temp;
  out.temp_slot = register_temp(temp);
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(out.fd, mode) != 0) throw Error(out.path + ": cannot set the file mode: " + errno_text());
}

void write_and_flush(PendingOutput& out, std::string_view content) {
  if (out.is_stdout) {
    write_stdout(content);
    return;
  }
  if (!write_all(out.fd, content)) throw Error(out.path + ": write failed: " + errno_text());
  // Durable before it becomes visible under the final name.
  if (!out.in_place && ::fsync(out.fd) != 0) throw Error(out.path + ": write failed (fsync): " + errno_text());
  const int fd = out.fd;
  out.fd = -1;
  if (::close(fd) != 0) throw Error(out.path + ": write failed (close): " + errno_text());
}

void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself already happened
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string read_file(const std::string& path) {
  std::string out;
  if (path == "-") {
    if (!read_all(STDIN_FILENO, out)) throw InputError("-: cannot read standard input: " + errno_text());
    return out;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot read: " + errno_text());
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw InputError(path + ": cannot read: is a directory");
    }
    if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  }
  const bool ok = read_all(fd, out);
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) throw InputError(path + ": cannot read: " + why);
  return out;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t regular_file_size(const std::string& path) {
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

void write_stdout(std::string_view content) {
  if (std::fflush(stdout) != 0 || !write_all(STDOUT_FILENO, content))
    throw Error("standard output: write failed: " + errno_text());
}

void write_file_atomically(const std::string& path, std::string_view content) {
  if (path == "-") {
    write_stdout(content);
    return;
  }
  PendingOutput out;
  out.path = path;
  open_output(out);
  write_and_flush(out, content);
  if (out.in_place) return;
  if (::rename(out.temp.c_str(), out.target.c_str()) != 0)
    throw Error(path + ": cannot rename into place: " + errno_text());
  out.renamed();
  sync_dir(dir_of(out.target));
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files) {
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (files[i].first == files[j].first || same_file(files[i].first, files[j].first))
        throw InputError(files[i].first + ": the same file is given for two outputs");
  size_t stdout_uses = 0;
  for (const auto& f : files) stdout_uses += f.first == "-" ? 1 : 0;
  if (stdout_uses > 1) throw InputError("-: standard output is given for two outputs");
  // Every target opened first: a folder that does not exist or a target
  // that is a directory fails before anything is written.
  std::vector<PendingOutput> outs(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    outs[i].path = files[i].first;
    if (outs[i].path == "-")
      outs[i].is_stdout = true;
    else
      open_output(outs[i]);
  }
  // The temporaries, then what cannot be taken back.
  for (size_t i = 0; i < files.size(); ++i)
    if (!outs[i].in_place && !outs[i].is_stdout) write_and_flush(outs[i], files[i].second);
  for (size_t i = 0; i < files.size(); ++i)
    if (outs[i].in_place || outs[i].is_stdout) write_and_flush(outs[i], files[i].second);
  // Keep each replaced file under a second name until every rename worked.
  std::vector<std::string> kept(files.size());
  std::vector<int> kept_slots(files.size(), -1);
  struct ReleaseSlots {
    std::vector<int>& slots;
    ~ReleaseSlots() {
      for (int s : slots) unregister_temp(s);
    }
  } release_kept{kept_slots};
  // Puts the old files back; returns, for the message, where an old file
  // stays when putting it back failed (it is then not removed).
  auto roll_back = [&](size_t renamed) {
    std::string stranded;
    for (size_t i = 0; i < renamed; ++i) {
      if (outs[i].in_place || outs[i].is_stdout) continue;
      if (kept[i].empty()) {
        ::unlink(outs[i].target.c_str());
      } else if (::rename(kept[i].c_str(), outs[i].target.c_str()) != 0) {
        stranded +=
            "; the old " + outs[i].target + " could not be put back (" + errno_text() + ") and is kept as " + kept[i];
      }
    }
    for (size_t i = renamed; i < kept.size(); ++i)
      if (!kept[i].empty()) ::unlink(kept[i].c_str());
    return stranded;
  };
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].in_place || outs[i].is_stdout) continue;
    struct stat st;
    if (::lstat(outs[i].target.c_str(), &st) == 0) {
      std::string backup = dir_of(outs[i].target) + "/.bulkscore-old-XXXXXX";
      const int fd = ::mkstemp(backup.data());
      if (fd < 0 || ::close(fd) != 0 || ::unlink(backup.c_str()) != 0 ||
          ::link(outs[i].target.c_str(), backup.c_str()) != 0) {
        const std::string why = errno_text();
        throw Error(outs[i].path + ": cannot keep the old file aside: " + why + roll_back(0));
      }
      kept[i] = backup;
      kept_slots[i] = register_temp(backup);
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].in_place || outs[i].is_stdout) continue;
    if (::rename(outs[i].temp.c_str(), outs[i].target.c_str()) != 0) {
      const std::string why = errno_text();
      throw Error(outs[i].path + ": cannot rename into place: " + why + roll_back(i));
    }
    outs[i].renamed();
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].is_stdout) continue;
    if (!kept[i].empty()) ::unlink(kept[i].c_str());
    sync_dir(dir_of(outs[i].target));
  }
}

void check_output_name(const char* flag, const std::string& path) {
  if (path.empty()) throw InputError(std::string(flag) + ": an empty file name (leave the flag out for none)");
  for (const char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw InputError(std::string(flag) + ": the file name holds a control character (" + quote_for_message(path) + ")");
}

// Where an output will land, as one canonical name: its folder resolved
// (links, ".", "..") and the last component, so that two names of a file
// that does not exist yet compare equal.
std::string landing_name(const std::string& path) {
  const std::string target = resolve_output(path);
  char buf[PATH_MAX];
  const std::string dir = dir_of(target);
  const size_t slash = target.rfind('/');
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  return (::realpath(dir.c_str(), buf) ? std::string(buf) : dir) + "/" + base;
}

void check_output_paths(const std::vector<FlagPath>& outputs, const std::vector<FlagPath>& inputs) {
  for (const FlagPath& o : outputs) {
    check_output_name(o.flag.c_str(), o.path);
    if (o.path == "-") continue;
    // What the writer will meet at the end, found before the work starts.
    const std::string target = resolve_output(o.path);
    struct stat st;
    if (::stat(target.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) throw InputError(o.flag + ": " + quote_for_message(o.path, 200) + " is a directory");
    } else if (::stat(dir_of(target).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      throw InputError(o.flag + ": " + quote_for_message(o.path, 200) + ": no such folder: " +
                       quote_for_message(dir_of(target), 200));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const FlagPath& a = outputs[i];
      const FlagPath& b = outputs[j];
      if (a.path == "-" && b.path == "-")
        throw InputError(a.flag + " and " + b.flag + ": both would write to standard output");
      if (a.path != "-" && b.path != "-" &&
          (a.path == b.path || same_file(a.path, b.path) || landing_name(a.path) == landing_name(b.path)))
        throw InputError(quote_for_message(a.path, 200) + ": " + a.flag + " and " + b.flag + " name the same file");
    }
  for (const FlagPath& o : outputs)
    for (const FlagPath& in : inputs)
      if (!in.path.empty() && o.path != "-" && (o.path == in.path || same_file(o.path, in.path)))
        throw InputError(quote_for_message(o.path, 200) + ": the output would replace the " + in.flag + " input");
}

void install_output_signal_cleanup() {
  struct sigaction sa = {};
  sa.sa_handler = remove_temps_and_die;
  sigemptyset(&sa.sa_mask);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) static_cast<void>(sigaction(sig, &sa, nullptr));
  // A write past RLIMIT_FSIZE then fails with EFBIG instead of killing.
  static_cast<void>(std::signal(SIGXFSZ, SIG_IGN));
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (a == "-" || b == "-") return false;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace bulkscore
