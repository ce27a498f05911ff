#include "vlog/design.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

namespace kaleido::vlog {

namespace fs = std::filesystem;

Design::Design(FileHeader header) : header_(std::move(header)) {}

Module& Design::add_module(const std::string& name, const std::string& description) {
  return add(Module(name, description));
}

Module& Design::add(Module&& m) {
  if (has(m.name())) throw BuildError("design: module " + m.name() + " is added twice");
  modules_.push_back(std::make_unique<Module>(std::move(m)));
  return *modules_.back();
}

bool Design::has(const std::string& name) const {
  for (const auto& m : modules_)
    if (m->name() == name) return true;
  return false;
}

const Module& Design::module(const std::string& name) const {
  for (const auto& m : modules_)
    if (m->name() == name) return *m;
  throw BuildError("design: no module named " + name);
}

std::vector<std::string> Design::tops() const {
  std::vector<std::string> r;
  for (const auto& m : modules_) {
    bool used = false;
    for (const auto& other : modules_)
      for (const InstanceItem* i : other->instances()) used = used || i->module() == m->name();
    if (!used) r.push_back(m->name());
  }
  return r;
}

void Design::check() const {
  for (const auto& m : modules_) {
    m->check();
    for (const InstanceItem* inst : m->instances()) {
      const std::string what = "module " + m->name() + ", instance " + inst->name() + ": ";
      if (!has(inst->module()))
        throw BuildError(what + "instantiates " + inst->module() + ", which is not in the design");
      const std::vector<PortInfo> now = module(inst->module()).ports();
      const std::vector<PortInfo>& then = inst->ports();
      bool same = now.size() == then.size();
      for (size_t k = 0; same && k < now.size(); ++k)
        same = now[k].name == then[k].name && now[k].dir == then[k].dir && now[k].width == then[k].width &&
               now[k].is_signed == then[k].is_signed;
      if (!same)
        throw BuildError(what + "the ports of " + inst->module() +
                         " changed after the instance was connected; build submodules completely first");
      const std::vector<ParamInfo> params_now = module(inst->module()).parameters();
      const std::vector<ParamInfo>& params_then = inst->params();
      same = params_now.size() == params_then.size();
      for (size_t k = 0; same && k < params_now.size(); ++k)
        same = params_now[k].name == params_then[k].name && params_now[k].width == params_then[k].width;
      if (!same)
        throw BuildError(what + "the parameters of " + inst->module() +
                         " changed after the instance was added; build submodules completely first");
    }
  }
  // Depth-first search for instantiation cycles.
  std::vector<int> state(modules_.size(), 0);  // 0 new, 1 on the stack, 2 done
  std::function<void(size_t, const std::string&)> visit = [&](size_t k, const std::string& path) {
    state[k] = 1;
    for (const InstanceItem* inst : modules_[k]->instances())
      for (size_t j = 0; j < modules_.size(); ++j) {
        if (modules_[j]->name() != inst->module()) continue;
        if (state[j] == 1)
          throw BuildError("design: modules instantiate each other in a cycle: " + path + " -> " + inst->module());
        if (state[j] == 0) visit(j, path + " -> " + inst->module());
      }
    state[k] = 2;
  };
  for (size_t k = 0; k < modules_.size(); ++k)
    if (state[k] == 0) visit(k, modules_[k]->name());
}

std::vector<EmittedFile> Design::emit() const {
  check();
  std::vector<EmittedFile> files;
  for (const auto& m : modules_) files.push_back({m->name() + ".v", m->emit(header_)});
  return files;
}

namespace {

std::atomic<int> g_staging_counter{0};

std::string why() { return std::strerror(errno); }

// Writes the files into a fresh staging folder `staging` (created here).
void stage(const fs::path& staging, const fs::path& target, const std::vector<EmittedFile>& files) {
  std::error_code ec;
  if (!fs::create_directory(staging, ec) || ec)
    throw FileError(target.string(),
                    "cannot write into the output folder: " + (ec ? ec.message() : std::string("exists")));
  for (const EmittedFile& f : files) {
    std::ofstream out(staging / f.name, std::ios::binary | std::ios::trunc);
    out << f.text;
    out.flush();
    if (!out) {
      const std::string reason = why();
      fs::remove_all(staging, ec);
      throw FileError((target / f.name).string(), "cannot write: " + reason);
    }
  }
}

}  // namespace

std::vector<fs::path> Design::write(const fs::path& out_dir) const {
  const std::vector<EmittedFile> files = emit();  // every check passes before anything touches the disk
  fs::path dir = out_dir.lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "rtl/" names the folder "rtl"
  const std::string tag = ".vlog-staging-" + std::to_string(::getpid()) + "-" + std::to_string(g_staging_counter++);
  std::vector<fs::path> written;
  for (const EmittedFile& f : files) written.push_back(dir / f.name);
  std::error_code ec;

  if (!fs::exists(dir, ec)) {
    // A new folder: stage beside it, then rename the whole folder into place.
    const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
      throw FileError(dir.string(), "parent folder " + parent.string() + " does not exist");
    const fs::path staging = parent / (dir.filename().string() + tag);
    stage(staging, dir, files);
    fs::rename(staging, dir, ec);
    if (ec) {
      const std::string reason = ec.message();
      fs::remove_all(staging, ec);
      throw FileError(dir.string(), "cannot rename the output folder into place: " + reason);
    }
    return written;
  }

  if (!fs::is_directory(dir, ec)) throw FileError(dir.string(), "exists and is not a folder");
  for (const EmittedFile& f : files)
    if (fs::exists(dir / f.name, ec) && !fs::is_regular_file(dir / f.name, ec))
      throw FileError((dir / f.name).string(), "exists and is not a regular file");
  const fs::path staging = dir / tag;
  stage(staging, dir, files);
  // Rename into place; keep what was replaced so a failure can be undone.
  std::vector<std::pair<fs::path, fs::path>> done;  // (target, backup or empty)
  for (const EmittedFile& f : files) {
    const fs::path target = dir / f.name;
    fs::path backup;
    if (fs::exists(target, ec)) {
      backup = staging / (f.name + ".old");
      fs::rename(target, backup, ec);
    }
    if (!ec) fs::rename(staging / f.name, target, ec);
    if (ec) {
      const std::string reason = ec.message();
      std::error_code ignore;
      if (!backup.empty() && !fs::exists(target, ignore)) fs::rename(backup, target, ignore);
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        fs::remove(it->first, ignore);
        if (!it->second.empty()) fs::rename(it->second, it->first, ignore);
      }
      fs::remove_all(staging, ignore);
      throw FileError(target.string(), "cannot rename into place: " + reason);
    }
    done.emplace_back(target, backup);
  }
  fs::remove_all(staging, ec);
  return written;
}

std::vector<WaiverRecord> Design::waivers() const {
  std::vector<WaiverRecord> r;
  for (const auto& m : modules_)
    for (auto& w : m->waivers()) r.push_back(w);
  return r;
}

std::vector<UnusedRecord> Design::unused_bits() const {
  std::vector<UnusedRecord> r;
  for (const auto& m : modules_)
    for (auto& u : m->unused_bits()) r.push_back(u);
  return r;
}

}  // namespace kaleido::vlog
