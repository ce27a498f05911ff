#include "hw/generator.hpp"

#include <algorithm>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "hw/blocks.hpp"
#include "hw/regmap.hpp"
#include "hw/sram_budget.hpp"

namespace kaleido::hw {

namespace fs = std::filesystem;

vlog::Design empty_design(const HwConfig& c, const std::vector<std::pair<std::string, std::string>>& extra) {
  c.validate();
  std::vector<std::pair<std::string, std::string>> params = c.parameter_list();
  params.insert(params.end(), extra.begin(), extra.end());
  return vlog::Design(vlog::FileHeader{"kaleido gen " + version(), params});
}

vlog::Design build_design(const HwConfig& c) {
  vlog::Design d = empty_design(c);
  // Memories hold at least two words (a one-word memory has no address).
  const int N = std::max(2, static_cast<int>(c.max_tokens()));
  const int tw = c.token_w();
  // Memories, each size once (a module per size keeps names concrete).
  auto sram = [&](int depth, int width, int reads) -> const vlog::Module& {
    return SramBlock::add(d, c, depth, width, reads);
  };
  sram(N, c.group_w * c.data_w, 2);  // A of kld_top: a read port for the detector, one for the array
  sram(N, c.group_w * c.data_w, 1);  // A of the plain baseline
  const vlog::Module& b_mem = sram(b_memory_depth(c), c.cols * c.data_w, 1);
  const vlog::Module& list_mem = sram(N, tw, 1);
  // The gather reads GATHER_W tokens' roots and partials per cycle: as many read ports.
  const vlog::Module& partial_mem = sram(std::max(N, partial_memory_depth(c)), c.partial_w(), c.gather_w);
  const vlog::Module& root_mem = sram(N, tw, c.gather_w);
  const vlog::Module& window_mem = sram(DetectorBlock::window_depth(c), c.group_w * c.data_w + tw, 2);
  sram(N, c.out_sum_w(), 2);  // output accumulators of the plain baseline

  const vlog::Module& pe = d.add(PeBlock::generate(c));
  const vlog::Module& load_reg = d.add(ArrayBlock::generate_load_reg());
  d.add(ArrayBlock::generate(c, pe, load_reg, partials_banked(c), "kld_array"));
  const vlog::Module& lane = d.add(DetectorBlock::generate_lane(c, window_mem));
  d.add(DetectorBlock::generate(c, lane));
  d.add(DispatcherBlock::generate(c, list_mem));
  d.add(MergeBlock::generate(c, partial_mem, root_mem));
  d.add(WeightLoaderBlock::generate(c, b_mem));
  std::vector<const vlog::Module*> parts;
  for (const auto& m : d.modules()) parts.push_back(m.get());
  d.add(TopBlock::generate(c, parts));

  HwConfig plain = c;
  plain.group_w = c.rows;  // one segment: a plain systolic column
  d.add(ArrayBlock::generate(plain, pe, load_reg, false, "kld_plain_array"));
  parts.clear();
  for (const auto& m : d.modules()) parts.push_back(m.get());
  d.add(PlainTopBlock::generate(c, parts));
  d.check();
  return d;
}

nlohmann::json manifest(const HwConfig& c, const vlog::Design& d) {
  nlohmann::json j;
  j["generator"] = "kaleido gen";
  j["version"] = version();
  j["config_name"] = c.name();
  j["parameters"] = c;
  j["tops"] = d.tops();
  nlohmann::json mods = nlohmann::json::array();
  for (const auto& m : d.modules()) {
    nlohmann::json ports = nlohmann::json::array();
    for (const vlog::PortInfo& p : m->ports())
      ports.push_back({{"name", p.name},
                       {"dir", p.dir == vlog::PortDir::Input ? "input" : "output"},
                       {"width", p.width},
                       {"signed", p.is_signed}});
    nlohmann::json params = nlohmann::json::array();
    for (const vlog::ParamInfo& p : m->parameters())
      params.push_back({{"name", p.name}, {"width", p.width}, {"default", p.default_value}});
    nlohmann::json inst = nlohmann::json::array();
    for (const vlog::InstanceItem* i : m->instances()) {
      nlohmann::json overrides = nlohmann::json::object();
      for (const vlog::InstanceItem::Override& o : i->overrides())
        overrides[o.name] = vlog::detail::constant_value(o.value);
      inst.push_back({{"name", i->name()}, {"module", i->module()}, {"parameters", overrides}});
    }
    mods.push_back({{"name", m->name()}, {"file", m->name() + ".v"}, {"description", m->description()},
                    {"parameters", params}, {"ports", ports}, {"instances", inst}});
  }
  j["modules"] = mods;
  nlohmann::json regs = nlohmann::json::array();
  for (const Register& r : register_map(c)) {
    nlohmann::json fields = nlohmann::json::array();
    for (const RegField& f : r.fields)
      fields.push_back({{"name", f.name}, {"lsb", f.lsb}, {"width", f.width}, {"access", access_name(f.access)},
                        {"reset", f.reset}, {"constant", f.constant}, {"plain", f.plain}, {"doc", f.doc}});
    regs.push_back({{"name", r.name}, {"addr", r.addr}, {"count", r.count}, {"access", access_name(r.access())},
                    {"doc", r.doc}, {"fields", fields}});
  }
  j["registers"] = regs;
  j["register_addr_width"] = reg_addr_width(c);
  j["sram"] = sram_json(c);
  nlohmann::json waivers = nlohmann::json::array();
  for (const auto& w : d.waivers())
    waivers.push_back({{"module", w.module}, {"target", w.target}, {"code", w.code}, {"justification", w.justification}});
  j["lint_waivers"] = waivers;
  nlohmann::json unused = nlohmann::json::array();
  for (const auto& u : d.unused_bits())
    unused.push_back({{"module", u.module}, {"bits", u.bits}, {"justification", u.justification}});
  j["unused_bits"] = unused;
  return j;
}

std::vector<GeneratedFile> generate_files(const HwConfig& c) {
  const vlog::Design d = build_design(c);
  std::vector<GeneratedFile> files;
  for (const vlog::EmittedFile& f : d.emit()) files.push_back({f.name, f.text});
  files.push_back({"manifest.json", manifest(c, d).dump(2) + "\n"});
  files.push_back({"kld_regs.hpp", register_header(c)});
  files.push_back({"kld_regs.md", register_markdown(c)});
  return files;
}

void write_rtl(const HwConfig& c, const fs::path& dir_in) {
  const std::vector<GeneratedFile> files = generate_files(c);  // all checks before any I/O
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  const fs::path parent = dir.parent_path();
  if (!fs::is_directory(parent)) throw FileError(dir.string(), "parent folder " + parent.string() + " does not exist");
  if (fs::exists(dir) && !fs::is_directory(dir)) throw FileError(dir.string(), "exists and is not a folder");
  const std::string tag = std::to_string(::getpid());
  const fs::path stage = parent / ("." + dir.filename().string() + ".staging" + tag);
  const fs::path old = parent / ("." + dir.filename().string() + ".old" + tag);
  std::error_code ec;
  fs::create_directory(stage, ec);
  if (ec) throw FileError(dir.string(), "cannot write into " + parent.string() + ": " + ec.message());
  try {
    for (const GeneratedFile& f : files) write_file_atomic(stage / f.name, f.text);
    if (fs::exists(dir)) {
      fs::rename(dir, old, ec);
      if (ec) throw FileError(dir.string(), "cannot replace: " + ec.message());
    }
    fs::rename(stage, dir, ec);
    if (ec) {
      if (fs::exists(old)) fs::rename(old, dir);
      throw FileError(dir.string(), "cannot move the new files into place: " + ec.message());
    }
    fs::remove_all(old, ec);
  } catch (...) {
    fs::remove_all(stage, ec);
    throw;
  }
}

}  // namespace kaleido::hw
