#include "common/version.hpp"

#include <cstdlib>
#include <filesystem>

namespace kaleido {

std::string version() { return KALEIDO_VERSION; }

std::string source_dir() {
  if (const char* env = std::getenv("KALEIDO_SOURCE_DIR")) return env;
  return KALEIDO_SOURCE_DIR;
}

std::string shared_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("KALEIDO_SHARED_DIR")) return fs::is_directory(env) ? env : "";
  fs::path p = fs::path(source_dir()).parent_path() / "shared";
  return fs::is_directory(p) ? p.string() : "";
}

}  // namespace kaleido
