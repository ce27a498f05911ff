// Each subcommand of `kaleido` registers itself on the application here.
#pragma once

#include <CLI/CLI.hpp>

namespace kaleido::cli {

void register_golden(CLI::App& app);
void register_gen(CLI::App& app);
void register_sim(CLI::App& app);
void register_drift(CLI::App& app);
void register_lint(CLI::App& app);
void register_study(CLI::App& app);
void register_synth(CLI::App& app);
void register_equiv(CLI::App& app);
void register_sweep(CLI::App& app);
void register_flow(CLI::App& app);
void register_soak(CLI::App& app);
void register_ring_plan(CLI::App& app);

}  // namespace kaleido::cli
