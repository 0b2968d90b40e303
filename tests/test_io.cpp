// File helpers: reading streams, atomic outputs, outputs written as a unit.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "host/common.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

std::string dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string d = ::testing::TempDir() + "bulkscore-io-" + info->name() + "-" + std::to_string(getpid());
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

TEST(Io, SameFileSeesThroughLinks) {
  const std::string d = dir();
  write_file_atomically(d + "/f", "x");
  ASSERT_EQ(symlink((d + "/f").c_str(), (d + "/l").c_str()), 0);
  EXPECT_TRUE(same_file(d + "/f", d + "/l"));
  EXPECT_FALSE(same_file(d + "/f", d + "/missing"));
}

}  // namespace
}  // namespace bulkscore
