// Golden-vector files: round trip, and rejection of bad files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/vectors.hpp"
#include "helpers.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;
using testing::random_case;
using testing::temp_path;

GoldenVectors sample(uint64_t seed) {
  const auto c = random_case(seed);
  return make_vectors(c.cfg, c.a, c.b, {{"kind", "test"}, {"seed", seed}});
}

std::string expect_file_error(const std::string& path) {
  try {
    read_vectors(path);
  } catch (const FileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no FileError for " << path;
  return "";
}

TEST(Vectors, RoundTrip) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const GoldenVectors v = sample(seed);
    const std::string path = temp_path("rt.kvec");
    write_vectors(path, v);
    const GoldenVectors w = read_vectors(path);
    EXPECT_EQ(w.a.data, v.a.data);
    EXPECT_EQ(w.b.data, v.b.data);
    EXPECT_EQ(w.out.data, v.out.data);
    ASSERT_EQ(w.decisions.size(), v.decisions.size());
    for (size_t k = 0; k < v.decisions.size(); ++k) ASSERT_TRUE(w.decisions[k] == v.decisions[k]);
    EXPECT_EQ(w.config.tau, v.config.tau);
    EXPECT_EQ(w.counters.reused_per_group, v.counters.reused_per_group);
    EXPECT_EQ(w.counters.macs_issued, v.counters.macs_issued);
    EXPECT_EQ(w.window_depth, v.window_depth);
    EXPECT_EQ(w.workload["seed"], seed);
    fs::remove(path);
  }
}

TEST(Vectors, RejectsMissingTruncatedCorruptAndWrongVersionFiles) {
  const std::string path = temp_path("bad.kvec");
  EXPECT_NE(expect_file_error(path + ".missing").find("does not exist"), std::string::npos);

  write_vectors(path, sample(7));
  const std::string good = read_file(path);
  // Every truncation point is rejected, with a message about truncation.
  for (size_t cut : {size_t{0}, size_t{5}, size_t{15}, size_t{40}, good.size() / 2, good.size() - 13, good.size() - 1}) {
    write_file_atomic(path, good.substr(0, cut));
    const std::string msg = expect_file_error(path);
    EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("bad magic") != std::string::npos) << cut << ": " << msg;
  }
  // A flipped byte in any payload is caught by the checksum.
  std::string corrupt = good;
  corrupt[good.size() / 2] = static_cast<char>(corrupt[good.size() / 2] ^ 0x40);
  write_file_atomic(path, corrupt);
  EXPECT_NE(expect_file_error(path).find("corrupt"), std::string::npos);
  // Version 2 is not read by this tool.
  std::string wrong = good;
  wrong[8] = 2;
  write_file_atomic(path, wrong);
  EXPECT_NE(expect_file_error(path).find("version 2"), std::string::npos);
  write_file_atomic(path, "not a vector file at all");
  EXPECT_NE(expect_file_error(path).find("bad magic"), std::string::npos);
  fs::remove(path);
}

TEST(Vectors, WritingToAMissingFolderFailsAndLeavesNothing) {
  const std::string dir = temp_path("nodir");
  EXPECT_THROW(write_vectors(dir + "/x.kvec", sample(3)), FileError);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Config, BadValuesNameTheParameterAndRule) {
  auto message = [](auto mutate) {
    ReuseConfig c;
    mutate(c);
    try {
      c.validate();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([](ReuseConfig& c) { c.grid.t = 0; }), "T = 0: must be at least 1");
  EXPECT_EQ(message([](ReuseConfig& c) { c.grid.w = -3; }), "W = -3: must be at least 1");
  EXPECT_EQ(message([](ReuseConfig& c) { c.group_w = 3; }), "Gw = 3: must divide K = 16");
  EXPECT_EQ(message([](ReuseConfig& c) { c.data_w = 3; }), "DATA_W = 3: must be 4 to 16");
  EXPECT_EQ(message([](ReuseConfig& c) { c.data_w = 17; }), "DATA_W = 17: must be 4 to 16");
  EXPECT_EQ(message([](ReuseConfig& c) { c.tau = {1, 2, 3}; }), "tau = 3 values: needs one threshold per group (2)");
  EXPECT_EQ(message([](ReuseConfig& c) { c.tau = {1, 1000}; }), "tau = 1000: must fit DATA_W+1 = 9 unsigned bits");
  EXPECT_EQ(message([](ReuseConfig& c) { c.band = parse_band_split("wan2.1"); }),
            "band = wan2.1: head dim 128 must divide K = 16");
  EXPECT_EQ(message([](ReuseConfig&) {}), "no error");
}

TEST(Config, JsonRoundTrip) {
  const auto c = random_case(11).cfg;
  const nlohmann::json j = c;
  ReuseConfig d = j.get<ReuseConfig>();
  EXPECT_EQ(nlohmann::json(d), j);
}

}  // namespace
}  // namespace kaleido
