// Writing a design: one file per module, all or nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/atomic_file.hpp"
#include "examples.hpp"

namespace kaleido::vlog {
namespace {

using namespace testing;

Design two_module_design() {
  Design d(golden_header({{"STAGES", "4"}, {"DATA_W", "4"}}));
  build_delay_line(d);
  return d;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(VlogWrite, NewFolderGetsOneFilePerModule) {
  const fs::path dir = temp_dir("write_new");
  const Design d = two_module_design();
  const auto written = d.write(dir);
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"delay_line.v", "dff_cell.v"}));
  const auto files = d.emit();
  EXPECT_EQ(read_file(dir / "dff_cell.v"), files[0].text);
  EXPECT_EQ(read_file(dir / "delay_line.v"), files[1].text);
  for (const std::string& n : listing(dir.parent_path()))
    EXPECT_EQ(n.find(dir.filename().string() + ".vlog-staging"), std::string::npos) << "staging left behind: " << n;
  fs::remove_all(dir);
}

TEST(VlogWrite, TrailingSlashNamesTheFolder) {
  const fs::path dir = temp_dir("write_slash");
  two_module_design().write(dir.string() + "/");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"delay_line.v", "dff_cell.v"}));
  fs::remove_all(dir);
}

TEST(VlogWrite, ExistingFolderKeepsOtherFilesAndReplacesOurs) {
  const fs::path dir = temp_dir("write_existing");
  fs::create_directories(dir);
  write_file_atomic(dir / "notes.txt", "keep me\n");
  write_file_atomic(dir / "dff_cell.v", "old text\n");
  const Design d = two_module_design();
  d.write(dir);
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"delay_line.v", "dff_cell.v", "notes.txt"}));
  EXPECT_EQ(read_file(dir / "notes.txt"), "keep me\n");
  EXPECT_EQ(read_file(dir / "dff_cell.v"), d.emit()[0].text);
  fs::remove_all(dir);
}

TEST(VlogWrite, UnwritableFolderGivesFileErrorAndNoOutput) {
  const fs::path base = temp_dir("write_unwritable");
  fs::create_directories(base);
  write_file_atomic(base / "plain_file", "x\n");
  const Design d = two_module_design();
  // A folder below a regular file can never be created, even by root.
  EXPECT_THROW(d.write(base / "plain_file" / "rtl"), FileError);
  EXPECT_EQ(listing(base), std::vector<std::string>{"plain_file"});
  // A target path that is a folder: nothing is replaced or added.
  const fs::path dir = base / "rtl";
  fs::create_directories(dir / "delay_line.v");
  write_file_atomic(dir / "dff_cell.v", "old text\n");
  try {
    d.write(dir);
    ADD_FAILURE() << "no FileError";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("delay_line.v"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(dir / "dff_cell.v"), "old text\n");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"delay_line.v", "dff_cell.v"}));
  fs::remove_all(base);
}

TEST(VlogWrite, ReadOnlyFolderGivesFileErrorAndNoOutput) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not stop writes (covered by the test above)";
  const fs::path dir = temp_dir("write_readonly");
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0555);
  const Design d = two_module_design();
  EXPECT_THROW(d.write(dir), FileError);
  EXPECT_TRUE(listing(dir).empty());
  ::chmod(dir.c_str(), 0755);
  fs::remove_all(dir);
}

TEST(VlogWrite, CheckFailureWritesNothing) {
  const fs::path dir = temp_dir("write_invalid");
  Design d(golden_header());
  Module& m = d.add_module("broken");
  m.input("a_i", 8);
  m.output("y_o", 8);  // never driven
  EXPECT_THROW(d.write(dir), BuildError);
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace kaleido::vlog
