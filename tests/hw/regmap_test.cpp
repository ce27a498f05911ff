// The register map (gen/hw/regmap) as the single source of the register
// blocks, the C++ header, the markdown table and the manifest: its fields fit
// their words and do not overlap, addresses are distinct and within the
// address bits, widths follow the configuration; every field appears in the
// header's table and the markdown; each top declares a flop of the field's
// width for exactly the RW fields it implements. (The testbench reads the map
// back from both tops' RTL: Testbench.BothTopsReadBackTheRegisterMap.)
#include <gtest/gtest.h>

#include <set>

#include "common/text.hpp"
#include "hw/regmap.hpp"
#include "hw_test_util.hpp"

namespace kaleido::hwtest {
namespace {

std::vector<hw::HwConfig> regmap_configs() {
  hw::HwConfig odd;
  odd.rows = 4;
  odd.cols = 3;
  odd.group_w = 2;
  odd.data_w = 5;
  odd.acc_w = 20;
  odd.max_t = 2;
  odd.max_h = 3;
  odd.max_w = 4;
  odd.max_k = 12;
  odd.max_m = 5;
  odd.lanes = 2;
  odd.win_cap = 8;
  return {odd, hw::default_config_8x8(), hw::default_config_16x16()};
}

std::string file_of(const hw::HwConfig& c, const std::string& name) {
  for (const hw::GeneratedFile& f : hw::generate_files(c))
    if (f.name == name) return f.text;
  throw Error("the generator wrote no " + name);
}

TEST(RegisterMap, FieldsFitTheirWordAndAddressesAreDistinct) {
  for (const hw::HwConfig& c : regmap_configs()) {
    std::set<uint32_t> addrs;
    const uint32_t addr_limit = 1u << hw::reg_addr_width(c);
    for (const hw::Register& r : hw::register_map(c)) {
      ASSERT_GE(r.count, 1) << r.name;
      for (int g = 0; g < r.count; ++g) {
        const uint32_t a = r.addr + static_cast<uint32_t>(g);
        EXPECT_TRUE(addrs.insert(a).second) << c.name() << ": address " << a << " twice (" << r.name << ")";
        EXPECT_LT(a, addr_limit) << c.name() << " " << r.name;
      }
      uint64_t used = 0;
      for (const hw::RegField& f : r.fields) {
        EXPECT_GE(f.lsb, 0) << r.name << "." << f.name;
        EXPECT_GE(f.width, 1) << r.name << "." << f.name;
        EXPECT_LE(f.msb(), hw::reg::kWordWidth - 1) << r.name << "." << f.name;
        const uint64_t mask = ((uint64_t{1} << f.width) - 1) << f.lsb;
        EXPECT_EQ(used & mask, 0u) << r.name << "." << f.name << " overlaps another field";
        used |= mask;
        EXPECT_EQ(f.reset >> f.width, 0u) << r.name << "." << f.name << ": reset value wider than the field";
        EXPECT_TRUE(f.access != hw::Access::W1 || r.count == 1) << "a pulse field in an array: " << r.name;
      }
    }
    // Widths that follow the configuration rather than a literal.
    for (const hw::Register& r : hw::register_map(c)) {
      if (r.name == "TAU") {
        EXPECT_EQ(r.field("VALUE").width, c.tau_w()) << c.name();
      }
      if (r.name == "TAU" || r.name == "GROUP_CFG" || r.name == "REUSED") {
        EXPECT_EQ(r.count, c.max_groups()) << r.name;
      }
      if (r.name == "HW_ID") {
        EXPECT_EQ(r.field("ROWS").reset, static_cast<uint64_t>(c.rows));
        EXPECT_EQ(r.field("COLS").reset, static_cast<uint64_t>(c.cols));
        EXPECT_EQ(r.field("DATA_W").reset, static_cast<uint64_t>(c.data_w));
        EXPECT_EQ(r.field("GROUP_W").reset, static_cast<uint64_t>(c.group_w));
      }
    }
  }
}

TEST(RegisterMap, HeaderManifestAndMarkdownListEveryField) {
  const hw::HwConfig c = regmap_configs().front();
  const std::string header = file_of(c, "kld_regs.hpp"), md = file_of(c, "kld_regs.md");
  const nlohmann::json manifest = nlohmann::json::parse(file_of(c, "manifest.json"));
  size_t fields = 0;
  for (const hw::Register& r : hw::register_map(c)) {
    EXPECT_NE(header.find("constexpr uint32_t " + r.name + " = " + std::to_string(r.addr) + ";"), std::string::npos)
        << r.name;
    for (const hw::RegField& f : r.fields) {
      ++fields;
      const std::string row = "{\"" + r.name + "\", \"" + f.name + "\", " + std::to_string(r.addr) + ", " +
                              std::to_string(r.count) + ", " + std::to_string(f.lsb) + ", " + std::to_string(f.width) +
                              ", ";
      EXPECT_NE(header.find(row), std::string::npos) << row;
      const std::string bits =
          f.width == 1 ? std::to_string(f.lsb) : std::to_string(f.msb()) + ":" + std::to_string(f.lsb);
      EXPECT_NE(md.find("| " + r.name + " | "), std::string::npos) << r.name;
      EXPECT_NE(md.find(" | " + f.name + " | " + bits + " | " + hw::access_name(f.access) + " | "), std::string::npos)
          << r.name << "." << f.name;
    }
  }
  size_t in_manifest = 0;
  for (const auto& r : manifest.at("registers")) in_manifest += r.at("fields").size();
  EXPECT_EQ(in_manifest, fields);
  EXPECT_EQ(manifest.at("registers").at(0).at("fields").at(0).at("access").get<std::string>(), "w1");
}

TEST(RegisterMap, EachTopHasAFlopForExactlyTheRwFieldsItImplements) {
  for (const hw::HwConfig& c : regmap_configs())
    for (const bool plain : {false, true}) {
      const std::string v = file_of(c, plain ? "kld_plain_top.v" : "kld_top.v");
      for (const hw::Register& r : hw::register_map(c))
        for (const hw::RegField& f : r.fields) {
          if (f.access != hw::Access::RW) continue;
          const std::string base = to_lower(r.name) + (r.count > 1 ? "_0" : "") +
                                   (f.name == "VALUE" ? "" : "_" + to_lower(f.name)) + "_q;";
          const std::string decl =
              f.width == 1 ? "reg " + base : "reg [" + std::to_string(f.width - 1) + ":0] " + base;
          const bool here = !plain || f.plain;
          EXPECT_EQ(v.find(decl) != std::string::npos, here)
              << c.name() << (plain ? " kld_plain_top" : " kld_top") << ": " << decl;
        }
    }
}

}  // namespace
}  // namespace kaleido::hwtest
