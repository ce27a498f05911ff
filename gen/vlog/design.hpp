// A set of modules written as one file per module (<module>.v), checked as a
// whole (every instance resolves, port lists agree, no recursion) and written
// all-or-nothing.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "vlog/module.hpp"

namespace kaleido::vlog {

struct EmittedFile {
  std::string name;  // <module>.v
  std::string text;
};

class Design {
 public:
  explicit Design(FileHeader header);

  Module& add_module(const std::string& name, const std::string& description = "");
  Module& add(Module&& m);
  bool has(const std::string& name) const;
  const Module& module(const std::string& name) const;  // throws BuildError when absent
  const std::vector<std::unique_ptr<Module>>& modules() const { return modules_; }
  const FileHeader& header() const { return header_; }

  // Modules that no other module instantiates, in order of addition.
  std::vector<std::string> tops() const;
  // Every module's own checks, plus: instantiated modules exist, their port
  // lists still match the connections, and no module instantiates itself.
  void check() const;
  // All files in memory, in order of addition (checks first).
  std::vector<EmittedFile> emit() const;
  // Writes every file into `out_dir` or nothing: the text is produced and checked
  // first, files go to a staging folder beside the targets and are renamed
  // into place (replaced files are restored if a rename fails). `out_dir` may
  // exist; its parent must. Throws kaleido::FileError on I/O failure.
  std::vector<std::filesystem::path> write(const std::filesystem::path& out_dir) const;

  std::vector<WaiverRecord> waivers() const;
  std::vector<UnusedRecord> unused_bits() const;

 private:
  FileHeader header_;
  std::vector<std::unique_ptr<Module>> modules_;
};

}  // namespace kaleido::vlog
