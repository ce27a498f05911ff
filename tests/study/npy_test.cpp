// .npy input: round trip, float16, and the errors of broken files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "helpers.hpp"
#include "workload/models.hpp"
#include "workload/npy.hpp"
#include "workload/qkv.hpp"

namespace kaleido::workload {
namespace {

namespace fs = std::filesystem;
using testing::temp_path;

std::string raw_npy(const std::string& dict, const std::string& payload) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + payload;
}

void put(const std::string& path, const std::string& bytes) {
  std::ofstream o(path, std::ios::binary);
  o << bytes;
}

TEST(Npy, RoundTripsFloat32) {
  const std::string p = temp_path("a.npy");
  const std::vector<float> data = {1.5f, -2.0f, 0.25f, 3.0f, 4.0f, -5.5f};
  write_npy(p, {2, 3}, data);
  const NpyArray a = read_npy(p);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, data);
  EXPECT_EQ(a.dtype, "<f4");
  write_npy(p, {6}, data);
  EXPECT_EQ(read_npy(p).shape, (std::vector<int64_t>{6}));
  fs::remove(p);
}

TEST(Npy, ReadsFloat16AndFloat64) {
  const std::string p = temp_path("h.npy");
  // 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 65504 = 0x7BFF (little endian).
  put(p, raw_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", std::string("\x00\x3c\x00\xc0\x00\x38\xff\x7b", 8)));
  EXPECT_EQ(read_npy(p).data, (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f}));
  double d[2] = {0.125, -7.0};
  put(p, raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", std::string(reinterpret_cast<char*>(d), 16)));
  EXPECT_EQ(read_npy(p).data, (std::vector<float>{0.125f, -7.0f}));
  fs::remove(p);
}

TEST(Npy, BrokenFilesAreRejectedWithTheReason) {
  const std::string p = temp_path("bad.npy");
  auto error = [&p](const std::string& bytes) {
    put(p, bytes);
    try {
      read_npy(p);
    } catch (const FileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("PK\x03\x04 not numpy").find("signature is missing"), std::string::npos);
  EXPECT_NE(error(raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(12, '\0')))
                .find("truncated or corrupt"),
            std::string::npos);
  EXPECT_NE(error(raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'))).find("dtype <i4"),
            std::string::npos);
  EXPECT_NE(error(raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0'))).find("Fortran"),
            std::string::npos);
  fs::remove(p);
}

TEST(Npy, HeadActivationsLoadWithShapeChecks) {
  const ModelShape& cog = find_model("cogvideox-5b");  // head dim 64
  const Grid g{2, 2, 2};
  std::vector<float> q(static_cast<size_t>(3 * 8 * 64));
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i % 97) * 0.01f;
  const std::string qp = temp_path("q.npy"), kp = temp_path("k.npy"), vp = temp_path("v.npy");
  for (const auto& p : {qp, kp, vp}) write_npy(p, {3, 8, 64}, q);
  const AttentionInputs in = load_npy_head(qp, kp, vp, g, cog, 2, true);
  EXPECT_EQ(in.q.rows, 8);
  EXPECT_EQ(in.q.at(0, 0), q[2 * 8 * 64]);  // head 2, token 0, channel 0
  EXPECT_THROW(load_npy_head(qp, kp, vp, g, cog, 3, true), ConfigError);
  EXPECT_THROW(load_npy_head(qp, kp, vp, Grid{1, 2, 2}, cog, 0, true), FileError);
  EXPECT_THROW(load_npy_head(qp, kp, vp, g, find_model("wan2.1-1.3b"), 0, true), FileError);
  for (const auto& p : {qp, kp, vp}) fs::remove(p);
}

}  // namespace
}  // namespace kaleido::workload
