// `kaleido lint`: Verilator lint of generated RTL over a configuration matrix.
#include <cstdio>

#include "checks/lint.hpp"
#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::cli {

void register_lint(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "lint", "verilator --lint-only -Wall over the built-in configuration matrix, or over given RTL folders");
  sub->add_option("--rtl", *dirs, "RTL folder(s) to lint instead of the matrix");
  sub->add_option("--out,-o", *out, "Folder for lint.json and lint.md");
  sub->callback([dirs, out] {
    std::vector<checks::LintResult> res;
    if (dirs->empty()) {
      res = checks::lint_matrix(checks::default_lint_matrix(),
                                [](const std::string& s) { std::fprintf(stderr, "kaleido lint: %s\n", s.c_str()); });
    } else {
      for (const auto& d : *dirs)
        for (auto& r : checks::lint_folder(d)) res.push_back(std::move(r));
    }
    int bad = 0;
    for (const auto& r : res) {
      std::printf("%s %s %s (%.1f s)\n", r.clean ? "clean   " : "WARNINGS", r.name.c_str(), r.top.c_str(), r.seconds);
      if (!r.clean) std::printf("%s", r.output.c_str());
      bad += !r.clean;
    }
    if (!out->empty()) {
      std::filesystem::create_directories(*out);
      write_file_atomic(std::filesystem::path(*out) / "lint.json", checks::lint_report_json(res).dump(2) + "\n");
      write_file_atomic(std::filesystem::path(*out) / "lint.md", checks::lint_report_markdown(res));
    }
    if (bad) throw Error(std::to_string(bad) + " lint run(s) reported warnings");
  });
}

}  // namespace kaleido::cli
