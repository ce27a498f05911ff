// Example designs built with the vlog builder, shared by the golden, lint and
// file tests, plus helpers to run Verilator and Yosys on emitted files.
#pragma once

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "vlog/design.hpp"
#include "support/tools.hpp"

namespace kaleido::vlog::testing {

namespace fs = std::filesystem;

inline FileHeader golden_header(std::vector<std::pair<std::string, std::string>> params = {}) {
  return FileHeader{"vlog golden test", std::move(params)};
}

// ---- golden examples (tests/vlog/golden/*.v were written by hand) -------------

inline void build_add_reg(Design& d) {
  Module& m = d.add_module("add_reg", "Registered adder with carry out and a valid flag.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr a = m.input("a_i", 8, Sign::Unsigned, "Operands, unsigned.");
  Expr b = m.input("b_i", 8);
  Expr valid = m.input("valid_i", 1);
  Expr sum_o = m.output("sum_o", 9);
  Expr valid_o = m.output("valid_o", 1);
  Expr sum_d =
      m.signal("sum_d", 9, Sign::Unsigned, "Full-width sum: both operands are zero-extended so the carry is kept.");
  Expr sum_q = m.signal("sum_q", 9);
  Expr valid_q = m.signal("valid_q", 1);
  m.assign(sum_d, zext(a, 9) + zext(b, 9));
  Always& ff = m.always_ff(clk, rst_n);
  ff.flop(valid_q, valid, 0);
  ff.on_reset().assign(sum_q, 0);
  ff.body().if_(valid, "Hold the last sum while no new operands arrive.").then_().assign(sum_q, sum_d);
  m.assign(sum_o, sum_q);
  m.assign(valid_o, valid_q);
}

inline void build_fsm4(Design& d) {
  Module& m = d.add_module("fsm4", "Four-state controller: idle, load, run, drain.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr start = m.input("start_i", 1);
  Expr done = m.input("done_i", 1);
  Expr busy_o = m.output("busy_o", 1);
  Expr load_o = m.output("load_o", 1);
  Expr st_idle = m.localparam("StIdle", 2, 0, "State encoding.");
  Expr st_load = m.localparam("StLoad", 2, 1);
  Expr st_run = m.localparam("StRun", 2, 2);
  Expr st_drain = m.localparam("StDrain", 2, 3);
  Expr state_d = m.signal("state_d", 2);
  Expr state_q = m.signal("state_q", 2);

  Block& next = m.always_comb("Next-state logic.");
  next.assign(state_d, state_q);
  next.assign(load_o, 0);
  CaseStmt& c = next.case_(state_q);
  c.item(st_idle).if_(start).then_().assign(state_d, st_load);
  Block& load = c.item(st_load);
  load.assign(load_o, 1);
  load.assign(state_d, st_run);
  c.item(st_run).if_(done).then_().assign(state_d, st_drain);
  c.item(st_drain).assign(state_d, st_idle);
  c.default_().assign(state_d, st_idle);

  m.always_ff(clk, rst_n).flop(state_q, state_d, st_idle);
  m.assign(busy_o, state_q != st_idle);
}

inline void build_delay_line(Design& d) {
  Module& cell = d.add_module("dff_cell", "4-bit register with enable.");
  {
    Expr clk = cell.input("clk_i", 1);
    Expr rst_n = cell.input("rst_ni", 1);
    Expr en = cell.input("en_i", 1);
    Expr din = cell.input("d_i", 4);
    Expr q_o = cell.output("q_o", 4);
    Expr data_q = cell.signal("data_q", 4);
    Always& ff = cell.always_ff(clk, rst_n);
    ff.on_reset().assign(data_q, 0);
    ff.body().if_(en).then_().assign(data_q, din);
    cell.assign(q_o, data_q);
  }
  Module& top = d.add_module("delay_line", "Chain of dff_cell stages built with a generate loop.");
  Expr clk = top.input("clk_i", 1);
  Expr rst_n = top.input("rst_ni", 1);
  Expr en = top.input("en_i", 1);
  Expr din = top.input("d_i", 4);
  Expr q_o = top.output("q_o", 4);
  Expr stages = top.localparam_int("Stages", 4);
  Expr chain = top.signal("chain", 20, Sign::Unsigned, "Stage s reads slice s of the chain and drives slice s + 1.");
  top.assign(chain.slice(3, 0), din);
  GenerateFor& g = top.generate_for("g_stage", "s", 0, stages);
  Expr s = g.var();
  g.instance(cell, "u_cell",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"en_i", en},
              {"d_i", chain.part(s * 4, 4)},
              {"q_o", chain.part((s + 1) * 4, 4)}});
  top.assign(q_o, chain.slice(19, 16));
}

// A module generic in two constants (module parameters), instantiated with and without overrides.
inline void build_counter_pair(Design& d) {
  Module& cnt = d.add_module("sat_counter", "Counter that stops at Limit, counting in steps of Step.");
  {
    Expr clk = cnt.input("clk_i", 1);
    Expr rst_n = cnt.input("rst_ni", 1);
    Expr en = cnt.input("en_i", 1);
    Expr count_o = cnt.output("count_o", 4);
    Expr done_o = cnt.output("done_o", 1);
    Expr limit = cnt.parameter("Limit", 4, 9, "Stops at or past this count.");
    Expr step = cnt.parameter("Step", 2, 1);
    Expr count_q = cnt.signal("count_q", 4);
    Expr done = cnt.wire("done", count_q >= limit);
    cnt.always_ff(clk, rst_n).flop(count_q, mux(en && !done, count_q + zext(step, 4), count_q), 0);
    cnt.assign(count_o, count_q);
    cnt.assign(done_o, done);
  }
  Module& top = d.add_module("counter_pair", "Two sat_counters: the default one and a short one.");
  Expr clk = top.input("clk_i", 1);
  Expr rst_n = top.input("rst_ni", 1);
  Expr en = top.input("en_i", 1);
  Expr slow_o = top.output("slow_o", 4);
  Expr fast_o = top.output("fast_o", 4);
  Expr done_o = top.output("done_o", 2);
  top.instance(cnt, "u_slow", {{"clk_i", clk}, {"rst_ni", rst_n}, {"en_i", en}, {"count_o", slow_o},
                               {"done_o", done_o[1]}});
  top.instance(cnt, "u_fast", {{"Step", 2}, {"Limit", 3}},
               {{"clk_i", clk}, {"rst_ni", rst_n}, {"en_i", en}, {"count_o", fast_o}, {"done_o", done_o[0]}},
               "Counts 0, 2, 4.");
}

// ---- further examples, checked with the tools only --------------------------------

// Counter with enable, synchronous clear and a wrap pulse.
inline void build_counter(Design& d) {
  Module& m = d.add_module("counter", "8-bit counter with enable, clear and wrap pulse.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr en = m.input("en_i", 1);
  Expr clear = m.input("clear_i", 1);
  Expr count_o = m.output("count_o", 8);
  Expr wrap_o = m.output("wrap_o", 1);
  Expr count_q = m.signal("count_q", 8);
  Expr at_max = m.wire("at_max", count_q == 255);
  Always& ff = m.always_ff(clk, rst_n);
  ff.on_reset().assign(count_q, 0);
  IfStmt& i = ff.body().if_(clear);
  i.then_().assign(count_q, 0);
  i.elif (en).assign(count_q, count_q + 1, "Wraps from 255 to 0.");
  m.assign(count_o, count_q);
  m.assign(wrap_o, en && at_max);
}

// Synchronous FIFO, depth 4, valid/ready on both sides.
inline void build_fifo(Design& d) {
  Module& m = d.add_module("fifo4", "4-entry FIFO with valid/ready handshakes.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr in_valid = m.input("in_valid_i", 1);
  Expr in_data = m.input("in_data_i", 8);
  Expr in_ready_o = m.output("in_ready_o", 1);
  Expr out_valid_o = m.output("out_valid_o", 1);
  Expr out_data_o = m.output("out_data_o", 8);
  Expr out_ready = m.input("out_ready_i", 1);
  Memory mem = m.memory("mem", 8, 4, Sign::Unsigned, "Storage; not reset.");
  Expr wptr_q = m.signal("wptr_q", 3, Sign::Unsigned, "Pointers carry one extra wrap bit.");
  Expr rptr_q = m.signal("rptr_q", 3);
  Expr empty = m.wire("empty", wptr_q == rptr_q);
  Expr full = m.wire("full", (wptr_q[2] != rptr_q[2]) && (wptr_q.slice(1, 0) == rptr_q.slice(1, 0)));
  Expr push = m.wire("push", in_valid && !full);
  Expr pop = m.wire("pop", out_ready && !empty);
  m.always_ff_no_reset(clk).if_(push).then_().assign(mem[wptr_q.slice(1, 0)], in_data);
  Always& ff = m.always_ff(clk, rst_n);
  ff.on_reset().assign(wptr_q, 0);
  ff.on_reset().assign(rptr_q, 0);
  ff.body().if_(push).then_().assign(wptr_q, wptr_q + 1);
  ff.body().if_(pop).then_().assign(rptr_q, rptr_q + 1);
  m.assign(in_ready_o, !full);
  m.assign(out_valid_o, !empty);
  m.assign(out_data_o, mem[rptr_q.slice(1, 0)]);
}

// Register file: 4 x 8-bit registers written in a generate loop, two read
// ports (a case mux and an indexed part-select).
inline void build_regfile(Design& d) {
  Module& m = d.add_module("regfile4", "4 x 8-bit register file with two read ports.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr we = m.input("we_i", 1);
  Expr waddr = m.input("waddr_i", 2);
  Expr wdata = m.input("wdata_i", 8);
  Expr raddr_a = m.input("raddr_a_i", 2);
  Expr raddr_b = m.input("raddr_b_i", 2);
  Expr rdata_a_o = m.output("rdata_a_o", 8);
  Expr rdata_b_o = m.output("rdata_b_o", 8);
  Expr regs_q = m.signal("regs_q", 32);
  GenerateFor& g = m.generate_for("g_reg", "r", 0, 4);
  Expr index = g.index_param("RegIndex", 2);
  Always& ff = g.always_ff(clk, rst_n);
  ff.on_reset().assign(regs_q.part(g.var() * 8, 8), 0);
  ff.body().if_(we && (waddr == index)).then_().assign(regs_q.part(g.var() * 8, 8), wdata);
  Block& mux_a = m.always_comb("Read port A: case mux.");
  CaseStmt& c = mux_a.case_(raddr_a);
  for (int r = 0; r < 3; ++r)
    c.item(constant(2, static_cast<uint64_t>(r))).assign(rdata_a_o, regs_q.slice(r * 8 + 7, r * 8));
  c.default_().assign(rdata_a_o, regs_q.slice(31, 24));
  m.assign(rdata_b_o, regs_q.part(concat({raddr_b, constant(3, 0)}), 8), "Read port B: indexed part-select.");
}

// Weight-stationary MAC PE with modes; the multiplier inputs are held
// outside MAC mode so it does not toggle.
inline void build_mac_pe(Design& d) {
  Module& m = d.add_module("mac_pe", "Signed 8x8 MAC into a 32-bit partial sum; load, MAC and pass modes.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr mode = m.input("mode_i", 2);
  Expr seg_start = m.input("seg_start_i", 1, Sign::Unsigned, "Cuts the partial-sum chain: start from zero.");
  Expr a = m.input("a_i", 8, Sign::Signed);
  Expr w = m.input("w_i", 8, Sign::Signed);
  Expr psum = m.input("psum_i", 32, Sign::Signed);
  Expr a_o = m.output("a_o", 8, Sign::Signed);
  Expr psum_o = m.output("psum_o", 32, Sign::Signed);
  Expr mode_load = m.localparam("ModeLoad", 2, 0);
  Expr mode_mac = m.localparam("ModeMac", 2, 1);
  Expr mode_pass = m.localparam("ModePass", 2, 2);
  Expr w_q = m.signal("w_q", 8, Sign::Signed);
  Expr a_q = m.signal("a_q", 8, Sign::Signed);
  Expr psum_q = m.signal("psum_q", 32, Sign::Signed);
  Expr product = m.wire("product", mul_full(a_q, w_q), "Full 16-bit product.");
  Expr psum_base = m.wire("psum_base", mux(seg_start, sconstant(32, 0), psum));
  Always& ff = m.always_ff(clk, rst_n);
  ff.on_reset().assign(w_q, 0);
  ff.on_reset().assign(a_q, 0);
  ff.on_reset().assign(psum_q, 0);
  CaseStmt& c = ff.body().case_(mode);
  c.item(mode_load).assign(w_q, w);
  Block& mac = c.item(mode_mac);
  mac.assign(a_q, a);
  mac.assign(psum_q, psum_base + sext(product, 32));
  c.item(mode_pass).assign(psum_q, psum, "Partial sum passes; a_q holds, so the multiplier is quiet.");
  c.default_().comment("Idle: hold everything.");
  m.assign(a_o, a_q);
  m.assign(psum_o, psum_q);
}

// ROWS x COLS mac_pe array: activations skewed in from the left (row r
// delayed by r cycles), weights broadcast per column, partial sums down.
inline void build_pe_array(Design& d, int rows, int cols) {
  if (!d.has("mac_pe")) build_mac_pe(d);
  const Module& pe = d.module("mac_pe");
  Module& m = d.add_module("pe_array", "Array of mac_pe with skewed activations.");
  Expr clk = m.input("clk_i", 1);
  Expr rst_n = m.input("rst_ni", 1);
  Expr mode = m.input("mode_i", 2);
  Expr seg_start = m.input("seg_start_i", rows, Sign::Unsigned, "One segment-start bit per row.");
  Expr a = m.input("a_i", rows * 8, Sign::Unsigned, "One activation per row.");
  Expr w = m.input("w_i", cols * 8, Sign::Unsigned, "One weight per column.");
  Expr psum_o = m.output("psum_o", cols * 32, Sign::Unsigned);
  Expr n_rows = m.localparam_int("Rows", rows);
  Expr n_cols = m.localparam_int("Cols", cols);
  const int taps = rows * (rows + 1) / 2;
  Expr tap = m.signal("tap", taps * 8, Sign::Unsigned, "Row r: tap r*(r+1)/2 is a_i, each later tap one cycle later.");
  Expr skew_q = m.signal("skew_q", (taps - rows) * 8);
  Expr act = m.signal("act", rows * (cols + 1) * 8, Sign::Unsigned, "Activations entering column c of row r.");
  Expr psum = m.signal("psum", (rows + 1) * cols * 32, Sign::Unsigned, "Partial sums entering row r of column c.");

  GenerateFor& gr = m.generate_for("g_row", "r", 0, n_rows);
  Expr r = gr.var();
  Expr base = r * (r + 1) / 2;
  gr.assign(tap.part(base * 8, 8), a.part(r * 8, 8));
  GenerateFor& gk = gr.generate_for("g_skew", "k", 0, r, "Row r has r skew registers.");
  Expr k = gk.var();
  Always& ff = gk.always_ff(clk, rst_n);
  ff.flop(skew_q.part((base - r + k) * 8, 8), tap.part((base + k) * 8, 8), 0);
  gk.assign(tap.part((base + k + 1) * 8, 8), skew_q.part((base - r + k) * 8, 8));
  gr.assign(act.part(r * (n_cols + 1) * 8, 8), tap.part((base + r) * 8, 8));
  GenerateFor& gc = gr.generate_for("g_col", "c", 0, n_cols);
  Expr c = gc.var();
  gc.instance(pe, "u_pe",
              {{"clk_i", clk},
               {"rst_ni", rst_n},
               {"mode_i", mode},
               {"seg_start_i", seg_start[r]},
               {"a_i", as_signed(act.part((r * (n_cols + 1) + c) * 8, 8))},
               {"w_i", as_signed(w.part(c * 8, 8))},
               {"psum_i", as_signed(psum.part((r * n_cols + c) * 32, 32))},
               {"a_o", act.part((r * (n_cols + 1) + c + 1) * 8, 8)},
               {"psum_o", psum.part(((r + 1) * n_cols + c) * 32, 32)}});
  gr.unused(act.part((r * (n_cols + 1) + n_cols) * 8, 8), "activations leaving the last column are not needed");
  GenerateFor& gz = m.generate_for("g_top", "c", 0, n_cols, "Row 0 starts from zero partial sums.");
  gz.assign(psum.part(gz.var() * 32, 32), zero(32));
  m.assign(psum_o, psum.slice((rows + 1) * cols * 32 - 1, rows * cols * 32));
}

// A declaration waiver: the emitted lint_off/lint_on must silence Verilator.
inline void build_waiver_demo(Design& d) {
  Module& m = d.add_module("waiver_demo", "Shows a justified per-declaration lint waiver.");
  Expr cfg = m.input("cfg_i", 8);
  Expr mode_o = m.output("mode_o", 4);
  m.waive(cfg, "UNUSED", "upper configuration bits are reserved for the next version");
  m.assign(mode_o, cfg.slice(3, 0));
}

// ---- tools -------------------------------------------------------------------------

inline fs::path temp_dir(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  fs::path p = fs::path(base ? base : "/tmp") / ("kaleido_vlog_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

using kaleido::testing::have_tool;

struct ToolRun {
  int status = -1;
  std::string output;
};

inline ToolRun run_tool(const std::string& cmd) {
  ToolRun r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  r.status = ::pclose(p);
  return r;
}

}  // namespace kaleido::vlog::testing
