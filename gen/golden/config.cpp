#include "golden/config.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace kaleido {

const char* axis_name(Axis a) {
  switch (a) {
    case Axis::T: return "t";
    case Axis::H: return "h";
    case Axis::W: return "w";
  }
  return "?";
}

Axis parse_axis(const std::string& s) {
  if (s == "t" || s == "T") return Axis::T;
  if (s == "h" || s == "H") return Axis::H;
  if (s == "w" || s == "W") return Axis::W;
  throw ConfigError("axis", s, "must be one of t, h, w");
}

std::string mask_name(AxisMask m) {
  std::string s;
  for (int a = 0; a < kNumAxes; ++a)
    if (m & (1u << a)) s += axis_name(static_cast<Axis>(a));
  return s.empty() ? "-" : s;
}

std::vector<Axis> default_axis_order() {
  std::vector<Axis> v;
  for (int a = 0; a < kNumAxes; ++a) v.push_back(static_cast<Axis>(a));
  return v;
}

int BandSplit::head_dim() const { return std::accumulate(sizes.begin(), sizes.end(), 0); }

BandSplit parse_band_split(const std::string& spec) {
  if (spec == "none" || spec.empty()) return {"none", {}};
  if (spec == "wan2.1" || spec == "wan") return {"wan2.1", {44, 42, 42}};
  if (spec == "hunyuan" || spec == "hunyuanvideo") return {"hunyuan", {16, 56, 56}};
  if (spec == "cogvideox") return {"cogvideox", {16, 24, 24}};
  BandSplit b;
  b.name = spec;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0)
      throw ConfigError("band", spec, "must be wan2.1, hunyuan, cogvideox, none, or three positive sizes T,H,W");
    b.sizes.push_back(static_cast<int>(v));
  }
  if (b.sizes.size() != 3)
    throw ConfigError("band", spec, "an explicit band split has exactly three sizes T,H,W");
  return b;
}

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::Fixed: return "fixed";
    case Policy::RopeOrthogonal: return "rope-orthogonal";
    case Policy::Adaptive: return "adaptive";
  }
  return "?";
}

Policy parse_policy(const std::string& s) {
  if (s == "fixed") return Policy::Fixed;
  if (s == "rope-orthogonal" || s == "rope") return Policy::RopeOrthogonal;
  if (s == "adaptive") return Policy::Adaptive;
  throw ConfigError("policy", s, "must be fixed, rope-orthogonal or adaptive");
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::ChannelReuse: return "channel";
    case Mode::Dense: return "dense";
    case Mode::TokenReuse: return "token";
  }
  return "?";
}

Mode parse_mode(const std::string& s) {
  if (s == "channel" || s == "reuse") return Mode::ChannelReuse;
  if (s == "dense") return Mode::Dense;
  if (s == "token") return Mode::TokenReuse;
  throw ConfigError("mode", s, "must be channel, dense or token");
}

const char* distance_name(Distance d) {
  switch (d) {
    case Distance::Max: return "max";
    case Distance::L1: return "l1";
    case Distance::L2: return "l2";
  }
  return "?";
}

Distance parse_distance(const std::string& s) {
  if (s == "max") return Distance::Max;
  if (s == "l1") return Distance::L1;
  if (s == "l2") return Distance::L2;
  throw ConfigError("distance", s, "must be max, l1 or l2");
}

AxisMask ReuseConfig::rope_mask(int g) const {
  if (!band.has_rope()) return 0;
  const int hd = band.head_dim();
  AxisMask m = 0;
  for (int c = g * group_w; c < (g + 1) * group_w; ++c) {
    int off = c % hd;
    int a = 0;
    while (off >= band.sizes[static_cast<size_t>(a)]) off -= band.sizes[static_cast<size_t>(a++)];
    m = static_cast<AxisMask>(m | (1u << a));
  }
  return m;
}

std::vector<Axis> ReuseConfig::allowed_axes(int g) const {
  if (policy == Policy::Fixed) return fixed_axes;
  std::vector<Axis> out;
  const AxisMask rope = rope_mask(g);
  for (int a = 0; a < kNumAxes; ++a)
    if (!(rope & (1u << a))) out.push_back(static_cast<Axis>(a));
  return out;
}

namespace {
void require(bool ok, const std::string& param, const std::string& value, const std::string& rule) {
  if (!ok) throw ConfigError(param, value, rule);
}
std::string str(int64_t v) { return std::to_string(v); }
}  // namespace

