#include "golden/vectors.hpp"

#include <cstring>
#include <zlib.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/intmath.hpp"

namespace kaleido {

namespace {

constexpr char kMagic[8] = {'K', 'L', 'D', 'G', 'O', 'L', 'D', '\x1a'};
constexpr size_t kDecisionBytes = 10;

// Little-endian encoding, independent of the host.
void put_u(std::string& s, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}
uint64_t get_u(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
  return v;
}

uint32_t crc(const std::string& payload) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

void add_section(std::string& file, const char tag[4], const std::string& payload) {
  file.append(tag, 4);
  put_u(file, payload.size(), 8);
  file += payload;
  put_u(file, crc(payload), 4);
}

std::string pack_matrix16(const IntMatrix& m) {
  std::string s;
  s.reserve(m.data.size() * 2);
  for (int32_t v : m.data) put_u(s, static_cast<uint16_t>(static_cast<int16_t>(v)), 2);
  return s;
}

struct Section {
  std::string tag;
  std::string payload;
};

class Reader {
 public:
  Reader(std::string path, std::string bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}

  std::vector<Section> sections() {
    if (bytes_.size() < 16 || std::memcmp(bytes_.data(), kMagic, 8) != 0)
      fail("not a Kaleido golden-vector file (bad magic)");
    const uint32_t version = static_cast<uint32_t>(get_u(ptr(8), 4));
    if (version != kVectorVersion)
      fail("golden-vector format version " + std::to_string(version) + ", this tool reads version " +
           std::to_string(kVectorVersion) + "; regenerate it with `kaleido golden`");
    const uint32_t count = static_cast<uint32_t>(get_u(ptr(12), 4));
    size_t off = 16;
    std::vector<Section> out;
    for (uint32_t k = 0; k < count; ++k) {
      if (bytes_.size() - off < 12) fail("truncated: section " + std::to_string(k) + " header is cut off");
      Section s;
      s.tag.assign(bytes_.data() + off, 4);
      const uint64_t len = get_u(ptr(off + 4), 8);
      off += 12;
      if (len > bytes_.size() - off || bytes_.size() - off - len < 4)
        fail("truncated: section '" + s.tag + "' declares " + std::to_string(len) + " bytes, " +
             std::to_string(bytes_.size() - off) + " remain");
      s.payload.assign(bytes_.data() + off, static_cast<size_t>(len));
      off += static_cast<size_t>(len);
      if (static_cast<uint32_t>(get_u(ptr(off), 4)) != crc(s.payload))
        fail("corrupt: checksum of section '" + s.tag + "' does not match");
      off += 4;
      out.push_back(std::move(s));
    }
    if (out.empty() || out.back().tag != "END ") fail("truncated: no END section");
    if (off != bytes_.size()) fail("malformed: " + std::to_string(bytes_.size() - off) + " bytes after END");
    return out;
  }

  [[noreturn]] void fail(const std::string& why) const { throw FileError(path_, why); }

