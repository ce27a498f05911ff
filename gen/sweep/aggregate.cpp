#include "sweep/aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/svg.hpp"
#include "common/version.hpp"
#include "sweep/runner.hpp"

namespace kaleido::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double metric(const json& synth, const char* name) {
  const json& m = synth.at("metrics");
  if (!m.contains(name) || m[name]["value"].is_null()) return NAN;
  return m[name]["value"].get<double>();
}

// Logic area by block: the top's direct children, summed per module, plus the
// top's own cells, so that the blocks add up to the logic area.
std::vector<std::pair<std::string, double>> blocks_of(const json& synth) {
  std::vector<std::pair<std::string, double>> b;
  double glue = 0;
  for (const json& i : synth.at("area_by_instance")) {
    const int depth = i.at("depth").get<int>();
    if (depth == 0) glue = i.at("own_area_um2").get<double>();
    if (depth != 1) continue;
    const std::string mod = i.at("module").get<std::string>();
    auto it = std::find_if(b.begin(), b.end(), [&](const auto& p) { return p.first == mod; });
    if (it == b.end()) b.emplace_back(mod, i.at("area_um2").get<double>());
    else it->second += i.at("area_um2").get<double>();
  }
  b.emplace_back("(top glue)", glue);
  return b;
}

void fill_done(Row& r, const json& synth, double seconds) {
  r.status = "done";
  r.library_name = synth.at("library").at("name").get<std::string>();
  r.area_total_um2 = metric(synth, "design__instance__area");
  r.area_logic_um2 = metric(synth, "design__instance__area__stdcell");
  r.area_sram_um2 = metric(synth, "design__instance__area__macros");
  r.cells = static_cast<int>(metric(synth, "design__instance__count__stdcell"));
  r.sequential_cells = static_cast<int>(metric(synth, "design__instance__count__sequential"));
  r.srams = static_cast<int>(metric(synth, "design__instance__count__macros"));
  r.timed = synth.at("metrics").contains("timing__fmax");
  r.fmax_mhz = r.timed ? metric(synth, "timing__fmax") : NAN;
  r.ws_ns = r.timed ? metric(synth, "timing__setup__ws") : NAN;
  r.wns_ns = r.timed ? metric(synth, "timing__setup__wns") : NAN;
  r.tns_ns = r.timed ? metric(synth, "timing__setup__tns") : NAN;
  r.power_opensta_w = metric(synth, "power__total");
  r.power_kaleido_w = metric(synth, "kaleido__power__vectorless__total");
  r.power_sram_w = metric(synth, "kaleido__power__vectorless__sram");
  r.power_with_sram_w = r.power_opensta_w + r.power_sram_w;
  const int pes = r.point->pes();
  r.energy_per_mac_pj = energy_per_mac_pj(r.power_opensta_w, r.point->clock_ns, pes);
  r.energy_per_mac_sram_pj = energy_per_mac_pj(r.power_opensta_w + r.power_sram_w, r.point->clock_ns, pes);
  r.synth_seconds = seconds;
  r.blocks = blocks_of(synth);
}

