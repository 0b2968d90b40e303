// Running the bulkscore binary from a test: the command line, its exit
// status and what it wrote. Shared by the CLI tests (test_cli, test_replay)
// so that both read the process the same way.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace bulkscore::testutil {

struct CliRun {
  int exit_code;    // -1 when the process did not exit normally
  std::string out;  // what came back through the pipe (by default stdout and stderr)
};

// A shell command line (/bin/sh): its exit status and its standard output.
inline CliRun run_shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// `args` after the binary's path; `redirect`: the shell redirections of the
// process's output, by default stdout and stderr both come back.
inline CliRun run_cli(const std::string& args, const std::string& redirect = "2>&1") {
  return run_shell(std::string(BULKSCORE_CLI) + " " + args + " " + redirect);
}

// The binary run by the shell after `prefix` (e.g. "cd DIR &&", "env PATH=X").
inline CliRun run_cli_after(const std::string& prefix, const std::string& args, const std::string& redirect = "2>&1") {
  return run_shell(prefix + " " + std::string(BULKSCORE_CLI) + " " + args + " " + redirect);
}

}  // namespace bulkscore::testutil
