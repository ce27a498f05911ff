// The process runner: argument vectors reach the program verbatim (no shell),
// output is captured, time limits end the program, and failures name the
// command.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "support/test_dir.hpp"

namespace kaleido {
namespace {

TEST(Process, CapturesStdoutAndStderrAndTheExitCode) {
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err 1>&2; exit 4"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_EQ(exit_text(r), "exit 4");
}

TEST(Process, ArgumentsArePassedVerbatimWithoutAShell) {
  const ProcessResult r = run_process({"printf", "[%s]\\n", "a b", "'c'", "$HOME", "*", ""});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "[a b]\n['c']\n[$HOME]\n[*]\n[]\n");
}

TEST(Process, RunsInTheWorkFolderWithExtraEnvironmentAndWritesTheLog) {
  testing::TestDir dir("process_env");
  ProcessOptions opt;
  opt.workdir = dir.path();
  opt.log = dir / "run.log";
  opt.env = {{"KALEIDO_PROCESS_TEST", "value 1"}};
  const ProcessResult r = run_process({"sh", "-c", "pwd; echo \"$KALEIDO_PROCESS_TEST\""}, opt);
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, std::filesystem::canonical(dir.path()).string() + "\nvalue 1\n");
  EXPECT_EQ(read_file(dir / "run.log"), r.output);
}

TEST(Process, LargeOutputIsCapturedWhole) {
  const ProcessResult r = run_process({"sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output.substr(0, 6), "line0\n");
  EXPECT_EQ(tail_lines(r.output, 1), "line19999\n");
  size_t lines = 0;
  for (char c : r.output) lines += c == '\n';
  EXPECT_EQ(lines, 20000u);
}

TEST(Process, ATimeoutEndsTheProgramAndWhatItStarted) {
  testing::TestDir dir("process_timeout");
  ProcessOptions opt;
  opt.timeout_s = 0.2;
  // The background child would write the marker after 2 s if it survived the timeout.
  const std::string marker = (dir / "survived").string();
  const ProcessResult r = run_process({"sh", "-c", "(sleep 2; touch '" + marker + "') & sleep 30"}, opt);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(exit_text(r).find("timed out"), std::string::npos);
  run_process({"sleep", "3"});
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(Process, AProgramThatIsNotThereIsAnErrorNamingIt) {
  try {
    run_process({"kaleido-no-such-program", "--flag"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kaleido-no-such-program --flag"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(which("kaleido-no-such-program").has_value());
  try {
    find_program("kaleido-no-such-program", "kaleido-pkg");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install kaleido-pkg"), std::string::npos) << e.what();
  }
}

TEST(Process, AMissingWorkFolderIsAnErrorNamingIt) {
  ProcessOptions opt;
  opt.workdir = "/nonexistent/kaleido/folder";
  try {
    run_process({"true"}, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kaleido/folder"), std::string::npos) << e.what();
  }
}

TEST(Process, RunCheckedThrowsWithTheCommandStatusAndOutputTail) {
  EXPECT_EQ(run_checked({"sh", "-c", "echo fine"}).output, "fine\n");
  try {
    run_checked({"sh", "-c", "echo first; echo last words; exit 7"});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sh -c 'echo first; echo last words; exit 7'"), std::string::npos) << m;
    EXPECT_NE(m.find("exit 7"), std::string::npos) << m;
    EXPECT_NE(m.find("last words"), std::string::npos) << m;
  }
}

TEST(Process, CommandTextQuotesOnlyWhereNeeded) {
  EXPECT_EQ(command_text({"yosys", "-q", "-l", "/a/b.log"}), "yosys -q -l /a/b.log");
  EXPECT_EQ(command_text({"echo", "a b", "it's", ""}), "echo 'a b' 'it'\\''s' ''");
}

TEST(Process, KilledBySignalIsReportedAsSuch) {
  const ProcessResult r = run_process({"sh", "-c", "kill -9 $$"});
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_EQ(exit_text(r), "killed by signal 9");
}

TEST(Errors, InternalErrorsAreNotUserErrors) {
  const InternalError e("table out of order");
  EXPECT_EQ(std::string(e.what()), "internal: table out of order");
  EXPECT_EQ(dynamic_cast<const Error*>(static_cast<const std::exception*>(&e)), nullptr);
  EXPECT_NE(kExitUserError, kExitInternalError);
}

}  // namespace
}  // namespace kaleido
