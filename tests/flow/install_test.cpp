// `cmake --install`: the installed kaleido finds its data (generic Liberty
// library, Yosys and OpenSTA script templates) relative to its own
// executable, also after the install folder has moved, and runs `kaleido gen`
// and `kaleido synth` on the default library from there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "support/test_dir.hpp"
#include "support/tools.hpp"

namespace kaleido {
namespace {

namespace fs = std::filesystem;

using testing::have_tool;

int run(const std::string& cmd, const fs::path& log) {
  return std::system(("cd / && " + cmd + " > '" + log.string() + "' 2>&1").c_str());
}

TEST(Install, InstalledKaleidoGeneratesAndSynthesisesFromItsOwnData) {
  if (!have_tool("cmake") || !have_tool("yosys") || !have_tool("sta"))
    GTEST_SKIP() << "cmake, yosys or sta missing (Debian packages cmake, yosys, opensta)";
  const fs::path build = fs::path(KALEIDO_TEST_KALEIDO_BIN).parent_path().parent_path();
  ASSERT_TRUE(fs::exists(build / "CMakeCache.txt")) << build;
  testing::TestDir dir("install");
  const fs::path first = dir.path() / "first", prefix = dir.path() / "prefix";
  const fs::path log = dir.path() / "log.txt";
  ASSERT_EQ(run("cmake --install '" + build.string() + "' --prefix '" + first.string() + "'", log), 0) << read_file(log);
  for (const char* f : {"bin/kaleido", "share/kaleido/kaleido-install.txt", "share/kaleido/liberty/kaleido_generic.lib",
                        "share/kaleido/scripts/yosys/synth.ys.in", "share/kaleido/scripts/sta/sta.tcl.in",
                        "share/kaleido/tb/tb_main.cpp", "share/kaleido/gen/libkaleido_hw.a",
                        "share/kaleido/gen/golden/gemm.hpp"})
    EXPECT_TRUE(fs::exists(first / f)) << f;
  // Relocatable: the data is found next to wherever the executable now is.
  fs::rename(first, prefix);
  const std::string kaleido = (prefix / "bin" / "kaleido").string();
  const fs::path rtl = dir.path() / "rtl", out = dir.path() / "synth";
  ASSERT_EQ(run("'" + kaleido + "' gen --rows 2 --cols 2 --hw-group-w 2 --out '" + rtl.string() + "'", log), 0)
      << read_file(log);
  ASSERT_TRUE(fs::exists(rtl / "kld_pe.v")) << read_file(log);
  ASSERT_EQ(run("'" + kaleido + "' synth --rtl '" + rtl.string() + "' --top kld_pe --clock-ns 5 --out '" +
                    out.string() + "'",
                log),
            0)
      << read_file(log);
  const nlohmann::json j = nlohmann::json::parse(read_file(out / "synth.json"));
  const std::string lib = j.dump();
  EXPECT_NE(lib.find((prefix / "share/kaleido/liberty/kaleido_generic.lib").string()), std::string::npos)
      << "the installed library is the one used";
  EXPECT_EQ(lib.find(build.string() + "/liberty"), std::string::npos) << "nothing from the build folder";
  EXPECT_GT(j.at("metrics").at("design__instance__area__stdcell").at("value").get<double>(), 0.0);
}

}  // namespace
}  // namespace kaleido
