#include <algorithm>

#include "hw/blocks.hpp"
#include "hw/regmap.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {
int max_reach(const HwConfig& c) {
  return std::max(kPlainIssueStages + c.rows, WeightLoaderBlock::default_reach(c));
}
}  // namespace

int WeightLoaderBlock::busy_width(const HwConfig& c) { return clog2(max_reach(c) + std::max(c.cols - 2, 0) + 1); }

std::vector<ParamValue> WeightLoaderBlock::overrides(const HwConfig& c, int reach) {
  if (reach == default_reach(c)) return {};
  if (reach < 1 || reach > max_reach(c))
    throw BuildError("kld_weight_loader: a reach of " + std::to_string(reach) + " cycles in a " +
                     std::to_string(c.rows) + "x" + std::to_string(c.cols) + " array");
  return {{kReach, static_cast<uint64_t>(reach)}};
}

Module WeightLoaderBlock::generate(const HwConfig& c, const Module& b_sram) {
  Module m("kld_weight_loader",
           "Weight loader: holds B and shifts every pass's weights into the PE buffer of that pass's parity, "
           "one row per cycle, at most one pass ahead of the pass engine (docs/hardware.md, \"LOADW\")");
  const int rows = c.rows, cols = c.cols, dw = c.data_w;
  const int ktw = clog2(c.max_kt()), mtw = clog2(c.max_mt()), krow_w = clog2(c.max_kt() * rows);
  const int lw = clog2(rows);
  // Buffer b is free once the last activation of the pass that used it has passed every PE:
  // Reach + COLS - 1 cycles after that pass's ISSUE ended; the busy counters are sized for the
  // larger reach.

  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr start = m.input("start_i", 1, Sign::Unsigned, "a run starts: load from its first pass");
  const Expr pass_end = m.input("pass_end_i", 1, Sign::Unsigned,
                                "the pass engine's pass ends its ISSUE (its last activation enters the array)");
  const Expr advance = m.input("advance_i", 1, Sign::Unsigned, "the pass engine moves on to its next pass");
  const Expr pass_buf = m.input("buf_i", 1, Sign::Unsigned, "weight buffer of the pass engine's pass");
  const Expr dim_k = m.input("dim_k_i", reg::kDimWidth, Sign::Unsigned, "K of the run");
  const Expr dim_m = m.input("dim_m_i", reg::kDimWidth, Sign::Unsigned, "M of the run");
  const Expr b_we = m.input("b_we_i", 1, Sign::Unsigned, "write a word of B");
  const Expr b_waddr = m.input("b_waddr_i", krow_w + mtw, Sign::Unsigned, "{row of B, m-tile}");
  const Expr b_wdata = m.input("b_wdata_i", cols * dw, Sign::Unsigned, "column c of the m-tile at c*DATA_W");
  const Expr load = m.output("load_o", 1, Sign::Unsigned, "a row of weights shifts in at the top of the array");
  const Expr load_sel = m.output("load_sel_o", 1, Sign::Unsigned, "the buffer it shifts into");
  const Expr finish = m.output("finish_o", 1, Sign::Unsigned, "the last row of a pass shifts in");
  const Expr next_loaded = m.output("next_loaded_o", 1, Sign::Unsigned,
                                    "the pass after the pass engine's one is loaded by the end of this cycle");
  const Expr w_top = m.output("w_top_o", cols * dw, Sign::Unsigned, "the row entering the array");

  const Expr lead_q = m.signal("lead_q", 2, Sign::Unsigned,
                               "passes loaded ahead of the pass engine, its current pass included (0..2)");
  const Expr lead_d = m.signal("lead_d", 2);
  const Expr kt_q = m.signal("kt_q", ktw, Sign::Unsigned, "k-tile of the pass being loaded");
  const Expr kt_d = m.signal("kt_d", ktw);
  const Expr mt_q = m.signal("mt_q", mtw, Sign::Unsigned, "m-tile of the pass being loaded");
  const Expr mt_d = m.signal("mt_d", mtw);
  // Resets to 0 (not an "all loaded" flag reset to 1): synthesis maps a set-on-reset flop as an
  // inverted one, which the register-matching equivalence check cannot pair with the RTL.
  const Expr pending_q = m.signal("pending_q", 1, Sign::Unsigned, "passes of the run are left to load");
  const Expr pending_d = m.signal("pending_d", 1);
  m.assign(load_sel, pass_buf ^ lead_q[0], "the loaded pass's buffer: its parity");

  // Two busy counters, one per buffer (either top's reach is at least its issue registers + 1, so
  // the reload is never zero).
  std::vector<Expr> busy_q, busy_d;
  const int bw = busy_width(c);
  const Expr reach = m.parameter(kReach, bw, static_cast<uint64_t>(default_reach(c)),
                                 "cycles from an activation's issue to its segment's last row, plus one: "
                                 "the issue registers and GROUP_W in kld_top, its issue register and ROWS "
                                 "in kld_plain_top");
  const Expr reload = m.localparam("Reload", cols >= 2 ? reach + static_cast<int64_t>(cols - 2) : reach - 1,
                                   "cycles from a pass's ISSUE end until its buffer is free again, less one");
  for (int b = 0; b < 2; ++b) {
    const std::string bn = std::to_string(b);
    busy_q.push_back(m.signal("busy_" + bn + "_q", bw, Sign::Unsigned,
                              "cycles until the last activation of buffer " + bn + "'s pass has left the array"));
    busy_d.push_back(m.signal("busy_" + bn + "_d", bw));
  }
  const Expr buf_free = m.wire("buf_free", mux(load_sel, busy_q[1] == zero(bw), busy_q[0] == zero(bw)));
  const Expr can_start = m.wire("can_start", pending_q && !lead_q[1] && buf_free,
                                "a pass left to load, at most one ahead, into a free buffer");
  Expr row_q, row_d;
  if (rows > 1) {
    row_q = m.signal("row_q", lw, Sign::Unsigned, "row of the pass being loaded (0: the bottom row)");
    row_d = m.signal("row_d", lw);
    m.assign(load, (row_q != zero(lw)) || can_start, "a load runs its ROWS cycles without a break");
    m.assign(finish, load && (row_q == constant(lw, static_cast<uint64_t>(rows - 1))));
  } else {
    m.assign(load, can_start);
    m.assign(finish, load);
  }
  const Expr kt_last = m.wire("kt_is_last", last_tile(kt_q, rows, dim_k));
  const Expr mt_last = m.wire("mt_is_last", last_tile(mt_q, cols, dim_m));
  m.assign(next_loaded, lead_q[1] || (lead_q[0] && finish));

  Block& nx = m.always_comb("next state: passes in order, one row per cycle");
  nx.assign(lead_d, lead_q);
  nx.assign(kt_d, kt_q);
  nx.assign(mt_d, mt_q);
  nx.assign(pending_d, pending_q);
  if (rows > 1) nx.assign(row_d, row_q);
  for (size_t b = 0; b < busy_q.size(); ++b) nx.assign(busy_d[b], busy_q[b]);
  IfStmt& go = nx.if_(start);
  go.then_().assign(lead_d, 0);
  go.then_().assign(kt_d, 0);
  go.then_().assign(mt_d, 0);
  go.then_().assign(pending_d, 1);
  if (rows > 1) go.then_().assign(row_d, 0);
  for (const Expr& d : busy_d) go.then_().assign(d, 0);
  Block& run = go.else_();
  IfStmt& up = run.if_(finish && !advance);
  up.then_().assign(lead_d, lead_q + constant(2, 1));
  up.else_().if_(advance && !finish).then_().assign(lead_d, lead_q - constant(2, 1));
  if (rows > 1) run.if_(load).then_().assign(row_d, mux(finish, zero(lw), row_q + constant(lw, 1)));
  IfStmt& fin = run.if_(finish);
  IfStmt& kl = fin.then_().if_(kt_last);
  kl.then_().assign(kt_d, 0);
  IfStmt& ml = kl.then_().if_(mt_last);
  ml.then_().assign(pending_d, 0);
  ml.else_().assign(mt_d, mt_q + constant(mtw, 1));
  kl.else_().assign(kt_d, kt_q + constant(ktw, 1));
  for (size_t b = 0; b < busy_q.size(); ++b) {
    const Expr mine = b == 0 ? !pass_buf : pass_buf;
    IfStmt& set = run.if_(pass_end && mine);
    set.then_().assign(busy_d[b], reload);
    set.else_().if_(busy_q[b] != zero(bw)).then_().assign(busy_d[b], busy_q[b] - constant(bw, 1));
  }

  Always& ff = m.always_ff(clk, rst_n, "loader state");
  ff.flop(lead_q, lead_d, 0);
  ff.flop(kt_q, kt_d, 0);
  ff.flop(mt_q, mt_d, 0);
  ff.flop(pending_q, pending_d, 0);
  if (rows > 1) ff.flop(row_q, row_d, 0);
  for (size_t b = 0; b < busy_q.size(); ++b) ff.flop(busy_q[b], busy_d[b], 0);

  // B, one word per (row, m-tile); rows enter bottom row first.
  const Expr row = rows > 1 ? resize(row_q, krow_w) : zero(krow_w);
  const Expr base = c.max_kt() == 1 ? zero(krow_w) : zext(kt_q, krow_w) * static_cast<int64_t>(rows);
  const Expr krow = m.wire("weight_row", base + (constant(krow_w, static_cast<uint64_t>(rows - 1)) - row),
                           "the k-tile's rows, bottom first");
  const Expr b_word = m.signal("b_rdata", cols * dw);
  m.instance(b_sram, "u_b",
             {{"clk_i", clk},
              {"we_i", b_we},
              {"waddr_i", b_waddr},
              {"wdata_i", b_wdata},
              {"raddr_i", concat({krow, mt_q})},
              {"rdata_o", b_word}},
             "B, one word per (row, m-tile)");
  const Expr row_ok = m.wire("weight_row_ok", zext(krow, reg::kDimWidth) < dim_k, "rows past K load zero");
  std::vector<Expr> w_cols;
  for (int cc = cols - 1; cc >= 0; --cc) {
    const Expr col_ok = (zext(mt_q, reg::kDimWidth) * static_cast<int64_t>(cols) + static_cast<int64_t>(cc)) < dim_m;
    w_cols.push_back(mux(row_ok && col_ok, b_word.slice((cc + 1) * dw - 1, cc * dw), zero(dw)));
  }
  m.assign(w_top, concat(w_cols), "columns past M load zero");
  return m;
}

}  // namespace kaleido::hw
