#include "common/version.hpp"

#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"

namespace kaleido {

std::string version() { return KALEIDO_VERSION; }

std::string installed_root() {
  namespace fs = std::filesystem;
  static const std::string root = [] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::string();
    const fs::path share = exe.parent_path().parent_path() / "share" / "kaleido";
    return fs::exists(share / "kaleido-install.txt", ec) ? share.string() : std::string();
  }();
  return root;
}

std::string source_dir() {
  if (const char* env = std::getenv("KALEIDO_SOURCE_DIR")) return env;
  const std::string installed = installed_root();
  return installed.empty() ? KALEIDO_SOURCE_DIR : installed;
}

std::string shared_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("KALEIDO_SHARED_DIR")) return fs::is_directory(env) ? env : "";
  fs::path p = fs::path(source_dir()).parent_path() / "shared";
  return fs::is_directory(p) ? p.string() : "";
}

bool in_tracked_tree(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path rel = fs::weakly_canonical(fs::path(path)).lexically_relative(fs::weakly_canonical(fs::path(source_dir())));
  if (rel.empty() || *rel.begin() == "..") return false;
  const std::string top = rel.begin()->string();
  return top != "out" && top.compare(0, 5, "build") != 0;
}

std::string generic_liberty() {
  const std::string installed = installed_root();
  const std::string path = installed.empty() ? KALEIDO_GENERIC_LIB : installed + "/liberty/kaleido_generic.lib";
  if (!std::filesystem::exists(path))
    throw Error(path + ": the generic Liberty library is missing; the build makes it from "
                "scripts/liberty/make_kaleido_generic.py (cmake --build <build dir>)");
  return path;
}

}  // namespace kaleido
