// Drawing with gnuplot without handing it a name: see gnuplot.hpp.
#include "bench/replay/gnuplot.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "host/common.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {

// Runs gnuplot (found on PATH, no shell in between) with `script` on its
// standard input and returns what it writes on its standard output: the
// PNG. The script names no file at all (the data is a datablock inside
// it, the output is standard output), so no name a user chose ever
// reaches gnuplot, and nothing is written until the CLI's one writer
// writes the PNG with the other outputs. Throws Error (exit 1) with
// gnuplot's own message when it cannot start or fails.
std::string run_gnuplot(const std::string& script) {
  int to_child[2], from_child[2], err_child[2];
  if (pipe(to_child) != 0) throw Error("--plot: cannot make a pipe to gnuplot");
  if (pipe(from_child) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    throw Error("--plot: cannot make a pipe to gnuplot");
  }
  if (pipe(err_child) != 0) {
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    throw Error("--plot: cannot make a pipe to gnuplot");
  }
  const pid_t child = fork();
  if (child < 0) {
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], err_child[0], err_child[1]}) close(fd);
    throw Error("--plot: cannot start gnuplot");
  }
  if (child == 0) {
    // The child: only async-signal-safe calls until exec.
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    dup2(err_child[1], STDERR_FILENO);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], err_child[0], err_child[1]}) close(fd);
    execlp("gnuplot", "gnuplot", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  close(err_child[1]);
  // Feed the script and drain both outputs at once: gnuplot may write
  // before it has read everything, and a full pipe must not stall either.
  // SIGPIPE is ignored by the CLI: a gnuplot that exits early makes write fail.
  std::string png, messages;
  size_t at = 0;
  int in_fd = to_child[1];
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3];
    nfds_t n = 0;
    if (out_open) fds[n++] = {from_child[0], POLLIN, 0};
    if (err_open) fds[n++] = {err_child[0], POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_fd) {
        const ssize_t w = write(in_fd, script.data() + at, script.size() - at);
        if (w > 0) at += static_cast<size_t>(w);
        if ((w < 0 && errno != EINTR && errno != EAGAIN) || at == script.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[1 << 15];
      const ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        (fds[i].fd == from_child[0] ? png : messages).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        (fds[i].fd == from_child[0] ? out_open : err_open) = false;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(from_child[0]);
  close(err_child[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!exited_ok || at != script.size() || png.empty()) {
    std::string why = WIFEXITED(status) ? (WEXITSTATUS(status) == 127 ? std::string("could not be started")
                                                                       : "exit status " +
                                                                             std::to_string(WEXITSTATUS(status)))
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
    if (exited_ok && png.empty()) why = "it drew nothing";
    while (!messages.empty() && (messages.back() == '\n' || messages.back() == ' ')) messages.pop_back();
    if (!messages.empty()) why += ": " + quote_for_message(messages, 400);
    throw Error("--plot: gnuplot failed (" + why + "); nothing was written");
  }
  return png;
}

}  // namespace bulkscore
