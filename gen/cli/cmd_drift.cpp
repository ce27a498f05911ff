// `kaleido drift`: checked-in RTL against the generator.
#include <cstdio>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "hw/drift.hpp"

namespace kaleido::cli {

void register_drift(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "drift", "Check that generated RTL folders equal the generator's output for their manifest's parameters");
  sub->add_option("--rtl", *dirs, "RTL folder(s) to check (default: the checked-in rtl/ folders)");
  sub->callback([dirs] {
    std::vector<std::filesystem::path> todo(dirs->begin(), dirs->end());
    if (todo.empty()) todo = hw::default_rtl_dirs();
    int bad = 0;
    for (const auto& d : todo) {
      const hw::DriftReport r = hw::check_drift(d);
      std::printf("%s %s (%s)\n", r.clean() ? "clean  " : "DRIFTED", d.string().c_str(), r.config_name.c_str());
      for (const auto& diff : r.differences) std::printf("  %s\n", diff.c_str());
      bad += !r.clean();
    }
    if (bad) throw Error(std::to_string(bad) + " RTL folder(s) differ from the generator; regenerate deliberately with scripts/regen_rtl.sh");
  });
}

}  // namespace kaleido::cli
