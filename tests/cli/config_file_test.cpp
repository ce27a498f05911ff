// `kaleido --config FILE`: the file is read strictly through the built
// binary; every bad file gives a message naming the file, line, key and
// nearest valid key, and a non-zero exit.
#include <gtest/gtest.h>

#include <string>

#include "common/atomic_file.hpp"
#include "common/process.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

struct Case {
  const char* file_name;
  const char* text;
  const char* message;  // expected part of the error
};

ProcessResult run_with_config(const testing::TestDir& dir, const std::string& name, const std::string& text) {
  const std::string file = (dir / name).string();
  write_file_atomic(file, text);
  return run_process({KALEIDO_TEST_KALEIDO_BIN, "--config", file, "golden", "-o", (dir / "out.kvec").string()});
}

TEST(ConfigFile, EachBadFileGivesItsMessageAndANonZeroExit) {
  const Case cases[] = {
      {"bad.toml", "[golden", "bad.toml:1: [golden: a section header must end with ]"},
      {"misspelt.toml", "[golden]\nchanels = 5\n",
       "misspelt.toml:2: chanels: unknown key in [golden]; did you mean channels?"},
      {"section.toml", "# a comment\n[glden]\nchannels = 8\n", "section.toml:2: [glden]: unknown section"},
      {"section2.toml", "[glden]\nchannels = 8\n", "did you mean golden?"},
      {"type.toml", "[golden]\nchannels = \"many\"\n",
       "type.toml:2: channels = many: wrong type in [golden]: expected an integer, got a string"},
      {"float.toml", "[golden]\nchannels = 2.5\n", "float.toml:2: channels = 2.5: wrong type in [golden]"},
      {"bare.toml", "[golden]\ngrid = 4x8x8\n", "bare.toml:2: grid: `4x8x8` is not a TOML value (strings need quotes"},
      {"twice.toml", "[golden]\nchannels = 8\nchannels = 16\n", "twice.toml:3: channels: given twice (first on line 2)"},
      {"noeq.toml", "[golden]\nchannels\n", "noeq.toml:2: channels: expected `key = value` or a [section]"},
      {"top.toml", "channels = 8\n", "top.toml:1: channels: unknown key at the top of the file"},
      {"array.toml", "[golden]\nchannels = [8, 16\n", "array.toml:2: channels: an array is not closed with ]"},
      {"negative.toml", "[golden]\nseed = -3\n", "negative.toml:2: seed = -3: must be a non-negative integer in [golden]"},
      {"list.toml", "[golden]\nchannels = [8, 16]\n", "list.toml:2: channels: wrong type in [golden]: expected one "
                                                      "integer, got a list"},
      {"flag.toml", "[golden]\njson = 3\n", "flag.toml:2: json = 3: wrong type in [golden]: expected a boolean"},
      {"command.toml", "golden = 1\n", "command.toml:1: golden: names a command"},
      {"bad.json", "{\"golden\": {\"channels\": 8,}\n}", "bad.json:1: (syntax): not valid JSON"},
      {"bad2.json", "{\"golden\":\n {\"channels\": 8\n", "bad2.json:3: (syntax): not valid JSON"},
      {"misspelt.json", "{\"golden\": {\"chanels\": 8}}",
       "misspelt.json: chanels: unknown key in [golden]; did you mean channels?"},
      {"type.json", "{\"golden\": {\"channels\": \"8x\"}}",
       "type.json: channels = 8x: wrong type in [golden]: expected an integer, got a string"},
      {"section.json", "{\"glden\": {\"channels\": 8}}", "section.json: [glden]: unknown section"},
      {"bool.json", "{\"golden\": {\"channels\": true}}", "expected an integer, got boolean"},
  };
  testing::TestDir dir("config_file");
  for (const Case& c : cases) {
    const ProcessResult r = run_with_config(dir, c.file_name, c.text);
    EXPECT_NE(r.exit_code, 0) << c.file_name << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos)
        << c.file_name << ": expected \"" << c.message << "\" in:\n"
        << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.kvec")) << c.file_name;
  }
}

TEST(ConfigFile, ValidFilesStillWork) {
  testing::TestDir dir("config_ok");
  const char* toml =
      "# options for two commands\n"
      "[golden]\n"
      "grid = \"2x2x2\"   # TxHxW\n"
      "channels = 8\n"
      "tau = [3]\n"
      "json = false\n"
      "\n"
      "[gen]\n"
      "rows = 4\n";
  ProcessResult r = run_with_config(dir, "ok.toml", toml);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.kvec"));
  std::filesystem::remove(dir / "out.kvec");
  r = run_with_config(dir, "ok.json", R"({"golden": {"grid": "2x2x2", "channels": 8, "tau": [3, 3]}})");
  EXPECT_NE(r.exit_code, 0);  // two thresholds for one group: the command's own check, not the reader's
  EXPECT_EQ(r.output.find("unknown key"), std::string::npos) << r.output;
  r = run_with_config(dir, "ok2.json", R"({"golden": {"grid": "2x2x2", "channels": 8, "tau": [3]}})");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace kaleido
