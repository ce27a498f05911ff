#include "checks/lint.hpp"

#include <algorithm>
#include <sstream>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/markdown.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "hw/generator.hpp"

namespace kaleido::checks {

namespace fs = std::filesystem;

std::vector<hw::HwConfig> default_lint_matrix() {
  std::vector<hw::HwConfig> m;
  auto add = [&](int rows, int cols, int dw, int gw, int mul_pipe, int lanes, uint32_t policies, int gather_w = 1,
                 int lane_groups = 1) {
    hw::HwConfig c;
    c.rows = rows;
    c.cols = cols;
    c.data_w = dw;
    c.acc_w = 2 * dw + 8 > 64 ? 64 : 2 * dw + 8;
    c.group_w = gw;
    c.max_t = 2;
    c.max_h = 4;
    c.max_w = 6;
    c.max_k = std::max(gw * 4, rows);
    c.max_k -= c.max_k % gw;
    c.max_m = cols + 3;
    c.mul_pipe = mul_pipe;
    c.lanes = lanes;
    c.policies = policies;
    c.gather_w = gather_w;
    c.lane_groups = lane_groups;
    m.push_back(c);
  };
  add(1, 1, 8, 1, 0, 0, 7);
  add(1, 32, 4, 1, 1, 2, 7);
  add(2, 3, 16, 2, 0, 0, 2);
  add(3, 5, 8, 1, 0, 1, 5, 1, 2);
  add(4, 4, 4, 4, 1, 0, 7, 2);
  add(8, 8, 8, 8, 0, 0, 7);
  add(8, 2, 16, 2, 1, 3, 1);
  add(12, 7, 8, 4, 0, 0, 6, 3, 2);
  add(16, 16, 8, 8, 0, 1, 7);
  add(32, 1, 4, 8, 1, 0, 4);
  add(5, 32, 16, 1, 0, 0, 3);
  add(32, 32, 8, 4, 0, 4, 7, 1, 2);
  return m;
}

std::vector<LintResult> lint_folder(const fs::path& dir) {
  const std::string verilator = find_program("verilator", "verilator");
  if (!fs::is_directory(dir)) throw FileError(dir.string(), "is not a folder of generated RTL");
  std::vector<LintResult> out;
  nlohmann::json waivers = nlohmann::json::array();
  if (fs::exists(dir / "manifest.json"))
    waivers = nlohmann::json::parse(read_file(dir / "manifest.json")).value("lint_waivers", nlohmann::json::array());
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".v") files.push_back(e.path().string());
  if (files.empty()) throw FileError(dir.string(), "holds no .v files");
  std::sort(files.begin(), files.end());
  for (const char* top : {"kld_top", "kld_plain_top"}) {
    LintResult r;
    r.name = dir.filename().string();
    r.top = top;
    r.waivers = waivers;
    std::vector<std::string> argv = {verilator, "--lint-only", "-Wall", "--top-module", top};
    argv.insert(argv.end(), files.begin(), files.end());
    const ProcessResult run = run_process(argv);
    r.seconds = run.seconds;
    r.output = run.output;
    r.clean = run.ok() && r.output.empty();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LintResult> lint_matrix(const std::vector<hw::HwConfig>& configs,
                                    const std::function<void(const std::string&)>& progress) {
  std::vector<LintResult> all;
  const fs::path root = fs::temp_directory_path() / ("kaleido_lint_matrix_" + std::to_string(::getpid()));
  fs::create_directories(root);
  for (size_t k = 0; k < configs.size(); ++k) {
    const hw::HwConfig& c = configs[k];
    if (progress) progress("[" + std::to_string(k + 1) + "/" + std::to_string(configs.size()) + "] " + c.name());
    const fs::path dir = root / c.name();
    hw::write_rtl(c, dir);
    for (LintResult& r : lint_folder(dir)) {
      r.name = c.name() + " (mul_pipe " + std::to_string(c.mul_pipe) + ", lanes " + std::to_string(c.det_lanes()) +
               ", policies " + std::to_string(c.policies) + ", gather_w " + std::to_string(c.gather_w) +
               ", lane_groups " + std::to_string(c.lane_groups) + ")";
      all.push_back(std::move(r));
    }
    fs::remove_all(dir);
  }
  fs::remove_all(root);
  return all;
}

nlohmann::json lint_report_json(const std::vector<LintResult>& results) {
  nlohmann::json j = {{"tool", "verilator --lint-only -Wall"}, {"generator_version", version()}};
  nlohmann::json rows = nlohmann::json::array();
  int clean = 0;
  for (const LintResult& r : results) {
    clean += r.clean;
    rows.push_back({{"config", r.name}, {"top", r.top}, {"clean", r.clean}, {"messages", r.output},
                    {"waivers", r.waivers}, {"seconds", r.seconds}});
  }
  j["results"] = rows;
  j["clean"] = clean;
  j["total"] = results.size();
  return j;
}

std::string lint_report_markdown(const std::vector<LintResult>& results) {
  std::ostringstream o;
  int clean = 0, waived = 0;
  for (const LintResult& r : results) {
    clean += r.clean;
    waived += static_cast<int>(r.waivers.size());
  }
  o << "# Lint report\n\n`verilator --lint-only -Wall` (Verilator 5.006, no blanket waivers), kaleido "
    << version() << ": " << clean << " of " << results.size() << " clean; " << waived
    << " per-line waivers in all.\n\n";
  markdown::Table table({"configuration", "top", "result", "seconds"});
  for (const LintResult& r : results)
    table.add_row({r.name, r.top, r.clean ? "clean" : "**warnings**", sig(r.seconds, 6)});
  o << table.render();
  for (const LintResult& r : results) {
    for (const auto& w : r.waivers)
      o << "\n- waiver in " << r.name << ": " << w.value("module", "") << " " << w.value("target", "") << " "
        << w.value("code", "") << ": " << w.value("justification", "");
    if (!r.clean) o << "\n\n### " << r.name << " " << r.top << "\n\n```\n" << r.output << "```\n";
  }
  o << "\n";
  return o.str();
}

}  // namespace kaleido::checks
