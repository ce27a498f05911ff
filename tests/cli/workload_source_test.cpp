// The workload choice `kaleido sim` shares with `kaleido flow` (cli/workload_options.hpp):
// `kaleido sim --workload qk` runs the key tiles of an attention head bit-exact (the first
// detecting, the others with CTRL.KEEP on its decisions), the hardware
// sized by the model, and a workload that does not fit the hardware the user gave is refused
// before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/process.hpp"
#include "support/test_dir.hpp"
#include "support/tools.hpp"

namespace kaleido {
namespace {

// A 4x2 array and a 1x4x4 grid of CogVideoX's 64-channel heads: a quick Verilator build.
std::vector<std::string> small_sim(const std::filesystem::path& out) {
  return {KALEIDO_TEST_KALEIDO_BIN, "sim", "--rows", "4", "--cols", "2", "--hw-group-w", "4", "--hw-acc-w", "24",
          "--grid", "1x4x4", "--json", "-o", out.string()};
}

TEST(SimCli, QkWorkloadStreamsTheKeyTilesOfAnAttentionHead) {
  if (!testing::have_tool("verilator")) GTEST_SKIP() << "verilator missing (Debian package verilator)";
  testing::TestDir dir("sim_qk");
  std::vector<std::string> argv = small_sim(dir / "out");
  argv.insert(argv.end(), {"--workload", "qk", "--model", "cogvideox-5b", "--max-m", "4", "--key-tiles", "0"});
  const ProcessResult r = run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const nlohmann::json& w = j.at("workload");
  EXPECT_EQ(w.at("kind"), "qk");
  EXPECT_EQ(w.at("model"), "CogVideoX-5B");
  EXPECT_EQ(w.at("diffusion_step"), 47);  // the late step flow uses too
  // K from the model's head dimension, M = the MAX_M keys given; the rest fits the workload.
  EXPECT_EQ(j.at("reuse_config").at("K"), 64);
  EXPECT_EQ(j.at("reuse_config").at("M"), 4);
  EXPECT_EQ(j.at("reuse_config").at("band"), "cogvideox");
  EXPECT_EQ(j.at("config").at("max_k"), 64);
  EXPECT_EQ(j.at("config").at("max_m"), 4);
  EXPECT_EQ(j.at("config").at("max_h"), 4);
  EXPECT_TRUE(j.at("bit_exact").get<bool>());
  EXPECT_GT(j.at("skipped_fraction").get<double>(), 0.0);
  // Keys streamed: the 16 keys in 4 tiles of 4, the first detecting, the other three with
  // CTRL.KEEP on its decisions, each bit-exact against the golden model of its tile.
  const nlohmann::json& kept = j.at("kept_b_tiles");
  EXPECT_EQ(kept.at("tiles"), 4);
  ASSERT_EQ(kept.at("runs").size(), 3u);
  int64_t reuse_cycles = j.at("reuse").at("cycles").get<int64_t>();
  for (const nlohmann::json& run : kept.at("runs")) {
    EXPECT_TRUE(run.at("bit_exact").get<bool>());
    EXPECT_EQ(run.at("compared_outputs"), 16 * 4);
    EXPECT_EQ(run.at("compared_decisions"), 0);  // no detection
    reuse_cycles += run.at("cycles").get<int64_t>();
  }
  EXPECT_EQ(kept.at("reuse_cycles").get<int64_t>(), reuse_cycles);
  EXPECT_EQ(kept.at("dense_cycles").get<int64_t>(), 4 * j.at("dense").at("cycles").get<int64_t>());
}

TEST(SimCli, OptionsThatDoNotApplyOrDoNotFitAreRefused) {
  testing::TestDir dir("sim_refused");
  const struct {
    std::vector<std::string> extra;
    std::string message;
  } cases[] = {
      {{"--workload", "synthetic", "--clip", "cockatoo"}, "clip = cockatoo: applies to the clip workloads only"},
      {{"--diffusion-step", "10"}, "diffusion-step = 10: applies to the clip workloads only"},
      {{"--proxy", "raw"}, "proxy = raw: applies to --workload qk only"},
      {{"--clip", "cockatoo", "--model", "cogvideox-5b"}, "model = cogvideox-5b: applies to --workload qk only"},
      {{"--workload", "qk", "--clip", ""}, "the qk workload is built from a clip"},
      // Sizes the user gives are kept, not fitted over: K = 64 does not fit MAX_K 32.
      {{"--workload", "qk", "--model", "cogvideox-5b", "--max-k", "32"},
       "K = 64: exceeds the hardware's MAX_K = 32 (raise --max-k)"},
      {{"--max-m", "8", "-M", "16"}, "M = 16: exceeds the hardware's MAX_M = 8 (raise --max-m)"},
      {{"--key-tiles", "2"}, "key-tiles = 2: applies to --workload qk only"},
      {{"--workload", "qk", "--model", "cogvideox-5b", "--max-m", "4", "--key-tiles", "5"},
       "key-tiles = 5: 1 to the 4 whole tiles of 4 keys in N = 16 (0: all of them)"},
  };
  for (const auto& k : cases) {
    std::vector<std::string> argv = small_sim(dir / "out");
    argv.insert(argv.end(), k.extra.begin(), k.extra.end());
    const ProcessResult r = run_process(argv);
    EXPECT_EQ(r.exit_code, kExitUserError) << k.extra.front() << ": " << r.output;
    EXPECT_NE(r.output.find(k.message), std::string::npos) << k.extra.front() << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));  // refused before anything was built
}

}  // namespace
}  // namespace kaleido
