// The `kaleido golden` command end to end: outputs, exit codes, no partial files.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "common/atomic_file.hpp"
#include "golden/vectors.hpp"
#include "helpers.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;
using testing::temp_path;

struct CliRun {
  int status;
  std::string output;
};

CliRun kaleido(const std::string& args) {
  const std::string log = temp_path("cli.log");
  const std::string cmd = std::string(KALEIDO_TEST_KALEIDO_BIN) + " " + args + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  CliRun r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(log)};
  fs::remove(log);
  return r;
}

TEST(Cli, VersionAndHelp) {
  EXPECT_EQ(kaleido("--version").status, 0);
  const CliRun h = kaleido("golden --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.output.find("--grid"), std::string::npos);
}

TEST(Cli, GoldenWritesReadableVectorsAndASummary) {
  const std::string out = temp_path("cli.kvec");
  const CliRun r = kaleido("golden --grid 2x4x4 -K 16 -M 4 --tau 20 -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("reuse ratio"), std::string::npos);
  EXPECT_NE(r.output.find("error bound   holds"), std::string::npos);
  EXPECT_NE(r.output.find("quality       SNR "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(peak "), std::string::npos) << r.output;
  const GoldenVectors v = read_vectors(out);
  EXPECT_EQ(v.config.grid.tokens(), 32);
  EXPECT_EQ(v.config.tau, (std::vector<uint32_t>{20, 20}));
  fs::remove(out);
}

TEST(Cli, DefaultsShowReuseAtWorkAtAGoodSnr) {
  // No option at all: thresholds calibrated for 30 dB of output SNR on the default (static-background,
  // late-step-like) synthetic workload; a new user sees about half the pairs reused.
  const std::string out = temp_path("default.kvec");
  const CliRun r = kaleido("golden --json -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NE(j["workload"]["thresholds"].get<std::string>().find("default: calibrated for output SNR 30.0 dB"),
            std::string::npos);
  const auto& c = j["counters"];
  const double ratio = c["reused_pairs"].get<double>() / c["pairs"].get<double>();
  EXPECT_GE(ratio, 0.3);
  EXPECT_GE(j["quality"]["snr_db"].get<double>(), 30.0);
  EXPECT_EQ(j["error_bound_violations"].get<int>(), 0);
  fs::remove(out);
  // Two threshold sources are refused.
  const CliRun two = kaleido("golden --tau 4 --target-snr 20 -o " + out);
  EXPECT_NE(two.status, 0);
  EXPECT_NE(two.output.find("give only one of"), std::string::npos) << two.output;
}

TEST(Cli, ConfigFileSetsOptionsAndTheCommandLineOverrides) {
  const std::string out = temp_path("cfg.kvec"), json = temp_path("cfg.json"), toml = temp_path("cfg.toml");
  write_file_atomic(json, R"({"golden": {"grid": "2x2x2", "channels": 8, "out-cols": 2, "tau": 3}})");
  ASSERT_EQ(kaleido("--config " + json + " golden --tau 5 -o " + out).status, 0);
  GoldenVectors v = read_vectors(out);
  EXPECT_EQ(v.config.grid.tokens(), 8);
  EXPECT_EQ(v.config.channels, 8);
  EXPECT_EQ(v.config.tau, (std::vector<uint32_t>{5}));
  write_file_atomic(toml, "[golden]\ngrid = \"3x2x2\"\nchannels = 8\ntau = 3\n");
  ASSERT_EQ(kaleido("--config " + toml + " golden -o " + out).status, 0);
  v = read_vectors(out);
  EXPECT_EQ(v.config.grid.tokens(), 12);
  EXPECT_EQ(v.config.tau, (std::vector<uint32_t>{3}));
  for (const auto& p : {out, json, toml}) fs::remove(p);
}

TEST(Cli, BadInputGivesAClearErrorNonZeroExitAndNoFile) {
  const std::string out = temp_path("never.kvec");
  const std::pair<const char*, const char*> cases[] = {
      {"--grid 0x4x4", "T, H and W must be at least 1"},
      {"--grid 2x-1x4", "T, H and W must be at least 1"},
      {"-K 12 --group-w 8", "Gw = 8: must divide K = 12"},
      {"--data-w 20", "DATA_W = 20: must be 4 to 16"},
      {"-K 32 --tau 1,2,3", "tau = 3 values: needs one threshold per group (4)"},
      {"--tau-schedule /nonexistent/tau.csv", "/nonexistent/tau.csv: does not exist"},
      {"--policy sideways", "policy = sideways"},
  };
  for (const auto& [args, expect] : cases) {
    const CliRun r = kaleido(std::string("golden ") + args + " -o " + out);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.output.find(expect), std::string::npos) << args << " -> " << r.output;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const CliRun r = kaleido("golden -o /nonexistent-dir/x.kvec");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kaleido
