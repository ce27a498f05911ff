#include "sim/verilator_build.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/process.hpp"
#include "common/version.hpp"

namespace kaleido::sim {

namespace fs = std::filesystem;

namespace {

std::string hex(uint64_t v) { return fmt::format("{:x}", v); }

}  // namespace

fs::path build_dir() {
  if (const char* env = std::getenv("KALEIDO_BUILD_DIR")) return env;
  // An installed kaleido keeps the testbench's static libraries under its data folder.
  const std::string installed = installed_root();
  return installed.empty() ? fs::path(KALEIDO_BINARY_DIR) : fs::path(installed);
}

std::vector<std::string> testbench_libs() {
  std::vector<std::string> libs;
  std::istringstream names(KALEIDO_TB_LIBS);
  for (std::string name; std::getline(names, name, ',');) libs.push_back((build_dir() / "gen" / name).string());
  libs.insert(libs.end(), {"-lz", "-lfmt"});
  return libs;
}

fs::path default_cache_root() {
  if (const char* env = std::getenv("KALEIDO_CACHE_DIR")) return env;
  if (installed_root().empty()) return build_dir() / "verilator-cache";
  // The install prefix may be read-only: the user's cache folder.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return fs::path(xdg) / "kaleido" / "verilator-cache";
  if (const char* home = std::getenv("HOME")) return fs::path(home) / ".cache" / "kaleido" / "verilator-cache";
  return fs::temp_directory_path() / "kaleido-verilator-cache";
}

BuildResult build_model(const BuildSpec& spec) {
  const std::string verilator = find_program("verilator", "verilator");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<fs::path> rtl;
  for (const auto& e : fs::directory_iterator(spec.rtl_dir))
    if (e.path().extension() == ".v") rtl.push_back(e.path());
  if (rtl.empty()) throw FileError(spec.rtl_dir.string(), "holds no .v files");
  std::sort(rtl.begin(), rtl.end());

  uint64_t h = kFnv1aOffset;
  h = fnv1a(h, spec.top + (spec.trace ? " trace" : ""));
  for (const auto& f : rtl) h = fnv1a(fnv1a(h, f.filename().string()), read_file(f));
  for (const auto& f : spec.sources) h = fnv1a(fnv1a(h, f.filename().string()), read_file(f));
  for (const auto& d : spec.include_dirs)
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".hpp" || e.path().extension() == ".h") h = fnv1a(h, read_file(e.path()));
  for (const auto& l : spec.libs) {
    h = fnv1a(h, l);
    if (fs::exists(l)) h = fnv1a(h, std::to_string(fs::last_write_time(l).time_since_epoch().count()));
  }

  const fs::path root = spec.cache_root.empty() ? default_cache_root() : spec.cache_root;
  fs::create_directories(root);
  const fs::path dir = root / (spec.name + "-" + hex(h));
  const fs::path exe = dir / ("V" + spec.top);
  BuildResult r{exe, dir, false, 0.0};
  if (fs::exists(exe)) {
    r.cached = true;
    return r;
  }
  const fs::path stage = root / (spec.name + "-" + hex(h) + ".tmp" + std::to_string(::getpid()));
  fs::remove_all(stage);
  fs::create_directories(stage);
  std::vector<std::string> argv = {verilator, "--cc", "--exe", "--build", "-j", "2", "-O2", "--x-assign", "fast",
                                   "--x-initial", "fast", "-Wno-fatal", "--top-module", spec.top, "--Mdir",
                                   stage.string()};
  if (spec.trace) argv.push_back("--trace-fst");
  // -CFLAGS and -LDFLAGS are one argument each: Verilator hands them to make.
  std::string cflags = "-std=c++17 -O2";
  for (const auto& d : spec.include_dirs) cflags += " -I" + fs::absolute(d).string();
  argv.insert(argv.end(), {"-CFLAGS", cflags});
  std::string ldflags;
  for (const auto& l : spec.libs) ldflags += " " + l;
  if (!ldflags.empty()) argv.insert(argv.end(), {"-LDFLAGS", ldflags});
  for (const auto& f : rtl) argv.push_back(f.string());
  for (const auto& f : spec.sources) argv.push_back(fs::absolute(f).string());
  ProcessOptions po;
  po.log = root / (spec.name + "-" + hex(h) + ".log");
  const ProcessResult run = run_process(argv, po);
  if (!run.ok() || !fs::exists(stage / ("V" + spec.top))) {
    fs::remove_all(stage);
    throw Error("Verilator build of " + spec.top + " failed (" + exit_text(run) + "); log: " + po.log.string() +
                "\n" + tail_lines(run.output, 15));
  }
  std::error_code ec;
  fs::rename(stage, dir, ec);
  if (ec && !fs::exists(exe)) throw FileError(dir.string(), "cannot move the build into place: " + ec.message());
  fs::remove_all(stage, ec);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace kaleido::sim