// A value of the reports: `digits` significant digits; blank when not measured (nan).
std::string num(double v, int digits = 6) { return std::isfinite(v) ? sig(v, digits) : ""; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string files_text(const LibrarySpec& l) {
  if (l.files.empty()) return "kaleido_generic.lib (made by the build from scripts/liberty/make_kaleido_generic.py)";
  std::string s;
  for (const fs::path& f : l.files) s += (s.empty() ? "" : " ") + f.filename().string();
  return s;
}

json num_json(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A series of the plots: every parameter but the array size, readably: the
// widths as in HwConfig::name() ("d8a32_g2") and each other parameter that
// takes more than one value in the sweep (`varying`), e.g. "d8a32_g2_maxk16".
std::string variant(const Row& r, const std::set<std::string>& varying) {
  std::string v;
  for (const hw::HwField& f : hw::hw_fields()) {
    const std::string key = f.key;
    if (key == "rows" || key == "cols") continue;
    if (f.name_tag) {
      v += f.name_tag + std::to_string(f.get(r.point->config));
    } else if (varying.count(key)) {
      std::string k = key;
      k.erase(std::remove(k.begin(), k.end(), '_'), k.end());
      v += "_" + k + std::to_string(f.get(r.point->config));
    }
  }
  return v.empty() || v[0] != '_' ? v : v.substr(1);
}

// The hardware parameters (other than the array size) that differ between rows.
std::set<std::string> varying_parameters(const std::vector<Row>& rows) {
  std::set<std::string> keys;
  for (const hw::HwField& f : hw::hw_fields())
    for (const Row& r : rows)
      if (f.get(r.point->config) != f.get(rows.front().point->config)) keys.insert(f.key);
  return keys;
}

// "kld_top generic 2ns" and, when given, the variant.
std::string series_name(const Row& r, const std::string& variant_text) {
  return r.top + " " + r.point->library.label + " " + clock_text(r.point->clock_ns) + "ns" +
         (variant_text.empty() ? "" : " " + variant_text);
}

std::string array_text(const SweepPoint& p) { return std::to_string(p.config.rows) + "x" + std::to_string(p.config.cols); }

const char* const kEnergyDefinition =
    "energy per MAC = vectorless power at the target clock x clock period / (ROWS*COLS MACs per cycle): the energy "
    "of one MAC at full PE utilisation with every net toggling at the uniform activity; not a measured workload";

class Reports {
 public:
  Reports(const SweepSpec& spec, const fs::path& out, const std::vector<Row>& rows, double run_seconds)
      : spec_(spec), out_(out), rows_(rows), run_seconds_(run_seconds) {
    varying_ = varying_parameters(rows_);
    std::set<std::string> variants;
    for (const Row& r : rows_) variants.insert(variant(r, varying_));
    many_variants_ = variants.size() > 1;
  }

  // A point's name in the tables, with its variant when the sweep varies more than the array size
  // (the name's hash alone does not say which variant it is).
  std::string point_text(const Row& r, const std::string& name) const {
    return many_variants_ ? name + " (" + variant(r, varying_) + ")" : name;
  }

  std::vector<fs::path> write() {
    put(out_ / "sweep.csv", csv());
    put(out_ / "sweep.json", sweep_json().dump(1) + "\n");
    plots();
    put(out_ / "summary.md", summary());
    return written_;
  }

 private:
  void put(const fs::path& p, const std::string& text) {
    write_file_atomic(p, text);
    written_.push_back(p);
  }

  std::string csv() const {
    std::ostringstream o;
    o << "point_id,top,status";
    for (const hw::HwField& f : hw::hw_fields()) o << "," << f.key << (std::string(f.key) == "cols" ? ",pes" : "");
    o << ",library,liberty_files,clock_ns,activity,area_logic_um2,area_sram_um2,area_total_um2,cells,"
         "sequential_cells,srams,fmax_mhz,ws_ns,wns_ns,tns_ns,power_opensta_w,power_kaleido_w,power_sram_w,"
         "energy_per_mac_pj,energy_per_mac_with_sram_pj,synth_seconds,note\n";
    for (const Row& r : rows_) {
      const hw::HwConfig& c = r.point->config;
      o << r.point->id << "," << r.top << "," << r.status;
      for (const auto& [name, value] : c.parameter_list()) {
        o << "," << value;
        if (name == "COLS") o << "," << c.rows * c.cols;
      }
      o << "," << r.point->library.label << "," << csv_field(files_text(r.point->library)) << ","
        << clock_text(r.point->clock_ns) << "," << spec_.activity;
      const bool d = r.status == "done";
      for (double v : {r.area_logic_um2, r.area_sram_um2, r.area_total_um2, double(r.cells), double(r.sequential_cells),
                       double(r.srams), r.fmax_mhz, r.ws_ns, r.wns_ns, r.tns_ns, r.power_opensta_w, r.power_kaleido_w,
                       r.power_sram_w, r.energy_per_mac_pj, r.energy_per_mac_sram_pj, r.synth_seconds})
        o << "," << (d ? num(v) : "");
      o << "," << csv_field(r.note) << "\n";
    }
    return o.str();
  }

  json sweep_json() const {
    json points = json::array();
    for (const Row& r : rows_) {
      json p = {{"id", r.point->id},
                {"top", r.top},
                {"status", r.status},
                {"config", r.point->config},
                {"clock_ns", r.point->clock_ns},
                {"library", {{"label", r.point->library.label}, {"files", files_text(r.point->library)}}}};
      if (!r.note.empty()) p["note"] = r.note;
      if (r.status == "done") {
        p["library"]["name"] = r.library_name;
        p["metrics"] = {{"design__instance__area", num_json(r.area_total_um2)},
                        {"design__instance__area__stdcell", num_json(r.area_logic_um2)},
                        {"design__instance__area__macros", num_json(r.area_sram_um2)},
                        {"design__instance__count__stdcell", r.cells},
                        {"design__instance__count__sequential", r.sequential_cells},
                        {"design__instance__count__macros", r.srams},
                        {"timing__fmax", num_json(r.fmax_mhz)},
                        {"timing__setup__ws", num_json(r.ws_ns)},
                        {"timing__setup__wns", num_json(r.wns_ns)},
                        {"timing__setup__tns", num_json(r.tns_ns)},
                        {"power__total", num_json(r.power_opensta_w)},
                        {"kaleido__power__vectorless__total", num_json(r.power_kaleido_w)},
                        {"kaleido__power__vectorless__sram", num_json(r.power_sram_w)},
                        {"kaleido__energy__per_mac", num_json(r.energy_per_mac_pj)},
                        {"kaleido__energy__per_mac__with_sram", num_json(r.energy_per_mac_sram_pj)}};
        json blocks = json::object();
        for (const auto& [name, area] : r.blocks) blocks[name] = area;
        p["area_by_block_um2"] = blocks;
        p["synth_seconds"] = r.synth_seconds;
      }
      points.push_back(p);
    }
    return {{"sweep", spec_.name},
            {"description", spec_.description},
            {"kaleido_version", version()},
            {"activity", spec_.activity},
            {"units",
             {{"design__instance__area*", "um^2"},
              {"timing__fmax", "MHz"},
              {"timing__setup__*", "ns"},
              {"power__total", "W"},
              {"kaleido__power__*", "W"},
              {"kaleido__energy__per_mac*", "pJ"}}},
            {"definitions",
             {{"power__total", "OpenSTA report_power, vectorless (set_power_activity -global), logic only"},
              {"kaleido__power__vectorless__total", "kaleido power model, uniform activity, logic only"},
              {"kaleido__power__vectorless__sram", "kaleido SRAM model, `activity` accesses per cycle"},
              {"kaleido__energy__per_mac", std::string(kEnergyDefinition) + "; power__total"},
              {"kaleido__energy__per_mac__with_sram",
               std::string(kEnergyDefinition) + "; power__total + kaleido__power__vectorless__sram"}}},
            {"run_seconds", run_seconds_},
            {"definition", spec_.source},
            {"points", points}};
  }

  // One line per series (top, library, clock, other parameters) against log2(PEs).
  void line(const std::string& file, const std::string& title, const std::string& y_label,
            const std::vector<std::pair<std::string, double Row::*>>& fields) {
    std::vector<svg::Series> series;
    double lo = 1e300, hi = -1e300;
    for (size_t f = 0; f < fields.size(); ++f) {
      std::vector<svg::Series> part;
      for (const Row& r : rows_) {
        if (r.status != "done" || !std::isfinite(r.*(fields[f].second))) continue;
        const std::string name = series_name(r, many_variants_ ? variant(r, varying_) : "") + fields[f].first;
        auto it = std::find_if(part.begin(), part.end(), [&](const svg::Series& s) { return s.name == name; });
        if (it == part.end()) it = part.insert(part.end(), svg::Series{name, {}, f > 0});
        const double x = std::log2(static_cast<double>(r.point->pes()));
        it->points.emplace_back(x, r.*(fields[f].second));
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      series.insert(series.end(), part.begin(), part.end());
    }
    if (series.empty()) return;
    svg::PlotSpec s;
    s.title = title;
    s.x_label = "array size: log2(ROWS*COLS)  (2x2 = 2, 4x4 = 4, 8x8 = 6, 16x16 = 8)";
    s.y_label = y_label;
    s.x_min = lo - 0.5;
    s.x_max = hi + 0.5;
    put(out_ / "plots" / file, svg::line_plot(s, series));
    plots_.push_back(file);
  }

  void plots() {
    fs::create_directories(out_ / "plots");
    line("area.svg", "Area (solid: logic + SRAM model; dashed: logic only)", "area (um^2)",
         {{"", &Row::area_total_um2}, {" logic", &Row::area_logic_um2}});
    line("fmax.svg", "Fmax = 1 / (T - worst slack), OpenSTA", "Fmax (MHz)", {{"", &Row::fmax_mhz}});
    line("power.svg",
         "Vectorless power at the target clock, activity " + num(spec_.activity) +
             " (solid: OpenSTA logic; dashed: + SRAM model)",
         "power (W)", {{"", &Row::power_opensta_w}, {" +SRAM", &Row::power_with_sram_w}});
    line("energy_per_mac.svg",
         "Energy per MAC at full PE utilisation, uniform activity " + num(spec_.activity) + " (dashed: + SRAM)",
         "energy per MAC (pJ)", {{"", &Row::energy_per_mac_pj}, {" +SRAM", &Row::energy_per_mac_sram_pj}});
    block_plots();
  }

  // Bars: one group per array size, one bar per block, for each series.
  void block_plots() {
    std::vector<std::string> names;
    for (const Row& r : rows_) {
      const std::string name = series_name(r, variant(r, varying_));
      if (r.status == "done" && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    for (size_t n = 0; n < names.size(); ++n) {
      std::vector<std::string> categories;
      std::vector<svg::Series> blocks;
      for (const Row& r : rows_) {
        if (r.status != "done" || series_name(r, variant(r, varying_)) != names[n]) continue;
        categories.push_back(array_text(*r.point));
        for (const auto& [block, area] : r.blocks) {
          auto it = std::find_if(blocks.begin(), blocks.end(), [&](const svg::Series& s) { return s.name == block; });
          if (it == blocks.end()) it = blocks.insert(blocks.end(), svg::Series{block, {}, false});
          it->points.resize(categories.size() - 1, {0.0, NAN});  // absent block in earlier sizes
          it->points.emplace_back(0.0, area);
        }
      }
      svg::PlotSpec s;
      s.title = "Logic area by block: " + names[n];
      s.x_label = "array size (ROWS x COLS)";
      s.y_label = "logic area (um^2)";
      std::string file = "area_by_block_" + names[n] + ".svg";
      std::replace(file.begin(), file.end(), ' ', '_');
      put(out_ / "plots" / file, svg::bar_plot(s, categories, blocks));
      plots_.push_back(file);
    }
  }

  std::string summary() const;
  void overhead(std::ostringstream& o) const;

  const SweepSpec& spec_;
  fs::path out_;
  std::vector<Row> rows_;
  double run_seconds_;
  bool many_variants_ = false;
  std::set<std::string> varying_;  // see varying_parameters()
  std::vector<fs::path> written_;
  std::vector<std::string> plots_;
};

std::string Reports::summary() const {
  std::ostringstream o;
  o << "# Sweep `" << spec_.name << "`\n\n";
  if (!spec_.description.empty()) o << spec_.description << "\n\n";
  int done = 0, failed = 0, skipped = 0, pending = 0;
  for (const Row& r : rows_) {
    done += r.status == "done";
    failed += r.status == "failed";
    skipped += r.status == "skipped";
    pending += r.status == "pending";
  }
  o << "kaleido " << version() << ". " << spec_.points.size() << " points x " << spec_.tops.size() << " tops: " << done
    << " done, " << failed << " failed, " << skipped << " skipped, " << pending << " not run. ";
  if (run_seconds_ > 0) o << "The last run took " << num(run_seconds_, 4) << " s (finished points are skipped on a rerun). ";
  o << "Machine-readable: `sweep.csv`, `sweep.json`; per point: `points/<id>/result.json`.\n\n";

  o << "## How the numbers were obtained\n\n";
  o << "- Synthesis: Yosys 0.23, hierarchical (each unique module mapped once), recipe `" << spec_.recipe << "` ("
    << ppa::synth_recipe(spec_.recipe).summary
    << ") with the target period as ABC's delay target; no placement, no clock tree, wire-load model only: "
       "numbers are for relative comparison.\n";
  std::set<std::string> libs;
  for (const Row& r : rows_) {
    if (!libs.insert(r.point->library.label).second) continue;
    o << "- Library `" << r.point->library.label << "`: " << files_text(r.point->library);
    for (const Row& d : rows_)
      if (d.point->library.label == r.point->library.label && d.status == "done") {
        o << " (Liberty library `" << d.library_name << "`)";
        break;
      }
    o << ".\n";
  }
  o << "- Clock: the target period of each point on `clk_i` (ideal clock, reset a false path); Fmax = 1 / (T - worst "
       "setup slack) from OpenSTA (Debian `sta` 2019).\n";
  o << "- Area: logic = Liberty cell areas of the mapped netlist; SRAM = the kaleido SRAM model for the black-boxed "
       "`kld_sram*` memories (gen/ppa/sram_model.hpp: OpenRAM-calibrated area per bit cell and periphery).\n";
  o << "- Power, vectorless, at the target clock, uniform activity " << num(spec_.activity)
    << " transitions per cycle on every net (clock 2): `power_opensta_w` = OpenSTA `report_power` (logic only, "
       "SRAM macros excluded), `power_kaleido_w` = the project's power model (per-transition internal power, "
       "gen/ppa/power_model.hpp), `power_sram_w` = SRAM model with " << num(spec_.activity)
    << " accesses per cycle.\n";
  o << "- " << kEnergyDefinition << ". `E/MAC` uses the OpenSTA logic power, `E/MAC+SRAM` adds the SRAM model. "
       "A point whose WNS is negative does not reach its target clock: its energy is that of a cycle at the target "
       "period.\n\n";

  o << "## Results\n\n";
  const auto right = markdown::Align::Right;
  markdown::Table results({"point", "top", {"PEs", right}, "library", {"clock (ns)", right}, {"logic (um^2)", right},
                           {"SRAM (um^2)", right}, {"total (um^2)", right}, {"cells", right}, {"Fmax (MHz)", right},
                           {"WNS (ns)", right}, {"P OpenSTA (mW)", right}, {"P kaleido (mW)", right},
                           {"P SRAM (mW)", right}, {"E/MAC (pJ)", right}, {"E/MAC+SRAM (pJ)", right},
                           {"synth (s)", right}});
  for (const Row& r : rows_) {
    std::vector<std::string> cells = {point_text(r, r.point->config.name()), r.top, std::to_string(r.point->pes()),
                                      r.point->library.label, clock_text(r.point->clock_ns)};
    if (r.status != "done") {
      cells.push_back(r.status);
      cells.resize(17);  // the measured columns stay empty
    } else {
      cells.insert(cells.end(), {num(r.area_logic_um2), num(r.area_sram_um2), num(r.area_total_um2),
                                 std::to_string(r.cells), num(r.fmax_mhz, 4), num(r.wns_ns, 3),
                                 num(r.power_opensta_w * 1e3, 4), num(r.power_kaleido_w * 1e3, 4),
                                 num(r.power_sram_w * 1e3, 4), num(r.energy_per_mac_pj, 4),
                                 num(r.energy_per_mac_sram_pj, 4), num(r.synth_seconds, 3)});
    }
    results.add_row(std::move(cells));
  }
  o << results.render();
  overhead(o);
  markdown::Table not_done({"point", "top", "status", "reason"});
  for (const Row& r : rows_) {
    if (r.status == "done" || (r.note.empty() && r.status == "pending")) continue;
    std::string note = r.note;
    std::replace(note.begin(), note.end(), '\n', ' ');
    std::replace(note.begin(), note.end(), '|', '/');
    not_done.add_row({r.point->id, r.top, r.status, note});
  }
  if (!not_done.empty()) o << "\n## Not done\n\n" << not_done.render();
  if (!plots_.empty()) {
    o << "\n## Plots\n\n";
    for (const std::string& p : plots_) o << "- [" << p << "](plots/" << p << ")\n";
  }
  return o.str();
}

// The reuse logic's cost: kld_top against the dense kld_plain_top of the same point.
void Reports::overhead(std::ostringstream& o) const {
  const auto right = markdown::Align::Right;
  markdown::Table table({"point", {"logic kld_top (um^2)", right}, {"logic plain (um^2)", right},
                         {"logic overhead", right}, {"total overhead", right}, {"power overhead (OpenSTA)", right},
                         {"Fmax kld_top / plain (MHz)", right}});
  for (const Row& r : rows_) {
    if (r.top != "kld_top" || r.status != "done") continue;
    auto plain = std::find_if(rows_.begin(), rows_.end(), [&](const Row& q) {
      return q.point == r.point && q.top == "kld_plain_top" && q.status == "done";
    });
    if (plain == rows_.end()) continue;
    auto pct = [](double a, double b) { return num(100.0 * (a - b) / b, 3) + " %"; };
    table.add_row({point_text(r, r.point->id), num(r.area_logic_um2), num(plain->area_logic_um2),
                   pct(r.area_logic_um2, plain->area_logic_um2), pct(r.area_total_um2, plain->area_total_um2),
                   pct(r.power_opensta_w, plain->power_opensta_w),
                   num(r.fmax_mhz, 4) + " / " + num(plain->fmax_mhz, 4)});
  }
  if (!table.empty())
    o << "\n## Reuse-logic overhead (kld_top against the dense kld_plain_top of the same point)\n\n" << table.render();
}

}  // namespace

double energy_per_mac_pj(double power_w, double clock_ns, int pes) {
  return power_w * clock_ns * 1e3 / static_cast<double>(pes);  // W x ns = nJ
}

std::vector<Row> collect_rows(const SweepSpec& spec, const fs::path& out) {
  std::vector<Row> rows;
  for (const SweepPoint& p : spec.points) {
    json result, failed;
    if (fs::exists(result_file(out, p))) {
      try {
        result = json::parse(read_file(result_file(out, p)));
      } catch (const std::exception&) {
        result = json();  // unreadable: reported as not run
      }
    }
    if (fs::exists(failure_file(out, p))) {
      try {
        failed = json::parse(read_file(failure_file(out, p)));
      } catch (const std::exception&) {
        failed = json{{"error", "failed.json unreadable"}, {"log", ""}};
      }
    }
    for (const std::string& top : spec.tops) {
      Row r;
      r.point = &p;
      r.top = top;
      r.status = "pending";
      if (!p.library.unavailable.empty()) {
        r.status = "skipped";
        r.note = p.library.unavailable;
      } else if (result.is_object() && result.contains("tops") && result["tops"].contains(top)) {
        fill_done(r, result["tops"][top], result.at("run_times_s").value(top, 0.0));
      } else if (failed.is_object()) {
        r.status = "failed";
        r.note = failed.value("error", std::string()) + " (log: " + failed.value("log", std::string()) + ")";
      }
      rows.push_back(r);
    }
  }
  return rows;
}

std::vector<fs::path> write_reports(const SweepSpec& spec, const fs::path& out, const std::vector<Row>& rows,
                                    double run_seconds) {
  return Reports(spec, out, rows, run_seconds).write();
}

double last_run_seconds(const fs::path& out) {
  const fs::path file = out / "sweep.json";
  if (!fs::exists(file)) return 0;
  try {
    return json::parse(read_file(file)).value("run_seconds", 0.0);
  } catch (const json::exception&) {
    return 0;  // an unreadable old report only loses the time
  }
}

}  // namespace kaleido::sweep
