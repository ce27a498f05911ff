#pragma once

#include <string>

namespace kaleido {

// Version of the tool; recorded in every generated file and report.
std::string version();

// The repository the tool was built from (rtl/, scripts/, reports/ live there),
// or, for an installed kaleido, its data folder (installed_root()).
std::string source_dir();

// <prefix>/share/kaleido when this executable runs from <prefix>/bin after
// `cmake --install` (found from /proc/self/exe and the marker file
// kaleido-install.txt there); empty when it runs from a build folder.
std::string installed_root();

// The shared folder beside the repository (../shared), where the open PDK
// libraries are read from when present; empty when it does not exist.
std::string shared_dir();

// True when `path` lies in the repository but outside its ignored build*/ and
// out/ folders: tools must not write work files (e.g. PDK data) there.
bool in_tracked_tree(const std::string& path);

// The project's generic Liberty library, generated into the build folder by
// scripts/liberty/make_kaleido_generic.py (installed under
// installed_root()/liberty). Throws kaleido::Error when missing.
std::string generic_liberty();

}  // namespace kaleido
