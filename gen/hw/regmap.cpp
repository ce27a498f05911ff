#include "hw/regmap.hpp"

#include <sstream>

#include "common/error.hpp"
#include "common/version.hpp"
#include "golden/intmath.hpp"

namespace kaleido::hw {

int reg_addr_width(const HwConfig& c) {
  return clog2(static_cast<uint64_t>(reg::kGroupBase) + 3u * static_cast<uint64_t>(c.max_groups()));
}

const char* access_name(Access a) {
  switch (a) {
    case Access::RW: return "rw";
    case Access::RO: return "ro";
    case Access::W1: return "w1";
  }
  return "?";
}

Access Register::access() const {
  bool all_ro = true, all_w1 = true;
  for (const RegField& f : fields) {
    all_ro = all_ro && f.access == Access::RO;
    all_w1 = all_w1 && f.access == Access::W1;
  }
  return all_ro ? Access::RO : all_w1 ? Access::W1 : Access::RW;
}

bool Register::in_plain_top() const {
  for (const RegField& f : fields)
    if (f.plain) return true;
  return false;
}

const RegField& Register::field(const std::string& want) const {
  for (const RegField& f : fields)
    if (f.name == want) return f;
  throw InternalError("register " + name + " has no field " + want);
}

namespace {

// Field makers of the table below.
RegField rw_field(const std::string& name, int lsb, int width, const std::string& doc, bool plain = false) {
  RegField f{name, lsb, width, Access::RW, 0, false, plain, doc};
  return f;
}
RegField ro_field(const std::string& name, int lsb, int width, const std::string& doc, bool plain = false) {
  RegField f{name, lsb, width, Access::RO, 0, false, plain, doc};
  return f;
}
RegField const_field(const std::string& name, int lsb, int width, uint64_t value, const std::string& doc) {
  RegField f{name, lsb, width, Access::RO, value, true, false, doc};
  return f;
}
// A one-word RO counter (or half of a 64-bit one).
Register counter_reg(const std::string& name, uint32_t addr, const std::string& doc, bool plain = false) {
  return {name, addr, 1, {ro_field("VALUE", 0, reg::kWordWidth, "", plain)}, doc};
}
// A grid or size register of the software interface.
Register dim_reg(const std::string& name, uint32_t addr, const std::string& field_doc, const std::string& doc,
                 bool plain) {
  return {name, addr, 1, {rw_field("VALUE", 0, reg::kDimWidth, field_doc, plain)}, doc};
}

}  // namespace

std::vector<Register> register_map(const HwConfig& c) {
  const int G = c.max_groups();
  const bool plain = true;
  std::vector<Register> m = {
      {"CTRL", reg::kCtrl, 1,
       {{"START", 0, 1, Access::W1, 0, false, plain, "write 1 to start a run (reads 0)"},
        rw_field("DENSE", 1, 1, "dense mode: every pair computes, no detection"),
        rw_field("TRACE", 2, 1, "emit the decision trace stream (ready latency 1; the detector waits for it)"),
        rw_field("KEEP", 3, 1,
                 "with START: no detection; the run issues from the last detection's compute lists and "
                 "root tables (a further B tile of the same A; refused unless STATUS.DECIDED)")},
       "control"},
      {"STATUS", reg::kStatus, 1,
       {ro_field("BUSY", 0, 1, "a run is in progress", plain),
        ro_field("DONE", 1, 1, "the last run finished (cleared by START)", plain),
        ro_field("ERROR", 2, 1, "the last START was refused: a runtime value is out of range"),
        ro_field("DECIDED", 3, 1,
                 "the compute lists and root tables hold the decisions of the stored A and configuration: set "
                 "by a detecting run, cleared by a dense run and by writes to A or to any register but CTRL "
                 "and DIM_M")},
       "status"},
      dim_reg("DIM_T", reg::kDimT, "frames T, 1..MAX_T", "grid T", plain),
      dim_reg("DIM_H", reg::kDimH, "rows H, 1..MAX_H", "grid H", plain),
      dim_reg("DIM_W", reg::kDimW, "columns W, 1..MAX_W", "grid W", plain),
      dim_reg("DIM_K", reg::kDimK, "channels K, multiple of GROUP_W, <= MAX_K", "K", plain),
      dim_reg("DIM_M", reg::kDimM, "output columns M, 1..MAX_M", "M", plain),
      dim_reg("TILE_H", reg::kTileH, "scan tile height, 0 = H", "tile", false),
      dim_reg("TILE_W", reg::kTileW, "scan tile width, 0 = W", "tile", false),
      {"WIN", reg::kWin, 1, {rw_field("VALUE", 0, reg::kWinWidth, "reference window depth, <= WIN_CAP")}, "window"},
      {"POLICY", reg::kPolicy, 1,
       {rw_field("POLICY", 0, 2, "0 fixed, 1 rope-orthogonal, 2 adaptive"),
        rw_field("NAXES", 2, 2, "fixed policy: number of axes in the list, 1..3"),
        rw_field("AXIS0", 4, 2, "fixed policy: first axis (0 t, 1 h, 2 w)"),
        rw_field("AXIS1", 6, 2, "fixed policy: second axis"), rw_field("AXIS2", 8, 2, "fixed policy: third axis")},
       "reference policy"},
      counter_reg("CYCLES_LO", reg::kCyclesLo, "cycles from START to done, low word", plain),
      counter_reg("CYCLES_HI", reg::kCyclesHi, "high word", plain),
      counter_reg("BUSY_LO", reg::kBusyLo, "cycles with an array issue, low word"),
      counter_reg("BUSY_HI", reg::kBusyHi, "high word"),
      counter_reg("STALL_LO", reg::kStallLo, "cycles a stream stalled (trace or output), low word"),
      counter_reg("STALL_HI", reg::kStallHi, "high word"),
      counter_reg("MACS_ISSUED_LO", reg::kMacsIssuedLo, "MACs issued, low word"),
      counter_reg("MACS_ISSUED_HI", reg::kMacsIssuedHi, "high word"),
      counter_reg("MACS_SKIPPED_LO", reg::kMacsSkippedLo, "MACs skipped, low word"),
      counter_reg("MACS_SKIPPED_HI", reg::kMacsSkippedHi, "high word"),
      {"HW_ID", reg::kHwId, 1,
       {const_field("ROWS", 0, 8, static_cast<uint64_t>(c.rows), "array rows"),
        const_field("COLS", 8, 8, static_cast<uint64_t>(c.cols), "array columns"),
        const_field("DATA_W", 16, 8, static_cast<uint64_t>(c.data_w), "operand bits"),
        const_field("GROUP_W", 24, 8, static_cast<uint64_t>(c.group_w), "group width")},
       "generator parameters"},
      counter_reg("STALL_OUT", reg::kStallOut,
                  "cycles the gather engine waited for the output consumer (out_ready_i low)"),
      counter_reg("STALL_TRACE", reg::kStallTrace,
                  "cycles the detector waited for the trace consumer (dec_ready_i low a cycle before)"),
      counter_reg("WAIT_GATHER", reg::kWaitGather,
                  "cycles the pass engine waited for the gather to free a partial bank"),
      counter_reg("LOADW_CYCLES", reg::kLoadWCycles, "cycles spent loading weights into the array (LOADW)"),
      counter_reg("STARVED", reg::kStarved,
                  "ISSUE cycles with no issue, waiting for the detector to extend a compute list"),
      {"TAU", tau_addr(c, 0), G, {rw_field("VALUE", 0, c.tau_w(), "threshold of group g (DATA_W+1 bits, unsigned)")},
       "per-group thresholds"},
      {"GROUP_CFG", group_cfg_addr(c, 0), G,
       {rw_field("ENABLE", 0, 1, "reuse enabled for group g"),
        rw_field("ROPE", 1, 3, "RoPE axes mask of group g (bit 0 t, 1 h, 2 w)")},
       "per-group reuse rules"},
      {"REUSED", reused_addr(c, 0), G, {ro_field("VALUE", 0, reg::kWordWidth, "")}, "reused pairs of group g"},
  };
  return m;
}

std::string register_header(const HwConfig& c) {
  std::ostringstream o;
  o << "// Register map of kld_top, generated by kaleido " << version() << ". Do not edit.\n// Parameters:";
  for (const auto& [k, v] : c.parameter_list()) o << " " << k << "=" << v;
  o << "\n// Access: rw written while idle, ro read only, w1 write 1 to pulse (reads 0).\n"
       "// [plain]: kld_plain_top implements the register (or the field) too.\n";
  o << "#pragma once\n\n#include <cstdint>\n\nnamespace kld {\n\n";
  for (const auto& [k, v] : c.parameter_list()) o << "constexpr uint32_t k" << k << " = " << v << ";\n";
  o << "// Every parameter by name, for code that rebuilds the configuration from this header.\n"
       "struct Parameter {\n  const char* name;\n  uint32_t value;\n};\nconstexpr Parameter kParameters[] = {\n";
  for (const auto& [k, v] : c.parameter_list()) o << "    {\"" << k << "\", k" << k << "},\n";
  o << "};\n";
  o << "constexpr uint32_t kMAX_G = " << c.max_groups() << ";\n";
  o << "constexpr uint32_t kSEGS = " << c.segs() << ";\n";
  o << "constexpr uint32_t kTOKEN_W = " << c.token_w() << ";\n";
  o << "constexpr uint32_t kREG_ADDR_W = " << reg_addr_width(c) << ";\n\n";
  for (const Register& r : register_map(c)) {
    o << "// " << r.name << ": " << r.doc << " (" << access_name(r.access()) << (r.in_plain_top() ? ", plain" : "")
      << ")\n";
    o << "constexpr uint32_t " << r.name << " = " << r.addr << ";" << (r.count > 1 ? "  // + group index" : "")
      << "\n";
    for (const RegField& f : r.fields) {
      if (r.fields.size() == 1 && f.name == "VALUE") continue;
      o << "constexpr uint32_t " << r.name << "_" << f.name << "_LSB = " << f.lsb << ";  // [" << access_name(f.access)
        << (f.plain ? ", plain" : "") << "] " << f.doc << "\n";
      o << "constexpr uint32_t " << r.name << "_" << f.name << "_WIDTH = " << f.width << ";\n";
    }
  }
  // The same map as a table, for register-level checks (the testbench's read-back).
  o << "\n// Every field: register, first address, elements, lsb, width, access ('w' rw, 'r' ro, '1' w1),\n"
       "// reset (rw) or value (constant ro), constant, in kld_plain_top.\n";
  o << "struct Field {\n  const char* reg;\n  const char* name;\n  uint32_t addr, count, lsb, width;\n  char access;\n"
       "  uint64_t reset;\n  bool constant, plain;\n};\n";
  o << "constexpr Field kFields[] = {\n";
  for (const Register& r : register_map(c))
    for (const RegField& f : r.fields)
      o << "    {\"" << r.name << "\", \"" << f.name << "\", " << r.addr << ", " << r.count << ", " << f.lsb << ", "
        << f.width << ", '" << (f.access == Access::RW ? 'w' : f.access == Access::RO ? 'r' : '1') << "', " << f.reset
        << ", " << (f.constant ? "true" : "false") << ", " << (f.plain ? "true" : "false") << "},\n";
  o << "};\n";
  o << "\n}  // namespace kld\n";
  return o.str();
}

std::string register_markdown(const HwConfig& c) {
  std::ostringstream o;
  o << "# Register map of kld_top\n\nGenerated by kaleido " << version() << " for " << c.name()
    << ". Do not edit. Word addresses on `reg_addr_i` (" << reg_addr_width(c)
    << " bits); every register is one 32-bit word. Access: rw written while idle (ignored while busy), ro read "
       "only, w1 write 1 to pulse (reads 0). The last column says whether kld_plain_top implements the field "
       "(its other addresses read 0 and ignore writes).\n\n";
  o << "| register | address | field | bits | access | reset | description | kld_plain_top |\n";
  o << "|---|---|---|---|---|---|---|---|\n";
  for (const Register& r : register_map(c)) {
    const std::string addr = r.count > 1 ? std::to_string(r.addr) + " + g (g < " + std::to_string(r.count) + ")"
                                         : std::to_string(r.addr);
    for (const RegField& f : r.fields) {
      const std::string bits =
          f.width == 1 ? std::to_string(f.lsb) : std::to_string(f.msb()) + ":" + std::to_string(f.lsb);
      const std::string reset = f.access == Access::RW ? std::to_string(f.reset)
                                : f.constant           ? std::to_string(f.reset) + " (constant)"
                                                       : "-";
      const std::string doc = f.doc.empty() ? r.doc : r.fields.size() > 1 ? f.doc : r.doc + ": " + f.doc;
      o << "| " << r.name << " | " << addr << " | " << f.name << " | " << bits << " | " << access_name(f.access)
        << " | " << reset << " | " << doc << " | " << (f.plain ? "yes" : "no") << " |\n";
    }
  }
  return o.str();
}

}  // namespace kaleido::hw
