// Real video in: YUV4MPEG2 (.y4m) read and written natively; every other
// container (.mp4, .avi, .mkv, ...) is decoded by the `ffmpeg` command-line
// tool into a y4m stream that the same reader parses.
//
// Why the CLI rather than libavformat: one parser serves both paths, the build
// gains no link dependency on FFmpeg's frequently changing library ABI, and a
// missing or failing decoder becomes a clear message instead of a crash.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kaleido::workload {

enum class Chroma : uint8_t { C420, C422, C444, Mono };

// One 8-bit YUV frame; u and v are empty for Mono.
struct VideoFrame {
  std::vector<uint8_t> y, u, v;
};

struct Video {
  int width = 0;
  int height = 0;
  int fps_num = 25;
  int fps_den = 1;
  Chroma chroma = Chroma::C420;
  std::string chroma_tag = "420jpeg";  // the y4m C tag, kept for round trips
  std::string source;                  // where the frames came from (for reports)
  std::vector<VideoFrame> frames;

  int chroma_w() const { return chroma == Chroma::C444 ? width : chroma == Chroma::Mono ? 0 : (width + 1) / 2; }
  int chroma_h() const { return chroma == Chroma::C420 ? (height + 1) / 2 : chroma == Chroma::Mono ? 0 : height; }
  size_t luma_bytes() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
  size_t chroma_bytes() const { return static_cast<size_t>(chroma_w()) * static_cast<size_t>(chroma_h()); }
};

// Which frames to keep: frames start, start+step, ... (count of them; -1 = to the end).
struct FrameSelection {
  int start = 0;
  int count = -1;
  int step = 1;
  int last_needed() const { return count < 0 ? -1 : start + (count - 1) * step; }
};

// Parses a y4m stream. `name` labels errors. Throws FileError on a bad
// header, an unsupported format, a missing FRAME marker or a truncated frame,
// and when the selection asks for more frames than the stream holds.
Video read_y4m(std::FILE* in, const std::string& name, const FrameSelection& sel = {});
Video read_y4m_file(const std::string& path, const FrameSelection& sel = {});

// Writes a y4m file atomically.
void write_y4m(const std::string& path, const Video& v);

// Reads any video: .y4m natively, anything else through `ffmpeg`.
Video read_video(const std::string& path, const FrameSelection& sel = {});

// The clip Debian's python3-imageio ships (cockatoo.mp4, 1280x720, 280
// frames, BSD-2-Clause), or "" when the package is not installed.
std::string find_cockatoo();

// A low-motion clip made from real pixels: frame 0 of `still` as a static
// background with a small patch of it drifting slowly (`speed` pixels per
// frame) and faint seeded sensor noise. Stands in for a static-camera scene
// such as opencv-doc's vtest.avi, which is not installed here.
Video make_low_motion_clip(const Video& still, int frames, double speed, uint64_t seed);

// A clip by name: "cockatoo" (Debian python3-imageio's cockatoo.mp4), "lowmotion" (made from cockatoo's frame
// sel.start: a static background with a drifting patch), or a video path.
Video load_clip(const std::string& name, const FrameSelection& sel);

}  // namespace kaleido::workload
