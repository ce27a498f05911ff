#include "common/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>
#include <unistd.h>

#include "common/error.hpp"

namespace kaleido {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const fs::path& path, bool binary) : path_(path) {
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw FileError(path.string(), "folder " + dir.string() + " does not exist");
  tmp_ = dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
  out_.open(tmp_, binary ? std::ios::out | std::ios::binary | std::ios::trunc : std::ios::out | std::ios::trunc);
  if (!out_) throw FileError(path.string(), std::string("cannot write: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw FileError(path_.string(), "write failed (disk full?)");
  out_.close();
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) throw FileError(path_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  AtomicFile f(path);
  f.stream() << content;
  f.commit();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path.string(), fs::exists(path) ? "cannot be read" : "does not exist");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kaleido
