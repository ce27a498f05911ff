#include "workload/video.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <cstdlib>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "common/text.hpp"
#include "golden/random.hpp"

namespace kaleido::workload {

namespace fs = std::filesystem;

namespace {

// One header or FRAME line, without the newline. Returns false at a clean EOF
// (nothing read); throws when the line is cut off or absurdly long.
bool read_line(std::FILE* in, std::string& line, const std::string& name, const char* what) {
  line.clear();
  for (;;) {
    const int c = std::fgetc(in);
    if (c == EOF) {
      if (line.empty()) return false;
      throw FileError(name, std::string("truncated ") + what + " (no end of line after '" + line + "')");
    }
    if (c == '\n') return true;
    line.push_back(static_cast<char>(c));
    if (line.size() > 4096) throw FileError(name, std::string(what) + " longer than 4096 bytes: not a y4m stream");
  }
}

int parse_positive(const std::string& tok, const std::string& name, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(tok.c_str() + 1, &end, 10);
  if (tok.size() < 2 || *end != '\0' || v <= 0 || v > 65536)
    throw FileError(name, std::string("y4m header: bad ") + what + " '" + tok + "'");
  return static_cast<int>(v);
}

void parse_header(const std::string& line, const std::string& name, Video& v) {
  std::istringstream ss(line);
  std::string tok;
  ss >> tok;
  if (tok != "YUV4MPEG2") throw FileError(name, "not a YUV4MPEG2 (.y4m) stream: the signature is missing");
  std::string ctag = "420jpeg";
  while (ss >> tok) {
    switch (tok[0]) {
      case 'W': v.width = parse_positive(tok, name, "width"); break;
      case 'H': v.height = parse_positive(tok, name, "height"); break;
      case 'F': {
        const auto colon = tok.find(':');
        if (colon == std::string::npos) throw FileError(name, "y4m header: bad frame rate '" + tok + "'");
        v.fps_num = std::atoi(tok.substr(1, colon - 1).c_str());
        v.fps_den = std::atoi(tok.substr(colon + 1).c_str());
        if (v.fps_num <= 0 || v.fps_den <= 0) throw FileError(name, "y4m header: bad frame rate '" + tok + "'");
        break;
      }
      case 'C': ctag = tok.substr(1); break;
      case 'I':
        if (tok != "Ip" && tok != "I?")
          throw FileError(name, "y4m header: interlaced video ('" + tok + "') is not supported; deinterlace first");
        break;
      default: break;  // A (aspect), X (extensions): not needed
    }
  }
  if (v.width == 0 || v.height == 0) throw FileError(name, "y4m header: width (W) or height (H) missing");
  if (ctag == "420jpeg" || ctag == "420paldv" || ctag == "420mpeg2" || ctag == "420")
    v.chroma = Chroma::C420;
  else if (ctag == "422")
    v.chroma = Chroma::C422;
  else if (ctag == "444")
    v.chroma = Chroma::C444;
  else if (ctag == "mono")
    v.chroma = Chroma::Mono;
  else
    throw FileError(name, "y4m colour space C" + ctag +
                              " is not supported (8-bit 420, 422, 444 or mono only; convert with ffmpeg -pix_fmt yuv420p)");
  v.chroma_tag = ctag;
}

void read_plane(std::FILE* in, std::vector<uint8_t>& dst, size_t bytes, const std::string& name, int frame) {
  dst.resize(bytes);
  const size_t got = bytes ? std::fread(dst.data(), 1, bytes, in) : 0;
  if (got != bytes)
    throw FileError(name, "frame " + std::to_string(frame) + " is truncated (the stream ends inside it): the file is cut off or corrupt");
}

}  // namespace

Video read_y4m(std::FILE* in, const std::string& name, const FrameSelection& sel) {
  if (sel.start < 0 || sel.step < 1 || sel.count == 0 || sel.count < -1)
    throw ConfigError("frames", std::to_string(sel.start) + "+" + std::to_string(sel.count) + "/" + std::to_string(sel.step),
                      "start >= 0, count >= 1 (or all), step >= 1");
  Video v;
  v.source = name;
  std::string line;
  if (!read_line(in, line, name, "header")) throw FileError(name, "empty file: not a y4m stream");
  parse_header(line, name, v);
  const int last = sel.last_needed();
  VideoFrame scratch;
  for (int idx = 0; last < 0 || idx <= last; ++idx) {
    if (!read_line(in, line, name, "FRAME marker")) break;
    if (line.compare(0, 5, "FRAME") != 0)
      throw FileError(name, "frame " + std::to_string(idx) + ": expected a FRAME marker, found '" + line.substr(0, 16) +
                                "': the file is corrupt");
    const bool keep = idx >= sel.start && (idx - sel.start) % sel.step == 0;
    VideoFrame& f = keep ? v.frames.emplace_back() : scratch;
    read_plane(in, f.y, v.luma_bytes(), name, idx);
    read_plane(in, f.u, v.chroma_bytes(), name, idx);
    read_plane(in, f.v, v.chroma_bytes(), name, idx);
  }
  if (v.frames.empty())
    throw FileError(name, "holds no frames" + (sel.start > 0 ? " at or after frame " + std::to_string(sel.start) : std::string()));
  if (sel.count > 0 && static_cast<int>(v.frames.size()) < sel.count)
    throw FileError(name, "holds only " + std::to_string(v.frames.size()) + " of the " + std::to_string(sel.count) +
                              " frames asked for (start " + std::to_string(sel.start) + ", step " +
                              std::to_string(sel.step) + ")");
  return v;
}

Video read_y4m_file(const std::string& path, const FrameSelection& sel) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw FileError(path, fs::exists(path) ? "cannot be read" : "does not exist");
  return read_y4m(f.get(), path, sel);
}

