// `kaleido study` end to end on a small clip written by the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "golden/random.hpp"
#include "helpers.hpp"
#include "workload/npy.hpp"

namespace kaleido::study {
using namespace kaleido::workload;  // the workload module holds the clips and the proxy
namespace {

namespace fs = std::filesystem;
using testing::run_kaleido;
using testing::temp_path;

TEST(StudyCli, SmallStudyWritesEveryOutput) {
  const std::string clip = temp_path("clip.y4m"), other = temp_path("other.y4m"), out = temp_path("out");
  write_y4m(clip, testing::static_background_video(128, 128, 17, 32, 2, 3));
  write_y4m(other, testing::static_background_video(128, 128, 17, 64, 1, 4));
  const auto r = run_kaleido("study --clip " + clip + " --spectrum-clip " + other +
                             " --resolution 128x128 --frames 17 --steps 20,45 --rows 64 "
                             "--points 3 --targets 0.5 --methods channel-reuse,token-reuse,spade-style,sliding-tile-style,"
                             "scalingattention-style --threads 2 -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("[study"), std::string::npos);  // progress lines
  EXPECT_NE(r.output.find("no model weights are available"), std::string::npos);
  const std::string tag = fs::path(clip).stem().string();  // the clip's name in plot file names
  for (const std::string& f : {std::string("summary.md"), std::string("study.json"), std::string("points.csv"),
                              std::string("equal_savings.csv"), std::string("gaps.csv"), std::string("reuse_groups.csv"),
                              std::string("projection.csv"),
                              "quality_" + tag + "_raw_step20.svg", "quality_qk_" + tag + "_denoised_step45.svg",
                              "scores_" + tag + "_raw_step20.svg", "reuse_groups_" + tag + "_denoised.svg"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  const auto j = nlohmann::json::parse(read_file(fs::path(out) / "study.json"));
  EXPECT_EQ(j["tokens"].get<int>(), 5 * 8 * 8);
  EXPECT_EQ(j["steps"].size(), 4u);  // two steps, two proxies
  EXPECT_EQ(j["options"]["proxies"], nlohmann::json({"raw", "denoised"}));
  EXPECT_NE(j["spectrum_source"].get<std::string>().find("other"), std::string::npos);
  EXPECT_FALSE(j["gaps"].empty());
  EXPECT_FALSE(j["projection"].empty());
  EXPECT_NE(j["proxy_statement"].get<std::string>().find("No model weights"), std::string::npos);
  // The calibrated threshold schedule is a file the golden model reads (Wan2.1 head: K = 128, 16 groups of 8).
  const fs::path schedule = fs::path(out) / ("tau_schedule_" + tag + "_denoised.csv");
  ASSERT_TRUE(fs::exists(schedule));
  const auto golden = run_kaleido("golden --grid 2x4x4 -K 128 -M 8 --tau-schedule " + schedule.string() +
                                  " --step 45 -o " + (fs::path(out) / "g.kvec").string());
  EXPECT_EQ(golden.status, 0) << golden.output;
  EXPECT_NE(golden.output.find("schedule"), std::string::npos) << golden.output;
  const auto& snr = j["steps"][0]["calibrated"]["snr_out_db"];  // null when infinite (nothing reused)
  EXPECT_TRUE(snr.is_null() || snr.get<double>() >= 30.0) << snr;
  const std::string md = read_file(fs::path(out) / "summary.md");
  EXPECT_NE(md.find("**No model weights are available here"), std::string::npos);
  EXPECT_NE(md.find("SNR gap at equal MAC savings"), std::string::npos);
  for (const auto& g : j["gaps"]) {  // the gap is on output SNR
    if (!g["gap_db"].is_null()) {
      EXPECT_NEAR(g["gap_db"].get<double>(), g["reuse_snr_db"].get<double>() - g["best_peer_snr_db"].get<double>(), 1e-9);
    }
  }
  // Whole-run means (two steps here): each trajectory row is the mean of its per-step target records.
  ASSERT_FALSE(j["trajectory"]["rows"].empty());
  int averaged = 0;
  for (const auto& row : j["trajectory"]["rows"]) {
    int steps = 0, reached = 0;
    double savings = 0, snr_sum = 0;
    for (const auto& e : j["equal_savings"]) {
      if (e["clip"] != row["clip"] || e["proxy"] != row["proxy"] || e["method"] != row["method"] ||
          e["basis"] != row["basis"] || e["target"] != row["target"])
        continue;
      ++steps;
      if (!e["reached"].get<bool>()) continue;
      ++reached;
      savings += e["achieved"].get<double>();
      snr_sum += e["snr_out_db"].get<double>();
    }
    EXPECT_EQ(row["steps"].get<int>(), steps);
    EXPECT_EQ(row["steps_reached"].get<int>(), reached);
    if (reached == 0 || row["mean_snr_out_db"].is_null()) continue;
    EXPECT_NEAR(row["mean_savings"].get<double>(), savings / reached, 1e-12);
    EXPECT_NEAR(row["mean_snr_out_db"].get<double>(), snr_sum / reached, 1e-9);
    averaged += reached == 2;
  }
  EXPECT_GT(averaged, 0);
  EXPECT_NE(md.find("## Whole trajectory"), std::string::npos);
  for (const auto& p : j["points"]) {  // every quality figure: SNR, relative L2, cosine, PSNR with its peak
    EXPECT_TRUE(p["out"].contains("snr_db") && p["out"].contains("rel_l2") && p["out"].contains("psnr_peak"));
    break;
  }
  fs::remove_all(out);
  fs::remove(clip);
  fs::remove(other);
}

TEST(StudyCli, BrokenInputsGiveAClearErrorAndNonZeroExit) {
  const std::string clip = temp_path("cut.y4m"), out = temp_path("never");
  write_y4m(clip, testing::random_video(128, 128, 17, Chroma::C420, "420jpeg", 1));
  const std::string bytes = read_file(clip);
  write_file_atomic(clip, bytes.substr(0, bytes.size() - 1000));
  auto r = run_kaleido("study --clip " + clip + " --resolution 128x128 --frames 17 -o " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("frame 16 is truncated"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "summary.md"));
  r = run_kaleido("study --model sora -o " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("model = sora: must be one of"), std::string::npos) << r.output;
  r = run_kaleido("study --clip " + clip + " --frames 18 -o " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("4k+1"), std::string::npos) << r.output;
  r = run_kaleido("study --methods magic -o " + out);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("methods = magic"), std::string::npos) << r.output;
  fs::remove(clip);
}

TEST(StudyCli, RunsOnRealActivationsFromNpy) {
  // CogVideoX-5B head dim 64, a 2 x 4 x 4 grid of "dumped" activations.
  const std::string q = temp_path("q.npy"), k = temp_path("k.npy"), v = temp_path("v.npy"), out = temp_path("npy_out");
  Rng rng(8);
  for (const auto& p : {q, k, v}) {
    std::vector<float> data(32 * 64);
    for (auto& x : data) x = static_cast<float>(rng.normal());
    write_npy(p, {32, 64}, data);
  }
  const auto r = run_kaleido("study --model cogvideox-5b --q-npy " + q + " --k-npy " + k + " --v-npy " + v +
                             " --npy-grid 2x4x4 --methods channel-reuse,veda-style,sliding-tile-style --points 3 "
                             "--targets 0.5 -q -o " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(fs::path(out) / "study.json"));
  EXPECT_EQ(j["tokens"].get<int>(), 32);
  EXPECT_NE(j["clips"][0]["source"].get<std::string>().find("real activations"), std::string::npos);
  EXPECT_FALSE(j.contains("projection"));  // no token features behind real activations
  const auto bad = run_kaleido("study --model wan2.1-1.3b --q-npy " + q + " --k-npy " + k + " --v-npy " + v +
                               " --npy-grid 2x4x4 -q -o " + out);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("the model d = 128"), std::string::npos) << bad.output;
  fs::remove_all(out);
  for (const auto& p : {q, k, v}) fs::remove(p);
}

TEST(StudyCli, ListsModelShapes) {
  const auto r = run_kaleido("study --list-models");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["resolutions"][0]["token_count"].get<int>(), 32760);
}

}  // namespace
}  // namespace kaleido::study
