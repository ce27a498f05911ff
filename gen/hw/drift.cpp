#include "hw/drift.hpp"

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "hw/generator.hpp"

namespace kaleido::hw {

namespace fs = std::filesystem;

namespace {

int first_differing_line(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
    if (!ga || !gb || la != lb) return n;
  }
}

}  // namespace

DriftReport check_drift(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw FileError(dir.string(), "is not a folder of generated RTL");
  const fs::path manifest_path = dir / "manifest.json";
  HwConfig c;
  try {
    nlohmann::json::parse(read_file(manifest_path)).at("parameters").get_to(c);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(manifest_path.string(), std::string("not a generator manifest: ") + e.what());
  }
  DriftReport r;
  r.config_name = c.name();
  std::map<std::string, std::string> expected;
  for (const GeneratedFile& f : generate_files(c)) expected[f.name] = f.text;
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "README.md") continue;
    present.insert(name);
    auto it = expected.find(name);
    if (it == expected.end()) {
      r.differences.push_back(name + ": not produced by the generator");
      continue;
    }
    const std::string text = read_file(e.path());
    if (text != it->second)
      r.differences.push_back(name + ": differs from the generator's output (first at line " +
                              std::to_string(first_differing_line(text, it->second)) + ")");
  }
  for (const auto& [name, text] : expected)
    if (!present.count(name)) r.differences.push_back(name + ": missing");
  return r;
}

std::vector<fs::path> default_rtl_dirs() {
  const fs::path root = fs::path(source_dir()) / "rtl";
  return {root / default_config_8x8().name(), root / default_config_16x16().name()};
}

}  // namespace kaleido::hw
