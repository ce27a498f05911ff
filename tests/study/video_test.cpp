// The y4m reader and writer, the FFmpeg path, and their errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "helpers.hpp"
#include "workload/video.hpp"

namespace kaleido::workload {
namespace {

namespace fs = std::filesystem;
using testing::random_video;
using testing::temp_path;

void expect_same(const Video& a, const Video& b) {
  ASSERT_EQ(a.width, b.width);
  ASSERT_EQ(a.height, b.height);
  EXPECT_EQ(a.chroma, b.chroma);
  ASSERT_EQ(a.frames.size(), b.frames.size());
  for (size_t f = 0; f < a.frames.size(); ++f) {
    EXPECT_EQ(a.frames[f].y, b.frames[f].y) << "frame " << f;
    EXPECT_EQ(a.frames[f].u, b.frames[f].u) << "frame " << f;
    EXPECT_EQ(a.frames[f].v, b.frames[f].v) << "frame " << f;
  }
}

TEST(Y4m, RoundTripsEveryChromaLayoutIncludingOddSizes) {
  const std::pair<Chroma, const char*> layouts[] = {
      {Chroma::C420, "420jpeg"}, {Chroma::C422, "422"}, {Chroma::C444, "444"}, {Chroma::Mono, "mono"}};
  for (const auto& [chroma, tag] : layouts) {
    const Video v = random_video(13, 7, 3, chroma, tag, 5);
    const std::string path = temp_path(std::string("rt_") + tag + ".y4m");
    write_y4m(path, v);
    const Video back = read_y4m_file(path);
    expect_same(v, back);
    EXPECT_EQ(back.fps_num, 16);
    EXPECT_EQ(back.chroma_tag, tag);
    fs::remove(path);
  }
}

TEST(Y4m, ChromaPlaneSizesFollowTheSubsampling) {
  const Video v = random_video(13, 7, 1, Chroma::C420, "420jpeg", 1);
  EXPECT_EQ(v.chroma_w(), 7);  // ceil(13 / 2)
  EXPECT_EQ(v.chroma_h(), 4);  // ceil(7 / 2)
}

TEST(Y4m, SelectsFramesByStartStepAndCount) {
  const Video v = random_video(8, 4, 7, Chroma::C420, "420jpeg", 9);
  const std::string path = temp_path("sel.y4m");
  write_y4m(path, v);
  FrameSelection sel;
  sel.start = 1;
  sel.step = 2;
  sel.count = 3;
  const Video got = read_y4m_file(path, sel);
  ASSERT_EQ(got.frames.size(), 3u);
  EXPECT_EQ(got.frames[0].y, v.frames[1].y);
  EXPECT_EQ(got.frames[1].y, v.frames[3].y);
  EXPECT_EQ(got.frames[2].y, v.frames[5].y);
  sel.count = 4;  // frames 1, 3, 5, 7: there is no frame 7
  try {
    read_y4m_file(path, sel);
    FAIL() << "expected an error";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("holds only 3 of the 4 frames"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

std::string error_of(const std::string& content) {
  const std::string path = temp_path("bad.y4m");
  {
    std::ofstream o(path, std::ios::binary);
    o << content;
  }
  std::string what;
  try {
    read_y4m_file(path);
  } catch (const FileError& e) {
    what = e.what();
  }
  fs::remove(path);
  return what;
}

TEST(Y4m, TruncatedOrCorruptFilesGiveClearErrors) {
  const Video v = random_video(8, 4, 2, Chroma::C420, "420jpeg", 3);
  const std::string good = temp_path("good.y4m");
  write_y4m(good, v);
  const std::string bytes = read_file(good);
  fs::remove(good);
  EXPECT_NE(error_of(bytes.substr(0, bytes.size() - 5)).find("frame 1 is truncated"), std::string::npos);
  std::string corrupt = bytes;
  corrupt[corrupt.find("FRAME", corrupt.find("FRAME") + 1)] = 'X';  // the second frame marker
  EXPECT_NE(error_of(corrupt).find("frame 1: expected a FRAME marker"), std::string::npos) << error_of(corrupt);
  EXPECT_NE(error_of("").find("empty file"), std::string::npos);
  EXPECT_NE(error_of("RIFF....AVI LIST\n").find("signature is missing"), std::string::npos);
  EXPECT_NE(error_of("YUV4MPEG2 W8 H4 C420p10\nFRAME\n").find("C420p10 is not supported"), std::string::npos);
  EXPECT_NE(error_of("YUV4MPEG2 W8 C420\n").find("height (H) missing"), std::string::npos);
  EXPECT_NE(error_of("YUV4MPEG2 W8 H4 Ib\n").find("interlaced"), std::string::npos);
  EXPECT_NE(error_of("YUV4MPEG2 W8 H4\n").find("no frames"), std::string::npos);
  EXPECT_NE(error_of(bytes.substr(0, bytes.find('\n') + 3)).find("truncated FRAME marker"), std::string::npos);
}

TEST(Y4m, MissingFileIsNamed) {
  try {
    read_video("/nonexistent/clip.mp4");
    FAIL();
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/clip.mp4: does not exist"), std::string::npos);
  }
}

TEST(Ffmpeg, DecodesAContainerLosslesslyAndRejectsACutOffOne) {
  if (!testing::have_ffmpeg()) GTEST_SKIP() << "ffmpeg is not installed";
  const Video v = random_video(32, 16, 4, Chroma::C444, "444", 12);
  const std::string src = temp_path("src.y4m"), mkv = temp_path("clip.mkv"), cut = temp_path("cut.mp4");
  write_y4m(src, v);
  // FFV1 is lossless, so the decoded frames must equal the originals.
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -i " + src + " -c:v ffv1 " + mkv).c_str()), 0);
  const Video back = read_video(mkv);
  expect_same(v, back);
  FrameSelection sel;
  sel.start = 2;
  sel.count = 2;
  EXPECT_EQ(read_video(mkv, sel).frames[1].y, v.frames[3].y);
  // An mp4 cut in half has no index: ffmpeg fails and says why.
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -i " + src + " -c:v mpeg4 " + cut).c_str()), 0);
  const std::string bytes = read_file(cut);
  write_file_atomic(cut, bytes.substr(0, bytes.size() / 2));
  try {
    read_video(cut);
    FAIL() << "a cut-off mp4 must not decode";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("ffmpeg could not decode it"), std::string::npos) << e.what();
  }
  for (const auto& p : {src, mkv, cut}) fs::remove(p);
}

TEST(LowMotion, OnlyTheDriftingPatchAndNoiseChange) {
  Video still = random_video(60, 30, 1, Chroma::C420, "420jpeg", 4);
  const Video v = make_low_motion_clip(still, 5, 2.0, 1);
  ASSERT_EQ(v.frames.size(), 5u);
  // Far from the patch, luma differs from the still only by sensor noise (a few levels).
  int worst = 0;
  for (int f = 0; f < 5; ++f)
    for (int x = 0; x < 60; ++x) worst = std::max(worst, std::abs(int(v.frames[f].y[static_cast<size_t>(x)]) - int(still.frames[0].y[static_cast<size_t>(x)])));
  EXPECT_LE(worst, 6);
  EXPECT_NE(v.frames[0].y, v.frames[4].y);
}

}  // namespace
}  // namespace kaleido::workload
