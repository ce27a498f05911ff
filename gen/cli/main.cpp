// kaleido: generate, verify and measure the Kaleido reuse accelerator.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kaleido " + kaleido::version() +
               ": golden model, RTL generator, testbench and PPA flow for channel-wise reuse in video DiTs"};
  app.set_version_flag("--version", "kaleido " + kaleido::version());
  app.require_subcommand(1);
  kaleido::cli::add_config_option(app);
  kaleido::cli::register_golden(app);
  kaleido::cli::register_gen(app);
  kaleido::cli::register_sim(app);
  kaleido::cli::register_drift(app);
  kaleido::cli::register_lint(app);
  kaleido::cli::register_study(app);
  kaleido::cli::register_synth(app);
  kaleido::cli::register_equiv(app);
  kaleido::cli::register_sweep(app);
  kaleido::cli::register_flow(app);
  kaleido::cli::register_soak(app);
  kaleido::cli::register_ring_plan(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kaleido::Error& e) {
    std::fprintf(stderr, "kaleido: error: %s\n", e.what());
    return kaleido::kExitUserError;
  } catch (const kaleido::InternalError& e) {  // what() already starts with "internal: "
    std::fprintf(stderr, "kaleido: %s (a bug in kaleido; please report it)\n", e.what());
    return kaleido::kExitInternalError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kaleido: internal error: %s (a bug in kaleido; please report it)\n", e.what());
    return kaleido::kExitInternalError;
  }
  return 0;
}
