// File helpers: reading streams, atomic outputs, outputs written as a unit.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "host/common.hpp"
#include "host/input/k8s_json.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

std::string dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string d = ::testing::TempDir() + "bulkscore-io-" + info->name() + "-" + std::to_string(getpid());
  // Empty: a run whose process id came back would find its files (a link
  // already there made symlink fail).
  std::filesystem::remove_all(d);
  mkdir(d.c_str(), 0755);
  return d;
}

TEST(Io, ReadFileReadsRegularFilesAndRefusesDirectories) {
  const std::string d = dir();
  write_file_atomically(d + "/a.txt", "hello");
  EXPECT_EQ(read_file(d + "/a.txt"), "hello");
  EXPECT_THROW(read_file(d), InputError);
  EXPECT_THROW(read_file(d + "/missing"), InputError);
}

// Both files are written, or neither changes: the second target's folder
// does not exist, so the first keeps its old content.
TEST(Io, FilesWrittenAsAUnit) {
  const std::string d = dir();
  write_file_atomically(d + "/one", "old one");
  EXPECT_THROW(write_files_atomically({{d + "/one", "new one"}, {d + "/no-such-dir/two", "new two"}}), Error);
  EXPECT_EQ(read_file(d + "/one"), "old one");
  write_files_atomically({{d + "/one", "new one"}, {d + "/two", "new two"}});
  EXPECT_EQ(read_file(d + "/one"), "new one");
  EXPECT_EQ(read_file(d + "/two"), "new two");
  EXPECT_THROW(write_files_atomically({{d + "/one", "x"}, {d + "/one", "y"}}), InputError);
  EXPECT_EQ(read_file(d + "/one"), "new one");
  // No temporary or kept-aside file is left behind.
  EXPECT_EQ(std::system(("test -z \"$(ls -A " + d + " | grep bulkscore)\"").c_str()), 0);
}

// A device is written only once every file of the unit is ready, so a
// device that fails (here /dev/full) leaves the files as they were.
TEST(Io, DevicesAreWrittenAfterTheFilesAreReadyAndAFailureChangesNoFile) {
  const std::string d = dir();
  write_file_atomically(d + "/one", "old one");
  EXPECT_THROW(write_files_atomically({{d + "/one", "new one"}, {"/dev/full", "x"}}), Error);
  EXPECT_THROW(write_files_atomically({{"/dev/full", "x"}, {d + "/one", "new one"}}), Error);
  EXPECT_EQ(read_file(d + "/one"), "old one");
  EXPECT_THROW(write_files_atomically({{"-", "a"}, {"-", "b"}}), InputError);
  EXPECT_EQ(std::system(("test -z \"$(ls -A " + d + " | grep bulkscore)\"").c_str()), 0);
}

// Output names: empty ones and control characters (which would reach a
// message or a script) are refused; the checks before a run find two
// outputs on one file, an output on an input, a missing folder, a directory.
TEST(Io, OutputPathsAreCheckedBeforeTheWork) {
  const std::string d = dir();
  write_file_atomically(d + "/in.json", "{}");
  EXPECT_THROW(check_output_name("-o", ""), InputError);
  EXPECT_THROW(check_output_name("-o", "a\nb"), InputError);
  EXPECT_THROW(check_output_name("-o", std::string("a\x1b[2Jb")), InputError);
  EXPECT_NO_THROW(check_output_name("-o", "plain name with 'quotes' and spaces.png"));
  EXPECT_THROW(check_output_paths({{"-o", "-"}, {"--csv", "-"}}, {}), InputError);
  EXPECT_THROW(check_output_paths({{"-o", d + "/x"}, {"--csv", d + "/./x"}}, {}), InputError);
  EXPECT_THROW(check_output_paths({{"-o", d + "/in.json"}}, {{"--pods", d + "/in.json"}}), InputError);
  ASSERT_EQ(symlink((d + "/in.json").c_str(), (d + "/link").c_str()), 0);
  EXPECT_THROW(check_output_paths({{"-o", d + "/link"}}, {{"--pods", d + "/in.json"}}), InputError);
  EXPECT_THROW(check_output_paths({{"-o", d + "/no-such-dir/x"}}, {}), InputError);
  EXPECT_THROW(check_output_paths({{"-o", d}}, {}), InputError);
  EXPECT_NO_THROW(check_output_paths({{"-o", d + "/new"}, {"--metrics", "/dev/null"}}, {{"--pods", "-"}}));
}

// /proc and sysfs files report size 0 and hold more: they are read to
// their end, not taken as empty.
TEST(Io, ProcFilesAreReadToTheEnd) {
  EXPECT_FALSE(read_file("/proc/self/status").empty());
  try {
    static_cast<void>(load_nodes_json("/proc/self/status"));
    FAIL() << "not JSON";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find("no JSON found"), std::string::npos) << e.what();
  }
}

TEST(Io, SameFileSeesThroughLinks) {
  const std::string d = dir();
  write_file_atomically(d + "/f", "x");
  ASSERT_EQ(symlink((d + "/f").c_str(), (d + "/l").c_str()), 0);
  EXPECT_TRUE(same_file(d + "/f", d + "/l"));
  EXPECT_FALSE(same_file(d + "/f", d + "/missing"));
}

}  // namespace
}  // namespace bulkscore
