#pragma once

#include <string>

namespace kaleido {

// Version of the tool; recorded in every generated file and report.
std::string version();

// The repository the tool was built from (rtl/, scripts/, reports/ live there).
std::string source_dir();

// The shared folder beside the repository (../shared), where the open PDK
// libraries are read from when present; empty when it does not exist.
std::string shared_dir();

// The project's generic Liberty library, generated into the build folder by
// scripts/liberty/make_kaleido_generic.py. Throws kaleido::Error when missing.
std::string generic_liberty();

}  // namespace kaleido
