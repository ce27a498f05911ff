// Helpers of the hardware tests: temporary folders, running tools, and
// building the block harnesses of tb/unit/ into the Verilator cache.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/version.hpp"
#include "hw/blocks.hpp"
#include "hw/generator.hpp"
#include "hw/hw_config.hpp"
#include "sim/verilator_build.hpp"
#include "support/tools.hpp"

namespace kaleido::hwtest {

namespace fs = std::filesystem;

// A fresh folder under $TMPDIR (or /tmp), unique per process; removed when
// the object goes out of scope.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const char* base = std::getenv("TMPDIR");
    path_ = fs::path(base ? base : "/tmp") / ("kaleido_hw_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

using kaleido::testing::have_tool;

struct ToolRun {
  int status = -1;  // exit status (128 + signal when killed)
  std::string output;  // stdout and stderr together
};

inline ToolRun run_tool(const std::string& cmd) {
  ToolRun r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int raw = ::pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
  return r;
}

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// Verilog files of a written RTL folder, sorted, as one command-line string
// (temporary paths have no spaces or quotes).
inline std::string verilog_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".v") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::string s;
  for (const auto& f : files) s += " " + f;
  return s;
}

// Modules `top` instantiates, itself included.
inline std::set<std::string> hierarchy_of(const vlog::Design& d, const std::string& top) {
  std::set<std::string> need;
  std::vector<std::string> todo{top};
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!need.insert(name).second) continue;
    for (const vlog::InstanceItem* i : d.module(name).instances()) todo.push_back(i->module());
  }
  return need;
}

// Writes the files `top` needs (itself and every module below it) and the
// manifest into `dir`, so a block's Verilator build depends only on the
// text of its own hierarchy.
inline void write_block_rtl(const hw::HwConfig& c, const std::string& top, const fs::path& dir) {
  const std::set<std::string> need = hierarchy_of(hw::build_design(c), top);
  fs::create_directories(dir);
  for (const hw::GeneratedFile& f : hw::generate_files(c)) {
    const bool verilog = f.name.size() > 2 && f.name.compare(f.name.size() - 2, 2, ".v") == 0;
    if (f.name == "manifest.json" || (verilog && need.count(f.name.substr(0, f.name.size() - 2))))
      write_file_atomic(dir / f.name, f.text);
  }
}

// Builds (or finds in the cache) the harness tb/unit/<harness>.cpp around
// block `top` of configuration `c`, from kaleido gen's design, or from the
// block's own design (`own`: the ring's blocks, not yet in kld_top). The RTL is
// written to a temporary folder (the cache key is its text, not its path).
inline sim::BuildResult build_block(const hw::HwConfig& c, const std::string& top, const std::string& harness,
                                    const vlog::Design* own = nullptr) {
  TempDir rtl("rtl_" + harness + "_" + c.name());
  if (own) {
    fs::create_directories(rtl.path());
    for (const vlog::EmittedFile& f : own->emit()) write_file_atomic(rtl.path() / f.name, f.text);
  } else {
    write_block_rtl(c, top, rtl.path());
  }
  const fs::path src = source_dir(), bld = sim::build_dir();
  sim::BuildSpec spec;
  spec.name = "unit_" + harness;
  spec.rtl_dir = rtl.path();
  spec.top = top;
  spec.sources = {src / "tb" / "unit" / (harness + ".cpp")};
  spec.include_dirs = {src / "gen", src / "tb", src / "tb" / "unit"};
  spec.libs = {(bld / "gen/libkaleido_hw.a").string(), (bld / "gen/libkaleido_vlog.a").string(),
               (bld / "gen/libkaleido_golden.a").string(), (bld / "gen/libkaleido_common.a").string(), "-lz", "-lfmt"};
  return sim::build_model(spec);
}

// Runs a harness on a job (the configuration and the stimulus options, see
// tb/unit/unit_common.hpp); the harness prints PASS or FAIL lines.
inline ToolRun run_block(const fs::path& exe, const nlohmann::json& job, const std::string& tag) {
  TempDir dir("job_" + tag);
  const fs::path file = dir.path() / "job.json";
  write_file_atomic(file, job.dump(2) + "\n");
  return run_tool("'" + exe.string() + "' '" + file.string() + "'");
}

}  // namespace kaleido::hwtest
