// `kaleido gen`: emit the accelerator's RTL for one configuration.
#include <chrono>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "common/error.hpp"
#include "hw/generator.hpp"

namespace kaleido::cli {

void register_gen(CLI::App& app) {
  auto opts = std::make_shared<HwOptions>();
  auto out = std::make_shared<std::string>();
  auto print_name = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("gen", "Generate the accelerator's Verilog, manifest and register-map header");
  opts->add_to(*sub);
  sub->add_option("--out,-o", *out, "Output folder (created or replaced as a whole)");
  sub->add_flag("--print-name", *print_name,
                "Only print the configuration's name (the folder name of its RTL and reports) and exit");
  sub->callback([opts, out, print_name] {
    const auto t0 = std::chrono::steady_clock::now();
    const hw::HwConfig c = opts->config();
    if (*print_name) {
      std::printf("%s\n", c.name().c_str());
      return;
    }
    if (out->empty()) throw ConfigError("--out", "(none)", "name the output folder, e.g. -o rtl/" + c.name());
    const auto files = hw::generate_files(c);
    hw::write_rtl(c, *out);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("kaleido gen: %s -> %s (%zu files, %.2f s)\n", c.name().c_str(), out->c_str(), files.size(), secs);
  });
}

}  // namespace kaleido::cli