void write_y4m(const std::string& path, const Video& v) {
  AtomicFile f(path, true);
  std::ostream& o = f.stream();
  o << "YUV4MPEG2 W" << v.width << " H" << v.height << " F" << v.fps_num << ":" << v.fps_den << " Ip A1:1 C"
    << v.chroma_tag << "\n";
  for (const VideoFrame& fr : v.frames) {
    if (fr.y.size() != v.luma_bytes() || fr.u.size() != v.chroma_bytes() || fr.v.size() != v.chroma_bytes())
      throw Error("write_y4m: a frame's planes do not match the video's size");
    o << "FRAME\n";
    o.write(reinterpret_cast<const char*>(fr.y.data()), static_cast<std::streamsize>(fr.y.size()));
    o.write(reinterpret_cast<const char*>(fr.u.data()), static_cast<std::streamsize>(fr.u.size()));
    o.write(reinterpret_cast<const char*>(fr.v.data()), static_cast<std::streamsize>(fr.v.size()));
  }
  f.commit();
}

namespace {

bool has_y4m_extension(const std::string& path) {
  return to_lower(fs::path(path).extension().string()) == ".y4m";
}

// Removes a temporary folder and what is in it when it goes out of scope.
struct RemovedAtExit {
  std::string folder;
  ~RemovedAtExit() {
    std::error_code ec;
    fs::remove_all(folder, ec);
  }
};

std::string tail_of(const std::string& s, size_t n) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t.size() > n ? "..." + t.substr(t.size() - n) : t;
}

}  // namespace

Video read_video(const std::string& path, const FrameSelection& sel) {
  if (!fs::exists(path)) throw FileError(path, "does not exist");
  if (has_y4m_extension(path)) return read_y4m_file(path, sel);

  // ffmpeg decodes the frames needed to an 8-bit 4:4:4 y4m file in a private
  // folder, which the same reader parses; its messages (-v error) are kept so
  // that a failure can be reported in the user's terms.
  std::string folder = (fs::temp_directory_path() / "kaleido_ffmpeg_XXXXXX").string();
  if (::mkdtemp(folder.data()) == nullptr)
    throw FileError(folder, std::string("cannot create a temporary folder: ") + std::strerror(errno));
  const RemovedAtExit cleanup{folder};
  const std::string decoded = (fs::path(folder) / "decoded.y4m").string();
  std::vector<std::string> args = {"ffmpeg", "-nostdin", "-hide_banner", "-v", "error", "-i", path};
  if (sel.last_needed() >= 0) {
    args.push_back("-frames:v");
    args.push_back(std::to_string(sel.last_needed() + 1));
  }
  for (const char* a : {"-an", "-f", "yuv4mpegpipe", "-pix_fmt", "yuv444p", "-y"}) args.emplace_back(a);
  args.push_back(decoded);
  if (!which("ffmpeg"))
    throw FileError(path, "cannot run ffmpeg (it is not on PATH): install Debian package ffmpeg, or convert the clip "
                          "to .y4m");
  const ProcessResult run = run_process(args);
  Video v;
  std::string parse_error;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(decoded.c_str(), "rb"), &std::fclose);
  try {
    if (!in) throw FileError(path, "ffmpeg wrote no frames");
    v = read_y4m(in.get(), path + " (decoded by ffmpeg)", sel);
  } catch (const Error& e) {
    parse_error = e.what();
  }
  if (!run.ok() && (!parse_error.empty() || v.frames.empty()))
    throw FileError(path, "ffmpeg could not decode it: " +
                              (run.output.empty() ? exit_text(run) : tail_of(run.output, 300)));
  if (!parse_error.empty()) throw Error(parse_error);
  v.source = path;
  return v;
}

