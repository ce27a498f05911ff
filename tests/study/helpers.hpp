// Shared helpers of the study tests: temporary paths, the CLI, small clips.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "golden/random.hpp"
#include "golden/types.hpp"
#include "workload/video.hpp"

namespace kaleido::testing {

// A rows x cols matrix of independent normal values with standard deviation `sd`, from `seed`.
inline FloatMatrix random_matrix(int64_t rows, int64_t cols, uint64_t seed, double sd = 1.0) {
  FloatMatrix m(rows, cols);
  Rng rng(seed);
  for (float& x : m.data) x = static_cast<float>(sd * rng.normal());
  return m;
}

inline std::string temp_path(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  return std::string(base ? base : "/tmp") + "/kaleido_study_test_" + std::to_string(::getpid()) + "_" + name;
}

struct CliRun {
  int status;
  std::string output;
};

inline CliRun run_kaleido(const std::string& args) {
  const std::string log = temp_path("cli.log");
  const std::string cmd = std::string(KALEIDO_TEST_KALEIDO_BIN) + " " + args + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  CliRun r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(log)};
  std::remove(log.c_str());
  return r;
}

inline bool have_ffmpeg() { return std::system("ffmpeg -version > /dev/null 2>&1") == 0; }

// A clip of random 8-bit planes.
inline workload::Video random_video(int w, int h, int frames, workload::Chroma chroma, const std::string& tag, uint64_t seed) {
  workload::Video v;
  v.width = w;
  v.height = h;
  v.fps_num = 16;
  v.fps_den = 1;
  v.chroma = chroma;
  v.chroma_tag = tag;
  Rng rng(seed);
  for (int f = 0; f < frames; ++f) {
    workload::VideoFrame fr;
    fr.y.resize(v.luma_bytes());
    fr.u.resize(v.chroma_bytes());
    fr.v.resize(v.chroma_bytes());
    for (auto* p : {&fr.y, &fr.u, &fr.v})
      for (auto& x : *p) x = static_cast<uint8_t>(rng.range(0, 255));
    v.frames.push_back(fr);
  }
  return v;
}

// A textured clip whose left `static_w` pixel columns never change and whose
// other columns show a texture sliding right by `speed` pixels per frame.
inline workload::Video static_background_video(int w, int h, int frames, int static_w, int speed, uint64_t seed) {
  workload::Video v;
  v.width = w;
  v.height = h;
  v.chroma = workload::Chroma::C444;
  v.chroma_tag = "444";
  Rng rng(seed);
  const int tw = w + speed * frames;
  std::vector<uint8_t> texture(static_cast<size_t>(tw * h));
  // Smooth-ish random texture: sum of a few random blobs plus noise.
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < tw; ++x)
      texture[static_cast<size_t>(y * tw + x)] = static_cast<uint8_t>(
          128 + 60 * std::sin(0.21 * x + 0.5 * std::sin(0.13 * y)) + 30 * std::cos(0.17 * y) + static_cast<double>(rng.range(-10, 10)));
  for (int f = 0; f < frames; ++f) {
    workload::VideoFrame fr;
    fr.y.resize(v.luma_bytes());
    fr.u.assign(v.luma_bytes(), 128);
    fr.v.assign(v.luma_bytes(), 128);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int sx = x < static_w ? x : x + speed * (frames - f);  // the moving part slides
        fr.y[static_cast<size_t>(y * w + x)] = texture[static_cast<size_t>(y * tw + sx)];
        fr.u[static_cast<size_t>(y * w + x)] = static_cast<uint8_t>(100 + (texture[static_cast<size_t>(y * tw + sx)] >> 2));
      }
    v.frames.push_back(fr);
  }
  return v;
}

}  // namespace kaleido::testing