void ReuseConfig::validate() const {
  require(grid.t > 0, "T", str(grid.t), "must be at least 1");
  require(grid.h > 0, "H", str(grid.h), "must be at least 1");
  require(grid.w > 0, "W", str(grid.w), "must be at least 1");
  require(grid.tokens() <= (int64_t{1} << 30), "T*H*W", str(grid.tokens()), "must be at most 2^30 tokens");
  require(channels > 0, "K", str(channels), "must be at least 1");
  require(out_cols > 0, "M", str(out_cols), "must be at least 1");
  require(data_w >= 4 && data_w <= 16, "DATA_W", str(data_w), "must be 4 to 16");
  require(acc_w >= 2 * data_w && acc_w <= 64, "ACC_W", str(acc_w), "must be 2*DATA_W to 64");
  require(group_w > 0, "Gw", str(group_w), "must be at least 1");
  require(channels % group_w == 0, "Gw", str(group_w), "must divide K = " + str(channels));
  if (band.has_rope())
    require(channels % band.head_dim() == 0, "band", band.name,
            "head dim " + str(band.head_dim()) + " must divide K = " + str(channels));
  if (policy == Policy::Fixed) {
    require(!fixed_axes.empty() && fixed_axes.size() <= 3, "axes", str(static_cast<int64_t>(fixed_axes.size())),
            "a fixed policy lists 1 to 3 axes");
    AxisMask seen = 0;
    for (Axis a : fixed_axes) {
      require(!(seen & axis_bit(a)), "axes", axis_name(a), "an axis may appear only once");
      seen = static_cast<AxisMask>(seen | axis_bit(a));
    }
  }
  require(tile_h >= 0 && tile_h <= grid.h, "tile_h", str(tile_h), "must be 0 (whole frame) to H = " + str(grid.h));
  require(tile_w >= 0 && tile_w <= grid.w, "tile_w", str(tile_w), "must be 0 (whole frame) to W = " + str(grid.w));
  require(window_depth >= 0, "window_depth", str(window_depth), "must be 0 (as needed) or positive");
  const auto G = static_cast<size_t>(groups());
  require(tau.empty() || tau.size() == G, "tau", str(static_cast<int64_t>(tau.size())) + " values",
          "needs one threshold per group (" + str(groups()) + ")");
  for (uint32_t t : tau)
    require(t <= (2u << data_w) - 1u, "tau", str(t), "must fit DATA_W+1 = " + str(data_w + 1) + " unsigned bits");
  require(tau_float.empty() || tau_float.size() == G, "tau_float", str(static_cast<int64_t>(tau_float.size())) + " values",
          "needs one threshold per group (" + str(groups()) + ")");
  for (float t : tau_float) require(std::isfinite(t) && t >= 0.0f, "tau_float", std::to_string(t), "must be finite and >= 0");
  require(group_enable.empty() || group_enable.size() == G, "group_enable",
          str(static_cast<int64_t>(group_enable.size())) + " values", "needs one flag per group (" + str(groups()) + ")");
}

void ReuseConfig::validate_for_hardware() const {
  validate();
  require(distance == Distance::Max, "distance", distance_name(distance),
          "the hardware's detector computes max |x - y| over a group's channels; l1 and l2 are for the study "
          "(kaleido study), not for a hardware run");
}

void to_json(nlohmann::json& j, const ReuseConfig& c) {
  std::vector<std::string> axes;
  for (Axis a : c.fixed_axes) axes.emplace_back(axis_name(a));
  j = nlohmann::json{{"T", c.grid.t},
                     {"H", c.grid.h},
                     {"W", c.grid.w},
                     {"K", c.channels},
                     {"M", c.out_cols},
                     {"data_w", c.data_w},
                     {"acc_w", c.acc_w},
                     {"group_w", c.group_w},
                     {"band", c.band.name},
                     {"band_sizes", c.band.sizes},
                     {"policy", policy_name(c.policy)},
                     {"fixed_axes", axes},
                     {"mode", mode_name(c.mode)},
                     {"distance", distance_name(c.distance)},
                     {"tile_h", c.tile_h},
                     {"tile_w", c.tile_w},
                     {"window_depth", c.window_depth},
                     {"tau", c.tau},
                     {"tau_float", c.tau_float},
                     {"group_enable", c.group_enable},
                     {"closed_loop", c.closed_loop}};
}

void from_json(const nlohmann::json& j, ReuseConfig& c) {
  try {
    c.grid.t = j.at("T").get<int>();
    c.grid.h = j.at("H").get<int>();
    c.grid.w = j.at("W").get<int>();
    c.channels = j.at("K").get<int>();
    c.out_cols = j.at("M").get<int>();
    c.data_w = j.at("data_w").get<int>();
    c.acc_w = j.at("acc_w").get<int>();
    c.group_w = j.at("group_w").get<int>();
    c.band.name = j.at("band").get<std::string>();
    c.band.sizes = j.at("band_sizes").get<std::vector<int>>();
    c.policy = parse_policy(j.at("policy").get<std::string>());
    c.fixed_axes.clear();
    for (const auto& a : j.at("fixed_axes")) c.fixed_axes.push_back(parse_axis(a.get<std::string>()));
    c.mode = parse_mode(j.at("mode").get<std::string>());
    c.distance = parse_distance(j.value("distance", std::string("max")));  // absent in files written before it
    c.tile_h = j.at("tile_h").get<int>();
    c.tile_w = j.at("tile_w").get<int>();
    c.window_depth = j.at("window_depth").get<int>();
    c.tau = j.at("tau").get<std::vector<uint32_t>>();
    c.tau_float = j.at("tau_float").get<std::vector<float>>();
    c.group_enable = j.at("group_enable").get<std::vector<uint8_t>>();
    c.closed_loop = j.at("closed_loop").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("reuse configuration: ") + e.what());
  }
}

}  // namespace kaleido
