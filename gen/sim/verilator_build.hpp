// Builds Verilator models with a C++ harness into a cache keyed by a hash of
// every input (RTL text, harness sources, flags, Verilator version), so a
// rerun of the same configuration does not rebuild.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kaleido::sim {

struct BuildSpec {
  std::string name;                                // prefix of the cache folder, e.g. "kld_top"
  std::filesystem::path rtl_dir;                   // every *.v in it is compiled
  std::string top;                                 // top module
  std::vector<std::filesystem::path> sources;      // harness C++ files
  std::vector<std::filesystem::path> include_dirs;
  std::vector<std::string> libs;                   // static libraries / -l flags for the link
  bool trace = false;                              // --trace-fst
  std::filesystem::path cache_root;                // default: <build>/verilator-cache
};

struct BuildResult {
  std::filesystem::path exe;
  std::filesystem::path dir;
  bool cached = false;
  double seconds = 0.0;
};

// Throws kaleido::Error with the log's path and tail when Verilator or the
// C++ compiler fails.
BuildResult build_model(const BuildSpec& spec);

// The build folder of this kaleido (static libraries live there) and the
// default cache root.
std::filesystem::path build_dir();
// What the testbench (tb/tb_main.cpp) links: the static libraries CMake lists
// (KALEIDO_TB_LIBS in gen/CMakeLists.txt) under build_dir()/gen, then zlib and {fmt}.
std::vector<std::string> testbench_libs();
std::filesystem::path default_cache_root();

}  // namespace kaleido::sim
