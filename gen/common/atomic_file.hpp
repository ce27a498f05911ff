// Files are written to a temporary name in the target folder and renamed into
// place only when complete, so a failure never leaves a partial output behind.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace kaleido {

class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& path, bool binary = false);
  ~AtomicFile();  // removes the temporary file unless commit() was called
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void commit();  // flush, check, rename into place; throws FileError on failure

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Convenience: write a whole text file atomically.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

// Read a whole file; throws FileError when missing or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace kaleido