 private:
  const unsigned char* ptr(size_t off) const { return reinterpret_cast<const unsigned char*>(bytes_.data()) + off; }
  std::string path_;
  std::string bytes_;
};

const Section& find(const std::vector<Section>& ss, const char* tag, const Reader& r) {
  for (const auto& s : ss)
    if (s.tag == tag) return s;
  r.fail(std::string("malformed: section '") + tag + "' is missing");
}

IntMatrix unpack_matrix16(const Section& s, int64_t rows, int64_t cols, int bits, const Reader& r) {
  if (static_cast<int64_t>(s.payload.size()) != rows * cols * 2)
    r.fail("malformed: section '" + s.tag + "' has " + std::to_string(s.payload.size()) + " bytes, expected " +
           std::to_string(rows * cols * 2) + " for " + std::to_string(rows) + "x" + std::to_string(cols));
  IntMatrix m(rows, cols);
  const auto* p = reinterpret_cast<const unsigned char*>(s.payload.data());
  for (size_t k = 0; k < m.data.size(); ++k) {
    m.data[k] = static_cast<int16_t>(get_u(p + 2 * k, 2));
    if (!fits_signed(m.data[k], bits))
      r.fail("malformed: section '" + s.tag + "' value " + std::to_string(m.data[k]) + " does not fit DATA_W");
  }
  return m;
}

nlohmann::json parse_json(const Section& s, const Reader& r) {
  try {
    return nlohmann::json::parse(s.payload);
  } catch (const nlohmann::json::exception& e) {
    r.fail("malformed: section '" + s.tag + "' is not JSON: " + e.what());
  }
}

}  // namespace

nlohmann::json counters_json(const ReuseCounters& c) {
  return {{"pairs", c.pairs},
          {"reused_pairs", c.reused_pairs},
          {"reused_per_group", c.reused_per_group},
          {"reused_per_axis", {{"t", c.reused_per_axis[0]}, {"h", c.reused_per_axis[1]}, {"w", c.reused_per_axis[2]}}},
          {"tokens_fully_reused", c.tokens_fully_reused},
          {"refs_beyond_window", c.refs_beyond_window},
          {"macs_issued", c.macs_issued},
          {"macs_skipped", c.macs_skipped},
          {"reuse_ratio", c.reuse_ratio()}};
}

ReuseCounters counters_from_json(const nlohmann::json& j) {
  ReuseCounters c;
  c.pairs = j.at("pairs").get<int64_t>();
  c.reused_pairs = j.at("reused_pairs").get<int64_t>();
  c.reused_per_group = j.at("reused_per_group").get<std::vector<int64_t>>();
  const auto& ax = j.at("reused_per_axis");
  c.reused_per_axis = {ax.at("t").get<int64_t>(), ax.at("h").get<int64_t>(), ax.at("w").get<int64_t>()};
  c.tokens_fully_reused = j.at("tokens_fully_reused").get<int64_t>();
  c.refs_beyond_window = j.at("refs_beyond_window").get<int64_t>();
  c.macs_issued = j.at("macs_issued").get<int64_t>();
  c.macs_skipped = j.at("macs_skipped").get<int64_t>();
  return c;
}

GoldenVectors make_vectors(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, nlohmann::json workload) {
  cfg.validate();
  if (b.rows != cfg.channels || b.cols != cfg.out_cols)
    throw ConfigError("B", std::to_string(b.rows) + "x" + std::to_string(b.cols),
                      "must be K x M = " + std::to_string(cfg.channels) + "x" + std::to_string(cfg.out_cols));
  for (int32_t v : b.data)
    if (!fits_signed(v, cfg.data_w))
      throw ConfigError("B", std::to_string(v), "does not fit DATA_W = " + std::to_string(cfg.data_w) + " signed bits");
  GoldenVectors v;
  v.config = cfg;
  v.workload = std::move(workload);
  v.a = a;
  v.b = b;
  IntReuse r = run_reuse(cfg, a);
  v.out = reuse_output(cfg, a, b, r);
  v.decisions = std::move(r.decisions);
  v.counters = r.counters;
  v.window_depth = r.window_depth;
  v.required_window_depth = r.required_window_depth;
  return v;
}

void write_vectors(const std::string& path, const GoldenVectors& v) {
  std::string file(kMagic, 8);
  put_u(file, kVectorVersion, 4);
  put_u(file, 8, 4);  // section count
  nlohmann::json conf = v.config;
  add_section(file, "CONF", conf.dump());
  nlohmann::json meta = {{"workload", v.workload},
                         {"window_depth", v.window_depth},
                         {"required_window_depth", v.required_window_depth}};
  add_section(file, "META", meta.dump());
  add_section(file, "AMAT", pack_matrix16(v.a));
  add_section(file, "BMAT", pack_matrix16(v.b));
  std::string dec;
  dec.reserve(v.decisions.size() * kDecisionBytes);
  for (const PairDecision& p : v.decisions) {
    put_u(dec, static_cast<uint8_t>(p.kind), 1);
    put_u(dec, p.kind == PairKind::Reuse ? static_cast<uint8_t>(p.axis) : 0xFF, 1);
    put_u(dec, static_cast<uint32_t>(p.ref), 4);
    put_u(dec, static_cast<uint32_t>(p.root), 4);
  }
  add_section(file, "DECS", dec);
  std::string out;
  out.reserve(v.out.data.size() * 8);
  for (int64_t x : v.out.data) put_u(out, static_cast<uint64_t>(x), 8);
  add_section(file, "OUTS", out);
  add_section(file, "CNTS", counters_json(v.counters).dump());
  add_section(file, "END ", "");
  AtomicFile f(path, true);
  f.stream().write(file.data(), static_cast<std::streamsize>(file.size()));
  f.commit();
}

GoldenVectors read_vectors(const std::string& path) {
  Reader r(path, read_file(path));
  const std::vector<Section> ss = r.sections();
  GoldenVectors v;
  try {
    parse_json(find(ss, "CONF", r), r).get_to(v.config);
    v.config.validate();
  } catch (const Error& e) {
    r.fail(std::string("malformed configuration: ") + e.what());
  }
  const nlohmann::json meta = parse_json(find(ss, "META", r), r);
  try {
    v.workload = meta.at("workload");
    v.window_depth = meta.at("window_depth").get<int64_t>();
    v.required_window_depth = meta.at("required_window_depth").get<int64_t>();
    v.counters = counters_from_json(parse_json(find(ss, "CNTS", r), r));
  } catch (const nlohmann::json::exception& e) {
    r.fail(std::string("malformed: ") + e.what());
  }
  const ReuseConfig& c = v.config;
  const int64_t N = c.grid.tokens(), K = c.channels, M = c.out_cols, G = c.groups();
  v.a = unpack_matrix16(find(ss, "AMAT", r), N, K, c.data_w, r);
  v.b = unpack_matrix16(find(ss, "BMAT", r), K, M, c.data_w, r);

  const Section& dec = find(ss, "DECS", r);
  if (static_cast<int64_t>(dec.payload.size()) != N * G * static_cast<int64_t>(kDecisionBytes))
    r.fail("malformed: section 'DECS' has " + std::to_string(dec.payload.size()) + " bytes, expected " +
           std::to_string(N * G * static_cast<int64_t>(kDecisionBytes)));
  const auto* p = reinterpret_cast<const unsigned char*>(dec.payload.data());
  v.decisions.resize(static_cast<size_t>(N * G));
  for (size_t k = 0; k < v.decisions.size(); ++k, p += kDecisionBytes) {
    PairDecision& d = v.decisions[k];
    const unsigned kind = p[0], axis = p[1];
    d.ref = static_cast<int32_t>(get_u(p + 2, 4));
    d.root = static_cast<int32_t>(get_u(p + 6, 4));
    const bool reuse = kind == 1;
    if (kind > 1 || (reuse && axis > 2) || (!reuse && axis != 0xFF) || d.root < 0 || d.root >= N ||
        (reuse ? (d.ref < 0 || d.ref >= N) : d.ref != -1))
      r.fail("malformed: decision " + std::to_string(k) + " is out of range");
    d.kind = reuse ? PairKind::Reuse : PairKind::Compute;
    d.axis = reuse ? static_cast<Axis>(axis) : Axis::T;
  }

  const Section& out = find(ss, "OUTS", r);
  if (static_cast<int64_t>(out.payload.size()) != N * M * 8)
    r.fail("malformed: section 'OUTS' has " + std::to_string(out.payload.size()) + " bytes, expected " +
           std::to_string(N * M * 8));
  v.out = WideMatrix(N, M);
  const auto* q = reinterpret_cast<const unsigned char*>(out.payload.data());
  for (size_t k = 0; k < v.out.data.size(); ++k) v.out.data[k] = static_cast<int64_t>(get_u(q + 8 * k, 8));
  if (static_cast<int64_t>(v.counters.reused_per_group.size()) != G)
    r.fail("malformed: counters list " + std::to_string(v.counters.reused_per_group.size()) + " groups, config has " +
           std::to_string(G));
  return v;
}

}  // namespace kaleido