std::string find_cockatoo() {
  const char* roots[] = {"/usr/lib/python3/dist-packages/imageio/resources/images/cockatoo.mp4",
                         "/usr/share/python3-imageio/cockatoo.mp4"};
  for (const char* r : roots)
    if (fs::exists(r)) return r;
  std::error_code ec;
  if (fs::is_directory("/usr/lib/python3/dist-packages/imageio", ec))
    for (auto it = fs::recursive_directory_iterator("/usr/lib/python3/dist-packages/imageio", ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->path().filename() == "cockatoo.mp4") return it->path().string();
    }
  return "";
}

Video make_low_motion_clip(const Video& still, int frames, double speed, uint64_t seed) {
  if (still.frames.empty()) throw Error("low-motion clip: the source has no frames");
  if (frames < 1) throw ConfigError("frames", std::to_string(frames), "must be at least 1");
  Video out = still;
  out.frames.clear();
  out.source = still.source + " (frame 0 as a static background, a drifting patch, sensor noise)";
  const VideoFrame& bg = still.frames.front();
  const int pw = std::max(2, still.width / 5) & ~1, ph = std::max(2, still.height / 5) & ~1;
  const int sx = (still.width - pw) / 2, sy = (still.height - ph) / 2;  // the patch: the frame's centre
  const int cw = still.chroma_w(), ch = still.chroma_h();
  const int cdx = still.width / std::max(1, cw), cdy = still.height / std::max(1, ch);
  Rng rng(seed);
  for (int f = 0; f < frames; ++f) {
    VideoFrame fr = bg;
    const int ox = still.width / 6 + static_cast<int>(std::lround(speed * f)) % std::max(1, still.width - pw - still.width / 6);
    const int oy = still.height / 3;
    for (int y = 0; y < ph && oy + y < still.height; ++y)
      for (int x = 0; x < pw && ox + x < still.width; ++x)
        fr.y[static_cast<size_t>((oy + y) * still.width + ox + x)] = bg.y[static_cast<size_t>((sy + y) * still.width + sx + x)];
    if (cw > 0)
      for (int y = 0; y < ph / cdy; ++y)
        for (int x = 0; x < pw / cdx; ++x) {
          const int dy = oy / cdy + y, dx = ox / cdx + x;
          if (dy >= ch || dx >= cw) continue;
          const size_t d = static_cast<size_t>(dy * cw + dx), s = static_cast<size_t>((sy / cdy + y) * cw + sx / cdx + x);
          fr.u[d] = bg.u[s];
          fr.v[d] = bg.v[s];
        }
    for (auto& p : fr.y) p = static_cast<uint8_t>(std::lround(std::clamp(static_cast<double>(p) + rng.normal(), 0.0, 255.0)));
    out.frames.push_back(std::move(fr));
  }
  return out;
}

Video load_clip(const std::string& name, const FrameSelection& sel) {
  if (name == "cockatoo" || name == "lowmotion") {
    const std::string path = find_cockatoo();
    if (path.empty())
      throw FileError("cockatoo.mp4", "not found: install Debian package python3-imageio (it ships the clip), or give --clip PATH");
    if (name == "cockatoo") return read_video(path, sel);
    FrameSelection first;
    first.start = sel.start;
    first.count = 1;
    Video still = read_video(path, first);
    return make_low_motion_clip(still, sel.count, 2.0, 5);
  }
  return read_video(name, sel);
}

}  // namespace kaleido::workload
