// `kaleido flow`'s workload choice through the command line: the default workload is two key
// tiles of an attention head's Q K^T (the second with CTRL.KEEP), sized by the model, and options
// that do not apply to the chosen workload are refused.
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

// A 4x2 array for a 1x4x4 token grid and CogVideoX's 64-channel heads (MAX_K follows the
// model's head dimension), with room for 4 keys: small enough for a quick Verilator build.
std::vector<std::string> small_flow(const testing::TestDir& dir, bool model = true) {
  std::vector<std::string> argv{
      KALEIDO_TEST_KALEIDO_BIN, "flow", "--rows", "4", "--cols", "2", "--hw-group-w", "4", "--hw-acc-w", "24",
      "--max-t", "1", "--max-h", "4", "--max-w", "4", "--max-m", "4", "--win-cap", "16",
      "--grid", "1x4x4", "--no-lint", "--no-synth", "--json",
      "--work", (dir / "work").string(), "--report", (dir / "report").string()};
  if (model) argv.insert(argv.end(), {"--model", "cogvideox-5b"});
  return argv;
}

TEST(FlowCli, DefaultWorkloadIsTheKeyTilesOfAnAttentionHead) {
  if (!testing::have_tool("verilator")) GTEST_SKIP() << "verilator missing (Debian package verilator)";
  testing::TestDir dir("flow_qk");
  const ProcessResult r = run_process(small_flow(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const nlohmann::json& w = j.at("workload");
  EXPECT_EQ(w.at("kind"), "qk");
  EXPECT_EQ(w.at("model"), "CogVideoX-5B");
  EXPECT_EQ(w.at("proxy"), "denoised");
  EXPECT_EQ(w.at("diffusion_step"), 47);  // a late step: sigma 0.24
  EXPECT_LT(w.at("sigma").get<double>(), 0.3);
  // K is the head dimension (not --channels' default 32), M the array's MAX_M keys of the 16.
  const nlohmann::json& c = j.at("reuse_config");
  EXPECT_EQ(c.at("K"), 64);
  EXPECT_EQ(c.at("M"), 4);
  EXPECT_EQ(j.at("hw").at("max_k"), 64);  // not the main job's 128: sized by --model
  EXPECT_EQ(c.at("band"), "cogvideox");  // the model's RoPE bands for the rope-orthogonal policy
  // Two key tiles of 4: the first detects, the next runs with CTRL.KEEP on its decisions.
  EXPECT_EQ(w.at("keys").get<std::string>().rfind("0..7 of 16 in 2 tiles", 0), 0u) << w.at("keys");
  // No threshold option: calibrated for the shared default output SNR, and reached.
  EXPECT_NE(w.at("thresholds").get<std::string>().find("calibrated for output SNR 30.0 dB"), std::string::npos)
      << w.at("thresholds");
  const nlohmann::json& h = j.at("headline");
  EXPECT_TRUE(h.at("bit_exact").get<bool>());
  EXPECT_GE(h.at("snr_db").get<double>(), 30.0);
  EXPECT_GT(h.at("reuse_ratio").get<double>(), 0.0);
  EXPECT_LE(h.at("speedup").get<double>(), h.at("ideal_speedup").get<double>());
  const nlohmann::json& kept = j.at("simulation").at("kept_b_tiles");
  ASSERT_EQ(kept.at("runs").size(), 1u);
  EXPECT_TRUE(kept.at("runs")[0].at("bit_exact").get<bool>());
  EXPECT_GE(h.at("speedup_kept_tile").get<double>(), h.at("speedup").get<double>());  // no detection to wait for
}

TEST(FlowCli, WorkloadOptionsThatDoNotApplyAreRefused) {
  testing::TestDir dir("flow_refused");
  const struct {
    std::vector<std::string> extra;
    std::string message;
  } cases[] = {
      {{"--workload", "dense"}, "must be qk, latent or synthetic"},
      {{"--clip", ""}, "the qk workload is built from a clip"},  // --clip '' with an explicit --workload qk below
      {{"--workload", "latent", "--proxy", "raw"}, "proxy = raw: applies to --workload qk only"},
      {{"--workload", "latent"}, "model = cogvideox-5b: applies to --workload qk only"},
      {{"--workload", "synthetic", "--diffusion-step", "10"}, "applies to the clip workloads only"},
      {{"--channels", "32"}, "CogVideoX-5B's head dimension, 64"},
      {{"--out-cols", "17"}, "1 to N = 16 keys"},
      {{"--window", "20"}, "window depth = 20: exceeds the hardware's WIN_CAP = 16"},
      {{"--out-cols", "16", "--key-tiles", "2"}, "key-tiles = 2: 1 to the 1 whole tiles of 16 keys in N = 16"},
  };
  for (const auto& k : cases) {
    std::vector<std::string> argv = small_flow(dir);
    argv.insert(argv.end(), k.extra.begin(), k.extra.end());
    if (k.extra.front() == "--clip") argv.insert(argv.end(), {"--workload", "qk"});
    const ProcessResult r = run_process(argv);
    EXPECT_EQ(r.exit_code, kExitUserError) << k.extra.front() << ": " << r.output;
    EXPECT_NE(r.output.find(k.message), std::string::npos) << k.extra.front() << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "report"));
  EXPECT_FALSE(std::filesystem::exists(dir / "work"));  // refused before any stage ran
}

}  // namespace
}  // namespace kaleido
