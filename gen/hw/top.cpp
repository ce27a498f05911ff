#include <algorithm>

#include "common/error.hpp"
#include "hw/blocks.hpp"
#include "hw/regmap.hpp"
#include "hw/register_block.hpp"
#include "hw/sram_budget.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {

// FSM states: kld_top's pass engine (docs/hardware.md, "Schedule of one run"; no DRAIN state: its
// m-tiles land while the next one issues) and kld_plain_top's run control (no HANDOFF state: its
// DRAIN waits for the gather engine).
enum State : uint64_t { kIdle = 0, kLoadW = 1, kIssue = 2, kDrain = 3, kHandoff = 4, kTail = 5 };
constexpr const char* kStateNames[] = {"StIdle", "StLoadW", "StIssue", "StDrain", "StHandoff", "StTail"};

const Module& find(const std::vector<const Module*>& parts, const std::string& name) {
  for (const Module* p : parts)
    if (p->name() == name) return *p;
  throw InternalError("block " + name + " was not generated before kld_top");
}

// Tags {bank, k-tile, token} of the segments' issues (ArrayBlock::tag_width), segment s at
// s*width; the bank only when `bank` is given, the k-tile only when there can be more than one.
Expr issue_tags(const Expr& kt, const Expr& tokens, const HwConfig& c, int segs, const Expr& bank = Expr()) {
  const int tw = c.token_w();
  if (c.max_kt() == 1 && !bank.valid()) return tokens;
  std::vector<Expr> tags;
  for (int s = segs - 1; s >= 0; --s) {
    std::vector<Expr> fields;
    if (bank.valid()) fields.push_back(bank);
    if (c.max_kt() > 1) fields.push_back(kt);
    fields.push_back(tokens.slice((s + 1) * tw - 1, s * tw));
    tags.push_back(concat(fields));
  }
  return concat(tags);
}

// What the weight loader needs from its top.
struct LoaderInputs {
  Expr clk, rst_n;
  Expr run_start;  // a run starts: load from the first pass
  Expr pass_end;   // the pass engine's current pass ends its ISSUE (its last activation enters the array)
  Expr advance;    // the pass engine moves on to its next pass
  Expr buf;        // weight buffer of the pass engine's current pass
  Expr dim_k, dim_m;
  Expr b_we, b_waddr, b_wdata;  // the B memory's write port
};

// What the top uses of the weight loader.
struct WeightLoader {
  Expr shift;        // a row of weights shifts in at the top of the array (load_i)
  Expr buf;          // the buffer it shifts into (load_sel_i)
  Expr finish;       // the last row of a pass shifts in
  Expr next_loaded;  // the pass after the pass engine's current one is loaded by the end of this cycle
  Expr w_top;        // the row entering the array
  // The array registers load_i per row (kld_load_reg), so the PEs shift a cycle after the
  // loader and a pass may issue two cycles after its last row left the loader:
  Expr loaded;      // in LOADW: the pass's last row left the loader in the previous cycle
  Expr next_ready;  // at a pass end: the next pass's last row left the loader before this cycle
};

// The weight loader instance u_weight_loader of either top (WeightLoaderBlock), for activations
// that reach their segment's last row `reach` - 1 cycles after their issue.
WeightLoader weight_loader(Module& m, const HwConfig& c, const Module& loader, int reach, const LoaderInputs& in) {
  WeightLoader wl;
  wl.shift = m.signal("wl_load", 1, Sign::Unsigned, "the loader shifts a row of weights into the array");
  wl.buf = m.signal("wl_load_sel", 1, Sign::Unsigned, "the buffer it shifts into");
  wl.finish = m.signal("wl_finish", 1, Sign::Unsigned, "the last row of a pass shifts in");
  wl.next_loaded = m.signal("wl_next_loaded", 1, Sign::Unsigned,
                            "the pass after the current one can issue from the next cycle");
  wl.w_top = m.signal("w_top", c.cols * c.data_w, Sign::Unsigned, "the row entering the array");
  m.instance(loader, "u_weight_loader", WeightLoaderBlock::overrides(c, reach),
             {{"clk_i", in.clk},
              {"rst_ni", in.rst_n},
              {"start_i", in.run_start},
              {"pass_end_i", in.pass_end},
              {"advance_i", in.advance},
              {"buf_i", in.buf},
              {"dim_k_i", in.dim_k},
              {"dim_m_i", in.dim_m},
              {"b_we_i", in.b_we},
              {"b_waddr_i", in.b_waddr},
              {"b_wdata_i", in.b_wdata},
              {"load_o", wl.shift},
              {"load_sel_o", wl.buf},
              {"finish_o", wl.finish},
              {"next_loaded_o", wl.next_loaded},
              {"w_top_o", wl.w_top}},
             "weights of every pass, loaded while the previous pass computes");
  wl.loaded = m.signal("wl_finish_q", 1, Sign::Unsigned, "the loader finished a pass in the previous cycle");
  m.always_ff(in.clk, in.rst_n, "the PEs shift a cycle after the loader").flop(wl.loaded, wl.finish, 0);
  // The loader runs at most one pass ahead, so a finish in this cycle is the next pass's.
  wl.next_ready = m.wire("wl_next_ready", wl.next_loaded && !wl.finish,
                         "the next pass's weights are in the PEs by the end of this cycle");
  return wl;
}
}  // namespace

Module TopBlock::generate(const HwConfig& c, const std::vector<const Module*>& parts) {
  Module m("kld_top",
           "Kaleido accelerator: registers, scratchpads, reuse detector, dispatcher, PE array, merge unit and "
           "performance counters");
  const int dw = c.data_w, aw = c.acc_w, gw = c.group_w, rows = c.rows, cols = c.cols, segs = c.segs();
  const int G = c.max_groups(), lanes = c.det_lanes(), tw = c.token_w(), sw = DetectorBlock::slot_w(c);
  const int cw = ScanBlock::coord_w(c), ktw = clog2(c.max_kt()), mtw = clog2(c.max_mt()), gcw = clog2(G + 1);
  // Round r decides groups r*LANES + l. With LANE_GROUPS 2 each lane takes two groups in
  // alternate cycles (rounds 2p and 2p+1 of pair p): bit 0 of the round is the lane's phase.
  // A lane's groups are decided in a set of LANE_GROUPS consecutive rounds (set = round >>
  // (LANE_GROUPS - 1)): a group's A bank is read, and its list completes, per set.
  const bool paired = c.lane_groups == 2;
  const int rounds = detection_rounds(G, lanes, c.lane_groups), rw = clog2(rounds), ra = reg_addr_width(c);
  const int sets = rounds / c.lane_groups, set_w = rw - (c.lane_groups - 1), set_groups = c.lane_groups * lanes;
  const std::string set_name = paired ? "pair of rounds" : "round";
  const int krow_w = clog2(c.max_kt() * rows), ww = clog2(c.window_cap() + 1), tauw = c.tau_w();
  // Cycles from an m-tile's last issue until its last partial is written (the issue registers,
  // the segment, the columns and the multiplier's stages).
  const int drain = kIssueStages + gw + cols - 1 + c.mul_pipe;
  const int gshift = clog2(gw) - (gw == 1 ? 1 : 0);  // log2(GROUP_W); GROUP_W is a power of two

  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr reg_valid = m.input("reg_valid_i", 1, Sign::Unsigned, "register access this cycle");
  const Expr reg_write = m.input("reg_write_i", 1, Sign::Unsigned, "1 write, 0 read");
  const Expr reg_addr = m.input("reg_addr_i", ra, Sign::Unsigned, "word address (see the register map)");
  const Expr reg_wdata = m.input("reg_wdata_i", 32);
  const Expr reg_rdata = m.output("reg_rdata_o", 32, Sign::Unsigned, "read data of reg_addr_i, this cycle");
  const Expr a_valid = m.input("a_valid_i", 1);
  const Expr a_ready = m.output("a_ready_o", 1);
  const Expr a_token = m.input("a_token_i", tw);
  const Expr a_group = m.input("a_group_i", clog2(G));
  const Expr a_data = m.input("a_data_i", gw * dw, Sign::Unsigned, "channel j at j*DATA_W");
  const Expr b_valid = m.input("b_valid_i", 1);
  const Expr b_ready = m.output("b_ready_o", 1);
  const Expr b_row = m.input("b_row_i", krow_w, Sign::Unsigned, "row k of B");
  const Expr b_mtile = m.input("b_mtile_i", mtw);
  const Expr b_data = m.input("b_data_i", cols * dw, Sign::Unsigned, "column c of the m-tile at c*DATA_W");
  const Expr out_valid = m.output("out_valid_o", 1);
  const Expr out_ready = m.input("out_ready_i", 1);
  const Expr out_mtile = m.output("out_mtile_o", mtw);
  const Expr out_token = m.output("out_token_o", tw, Sign::Unsigned, "token of word 0 of the beat");
  const int gws = c.gather_w;
  const Expr out_lanes = m.output("out_lanes_o", gws, Sign::Unsigned,
                                  "word j of the beat exists (token out_token_o + j < N)");
  const Expr out_data = m.output("out_data_o", gws * cols * aw, Sign::Unsigned,
                                 "word j, column c at (j*COLS + c)*ACC_W");
  const Expr dec_valid = m.output("dec_valid_o", 1);
  const Expr dec_ready = m.input("dec_ready_i", 1);
  const Expr dec_round = m.output("dec_round_o", rw);
  const Expr dec_token = m.output("dec_token_o", tw);
  const Expr dec_data = m.output("dec_data_o", lanes * (4 + tw), Sign::Unsigned,
                                 "lane l at l*(4+TW): {root, valid, reuse, axis[1:0]}");
  const Expr busy_out = m.output("busy_o", 1);
  const Expr done_out = m.output("done_o", 1);

  // ---- registers (the register map, regmap.cpp) ----
  const Expr busy_q = m.signal("busy_q", 1), done_q = m.signal("done_q", 1), error_q = m.signal("error_q", 1);
  const Expr wr = m.wire("reg_wr", reg_valid && reg_write && !busy_q, "configuration is written only while idle");
  RegisterBlock regs(m, c, RegisterBlock::Top::Full, {clk, rst_n, reg_valid, reg_addr, reg_wdata, reg_rdata}, wr);
  const Expr start_req = regs.pulse("CTRL", "START");
  const Expr dense_q = regs.q("CTRL", "DENSE"), trace_q = regs.q("CTRL", "TRACE");
  const Expr dim_t_q = regs.q("DIM_T"), dim_h_q = regs.q("DIM_H"), dim_w_q = regs.q("DIM_W");
  const Expr dim_k_q = regs.q("DIM_K"), dim_m_q = regs.q("DIM_M");
  const Expr tile_h_q = regs.q("TILE_H"), tile_w_q = regs.q("TILE_W"), win_q = regs.q("WIN");
  const Expr pol = regs.q("POLICY", "POLICY"), naxes = regs.q("POLICY", "NAXES");
  const Expr axes = concat({regs.q("POLICY", "AXIS2"), regs.q("POLICY", "AXIS1"), regs.q("POLICY", "AXIS0")});
  // Counters a run start clears and the run bounds are as wide as that bound (the register reads
  // zero-extend them): REUSED[g] <= N, MACS_* <= N*K*M, BUSY <= MT*KT*N. Cycle and stall counts
  // have no bound (a consumer may stall forever) and keep their 64 / 32 bits.
  const int reused_w = clog2(c.max_tokens() + 1);
  const int macs_w = std::min(64, clog2(c.max_tokens() * c.max_k * c.max_m + 1));
  const int busy_w = std::min(64, clog2(c.max_tokens() * c.max_kt() * c.max_mt() + 1));
  std::vector<Expr> reused_q;
  for (int g = 0; g < G; ++g) reused_q.push_back(m.signal("reused_" + std::to_string(g) + "_q", reused_w));
  const Expr cycles_q = m.signal("cycles_q", 64), busy_cnt_q = m.signal("busy_cycles_q", busy_w);
  const Expr stall_q = m.signal("stall_cycles_q", 64), issued_q = m.signal("macs_issued_q", macs_w);
  const Expr skipped_q = m.signal("macs_skipped_q", macs_w);
  // Cycles by cause (docs/hardware.md, "Counters").
  const Expr stall_out_q = m.signal("stall_out_q", 32), stall_trace_q = m.signal("stall_trace_q", 32);
  const Expr wait_gather_q = m.signal("wait_gather_q", 32), loadw_cycles_q = m.signal("loadw_cycles_q", 32);
  const Expr starved_q = m.signal("starved_q", 32);


  // ---- runtime checks at START (STATUS.ERROR) ----
  auto in_range = [&](const Expr& v, uint64_t lo, uint64_t hi) {
    return (v >= constant(v.width(), lo)) && (v <= constant(v.width(), hi));
  };
  // The checks of the stored values run a cycle early, on the values the registers take at the next
  // edge, into cfg_ok_q: START then starts a run through one flop and one gate, not through a
  // dozen comparators (run_start clears the scan, whose next position feeds the A memories).
  // Configuration registers reset to zero dimensions, which are out of range, and to the fixed
  // policy with no axes: both flops reset to 0, "refused" (reset-to-1 flops lose their names in
  // the netlist, which `kaleido equiv` pairs registers by).
  const Expr dim_t_n = regs.next("DIM_T"), dim_h_n = regs.next("DIM_H"), dim_w_n = regs.next("DIM_W");
  const Expr dim_k_n = regs.next("DIM_K"), dim_m_n = regs.next("DIM_M");
  const Expr tile_h_n = regs.next("TILE_H"), tile_w_n = regs.next("TILE_W"), win_n = regs.next("WIN");
  const Expr pol_n = regs.next("POLICY", "POLICY"), naxes_n = regs.next("POLICY", "NAXES");
  const Expr k_mod = gw > 1 ? (dim_k_n.slice(gshift - 1, 0) == zero(gshift)) : bit(true);
  const int polw = pol.width();
  const Expr pol_built = m.wire("policy_built_next", (pol_n == constant(polw, 0) && bit((c.policies & 1u) != 0)) ||
                                                         (pol_n == constant(polw, 1) && bit((c.policies & 2u) != 0)) ||
                                                         (pol_n == constant(polw, 2) && bit((c.policies & 4u) != 0)));
  const Expr cfg_ok_d = m.wire(
      "cfg_ok_d",
      (in_range(dim_t_n, 1, static_cast<uint64_t>(c.max_t)) && in_range(dim_h_n, 1, static_cast<uint64_t>(c.max_h)) &&
        in_range(dim_w_n, 1, static_cast<uint64_t>(c.max_w)) &&
        in_range(dim_k_n, static_cast<uint64_t>(gw), static_cast<uint64_t>(c.max_k)) && k_mod &&
        in_range(dim_m_n, 1, static_cast<uint64_t>(c.max_m)) && (tile_h_n <= dim_h_n) && (tile_w_n <= dim_w_n) &&
        (win_n <= constant(win_n.width(), static_cast<uint64_t>(c.window_cap()))) && pol_built),
      "every stored value will be in range");
  const Expr axes_set_d = m.wire("axes_set_d", (pol_n != zero(polw)) || (naxes_n != zero(naxes.width())),
                                 "a policy other than fixed, or a non-empty axis list, will be stored");
  for (const Register& r : register_map(c))
    for (const RegField& f : r.fields)
      if ((r.name == "DIM_T" || r.name == "POLICY") && f.reset != 0)
        throw InternalError("the START checks reset to 'refused', which needs DIM_T and POLICY to reset to 0");
  const Expr cfg_ok_q = m.signal("cfg_ok_q", 1, Sign::Unsigned, "every stored value is in range");
  const Expr axes_set_q = m.signal("axes_set_q", 1, Sign::Unsigned,
                                   "a policy other than fixed, or a non-empty axis list, is stored");
  Always& checks = m.always_ff(clk, rst_n, "the START checks of the stored values, a cycle early");
  checks.flop(cfg_ok_q, cfg_ok_d, 0);
  checks.flop(axes_set_q, axes_set_d, 0);
  // CTRL.DENSE as written with START (dense_q takes it at the same clock edge).
  const Expr dense_start = regs.written("CTRL", "DENSE");
  // CTRL.KEEP as written with START: issue from the compute lists and root tables of the last
  // detection (a further B tile of the same A), which STATUS.DECIDED says are still valid.
  const Expr keep_start = regs.written("CTRL", "KEEP");
  const Expr decided_q = m.signal("decided_q", 1, Sign::Unsigned,
                                  "the lists and root tables hold the decisions of the stored A and configuration");
  const Expr cfg_error = m.wire("cfg_error",
                                !cfg_ok_q || (!axes_set_q && !dense_start) ||
                                    (keep_start && (dense_start || !decided_q)),
                                "a runtime value is out of range, or nothing to keep: the run is refused");

  // ---- derived sizes (stable during a run: configuration is frozen while busy) ----
  const Expr t_c = m.wire("dim_t_c", dim_t_q.slice(cw - 1, 0)), h_c = m.wire("dim_h_c", dim_h_q.slice(cw - 1, 0));
  const Expr w_c = m.wire("dim_w_c", dim_w_q.slice(cw - 1, 0));
  // The tile sizes (0 = the whole extent), registered from the values the registers take at the next
  // edge, like the START checks: they are what a run started in the next cycle sees, and the
  // tile-size choice is off the scan's paths to the A and window memories. N is registered from the
  // stored dimensions, a cycle after them (the register bus's write decode and the idle check then
  // stand in front of no multiplier): nothing reads it before a run's first ISSUE (a dense pass's
  // length) or its gather, at least two cycles after START.
  const Expr tile_h_c = m.signal("tile_h_eff_q", cw, Sign::Unsigned, "tile height (TILE_H, or H when 0)");
  const Expr tile_w_c = m.signal("tile_w_eff_q", cw, Sign::Unsigned, "tile width (TILE_W, or W when 0)");
  const Expr n_tokens = m.signal("n_tokens_q", tw + 1, Sign::Unsigned, "N = T*H*W");
  Always& sizes = m.always_ff(clk, rst_n, "derived sizes: the tiles' a cycle early, N a cycle late");
  sizes.flop(tile_h_c, mux(tile_h_n == zero(tile_h_n.width()), dim_h_n.slice(cw - 1, 0), tile_h_n.slice(cw - 1, 0)), 0);
  sizes.flop(tile_w_c, mux(tile_w_n == zero(tile_w_n.width()), dim_w_n.slice(cw - 1, 0), tile_w_n.slice(cw - 1, 0)), 0);
  sizes.flop(n_tokens, resize(t_c, tw + 1) * resize(h_c, tw + 1) * resize(w_c, tw + 1), 0);
  const Expr n_groups = m.wire("n_groups", dim_k_q.slice(gshift + gcw - 1, gshift), "G = K / GROUP_W");

  // ---- run state ----
  // Three engines: detection (once per run, reuse mode), the pass engine (ISSUE per pass, LOADW
  // while it waits for a pass's weights, HANDOFF between m-tiles while the next m-tile's bank is
  // still being gathered; ISSUE follows the detector through the compute lists) and the gather
  // engine (streams the outputs of an m-tile while the pass engine runs the next one). The weight
  // loader fills the other weight buffer meanwhile. There is no DRAIN: an m-tile's last taps land
  // while the next m-tile's passes issue (the tags carry the bank), and the m-tile goes to the
  // gather engine once they have (docs/hardware.md).
  std::vector<Expr> st(static_cast<size_t>(kTail) + 1);
  for (State k : {kIdle, kLoadW, kIssue, kHandoff, kTail})
    st[k] = m.localparam(kStateNames[k], 3, static_cast<uint64_t>(k), k == kIdle ? "pass engine states" : "");
  const Expr state_q = m.signal("state_q", 3);
  const Expr mt_q = m.signal("mt_q", mtw, Sign::Unsigned, "m-tile of the pass engine");
  const Expr kt_q = m.signal("kt_q", ktw), round_q = m.signal("round_q", rw, Sign::Unsigned, "detection round");
  const Expr det_busy_q = m.signal("det_busy_q", 1, Sign::Unsigned, "the detection engine scans the grid");
  const Expr buf_q = m.signal("buf_q", 1, Sign::Unsigned, "weight buffer of the pass engine's pass (pass parity)");
  // The gather engine is a pipeline of four places, all advancing together whenever the output
  // register is free or being read (gather_en): a beat of GATHER_W tokens enters (the root tables
  // are read), their partials are read into registers, the partials are summed, their words wait
  // in the output register.
  const Expr gather_issue_q = m.signal("gather_issue_q", 1, Sign::Unsigned, "tokens of the m-tile remain to enter");
  const Expr gmt_q = m.signal("gather_mt_q", mtw, Sign::Unsigned, "m-tile being gathered");
  const Expr gi_q = m.signal("gather_q", tw, Sign::Unsigned, "first token of the next beat to enter the gather");
  const Expr sum_valid_q = m.signal("sum_valid_q", 1, Sign::Unsigned, "a token's roots are registered");
  const Expr sum_last_q = m.signal("sum_last_q", 1, Sign::Unsigned, "... the m-tile's last token");
  const Expr sum_mt_q = m.signal("sum_mt_q", mtw), sum_token_q = m.signal("sum_token_q", tw);
  const Expr sum_lanes_q = m.signal("sum_lanes_q", gws, Sign::Unsigned, "tokens of the beat that exist");
  const Expr mid_valid_q = m.signal("mid_valid_q", 1, Sign::Unsigned, "a beat's partials are registered");
  const Expr mid_last_q = m.signal("mid_last_q", 1, Sign::Unsigned, "... the m-tile's last beat");
  const Expr mid_mt_q = m.signal("mid_mt_q", mtw), mid_token_q = m.signal("mid_token_q", tw);
  const Expr mid_lanes_q = m.signal("mid_lanes_q", gws);
  const Expr out_valid_q = m.signal("out_valid_q", 1, Sign::Unsigned, "the output register holds a word");
  const Expr out_last_q = m.signal("out_last_q", 1, Sign::Unsigned, "... the m-tile's last word");
  const Expr out_mt_q = m.signal("out_mt_q", mtw), out_token_q = m.signal("out_token_q", tw);
  const Expr out_lanes_q = m.signal("out_lanes_q", gws);
  auto in_state = [&](State s) { return state_q == st[static_cast<size_t>(s)]; };
  const Expr st_loadw = m.wire("st_loadw", in_state(kLoadW));
  const Expr st_issue = m.wire("st_issue", in_state(kIssue));
  const Expr st_handoff = m.wire("st_handoff", in_state(kHandoff));
  // Last k-tile / m-tile / round, by multiplication only (no division in hardware).
  const Expr kt_is_last = m.wire("kt_is_last", last_tile(kt_q, rows, dim_k_q));
  const Expr mt_is_last = m.wire("mt_is_last", last_tile(mt_q, cols, dim_m_q));
  // set_q: the set of rounds the scan is in (absent when there is one set of LANE_GROUPS 2).
  Expr phase_q, set_q = round_q;
  if (paired) {
    phase_q = m.wire("det_phase", round_q[0], "which group of each lane's two the scan presents");
    if (set_w > 0) {
      set_q = m.wire("det_pair", round_q.slice(rw - 1, 1), "pair of detection rounds");
    }
  }
  const Expr set_is_last =
      m.wire(paired ? "pair_is_last" : "round_is_last",
             set_w > 0 ? last_tile(set_q, set_groups, zext(n_groups, reg::kDimWidth)) : bit(true));
  const Expr round_d = m.signal("round_d", rw, Sign::Unsigned, "detection round of the next cycle");
  // Beats of GATHER_W tokens: token gather_q + j exists while it is below N.
  const int ew = tw + 4;  // holds gather_q + GATHER_W (at most 8 past a token index)
  std::vector<Expr> enter_lanes_bits;
  for (int j = gws - 1; j >= 0; --j)
    enter_lanes_bits.push_back(j == 0 ? bit(true)
                                      : zext(gi_q, ew) + constant(ew, static_cast<uint64_t>(j)) < zext(n_tokens, ew));
  const Expr enter_lanes = m.wire("gather_lanes", concat(enter_lanes_bits), "tokens of the entering beat that exist");
  const Expr gi_next = m.wire("gather_next", zext(gi_q, ew) + constant(ew, static_cast<uint64_t>(gws)),
                              "first token of the beat after the entering one");
  const Expr gi_is_last = m.wire("gather_is_last", gi_next >= zext(n_tokens, ew), "the entering beat is the m-tile's last");
  const Expr gather_en = m.wire("gather_en", !out_valid_q || out_ready, "the gather pipeline advances");
  const Expr gather_enter = m.wire("gather_enter", gather_issue_q && gather_en, "token gather_q enters the gather");

  // ---- the dispatcher: scan positions, compute lists, issue ----
  const Expr scan_token = m.signal("scan_token", tw), scan_slot = m.signal("scan_slot", sw);
  const Expr scan_token_next = m.signal("scan_token_next", tw);
  const Expr scan_avail = m.signal("scan_avail", 3), scan_ref_near_next = m.signal("scan_ref_near_next", 2);
  const Expr scan_ref_two_next = m.signal("scan_ref_two_next", 2);
  const Expr scan_ref_slot_next = m.signal("scan_ref_slot_next", 2 * sw);
  const Expr scan_last = m.signal("scan_last", 1);
  const Expr seg_valid = m.signal("seg_valid", segs), seg_token = m.signal("seg_token", segs * tw);
  const Expr pass_pending = m.signal("pass_pending", 1), pass_nonempty = m.signal("pass_nonempty", 1);
  const Expr pass_last = m.signal("pass_last", 1);
  // The detector's lanes decide in two stages: a position steps into the second a cycle before
  // its decision (the lanes' outputs) retires. Both hold while the trace may not take a decision.
  // The trace has ready latency 1 (a decision transfers in a cycle after one with dec_ready_i
  // high), so step and retire are known a cycle ahead: the dispatcher and every lane register
  // their own copies (step_next, retire_next), and no combinational step crosses into them.
  const Expr s2_valid_q = m.signal("det_s2_valid_q", 1, Sign::Unsigned, "the lanes' second stage holds a position");
  const Expr s2_round_q = m.signal("det_s2_round_q", rw, Sign::Unsigned, "... its detection round");
  const Expr s2_set_q = paired && set_w > 0 ? s2_round_q.slice(rw - 1, 1) : s2_round_q;
  const Expr s2_token_q = m.signal("det_s2_token_q", tw, Sign::Unsigned, "... its token");
  const Expr s2_lanes_q = m.signal("det_s2_lane_valid_q", lanes, Sign::Unsigned, "... the lanes with a group");
  const Expr dec_ready_q =
      m.signal("dec_ready_q", 1, Sign::Unsigned, "dec_ready_i of the cycle before: a decision may transfer now");
  const Expr det_advance = m.wire("det_advance", !(trace_q && s2_valid_q && !dec_ready_q),
                                  "the detector's stages move on (the trace takes the decision, or is off)");
  const Expr step = m.signal("det_step_q", 1, Sign::Unsigned, "the scan position steps into the second stage");
  const Expr retire = m.signal("det_retire_q", 1, Sign::Unsigned, "the second stage's position is decided");
  const Expr step_next = m.signal("det_step_d", 1, Sign::Unsigned, "step of the next cycle");
  const Expr retire_next = m.signal("det_retire_d", 1, Sign::Unsigned, "retire of the next cycle");
  const Expr reuse = m.signal("det_reuse", lanes), axis = m.signal("det_axis", 2 * lanes);
  const Expr root = m.signal("det_root", lanes * tw);
  std::vector<Expr> push_bits, root_we_bits, gvalid_bits;
  for (int g = G - 1; g >= 0; --g) {
    const Expr mine = s2_round_q == constant(rw, static_cast<uint64_t>(g / lanes));
    const Expr exists = constant(gcw, static_cast<uint64_t>(g)) < n_groups;
    push_bits.push_back(retire && mine && exists && !reuse[g % lanes]);
    root_we_bits.push_back(retire && mine && exists);
    gvalid_bits.push_back(exists);
  }
  const Expr push = m.wire("push", concat(push_bits), "COMPUTE pairs join their group's compute list");
  const Expr root_we = m.wire("root_we", concat(root_we_bits));
  const Expr group_valid = m.wire("group_valid", concat(gvalid_bits), "group g < G");
  // The merge masks its terms with a registered copy, taken from the next DIM_K like the sizes: no
  // compare of DIM_K and its fanout stand in front of the gather's adder tree.
  std::vector<Expr> gvalid_next_bits;
  const Expr n_groups_next = dim_k_n.slice(gshift + gcw - 1, gshift);
  for (int g = G - 1; g >= 0; --g)
    gvalid_next_bits.push_back(constant(gcw, static_cast<uint64_t>(g)) < n_groups_next);
  const Expr group_valid_q = m.signal("group_valid_q", G, Sign::Unsigned, "group g < G, for the merge");
  m.always_ff(clk, rst_n, "the groups of the stored K, a cycle early")
      .flop(group_valid_q, concat(gvalid_next_bits), 0);
  const Expr run_start = m.wire("run_start", start_req && !cfg_error);
  // The detector's decisions are registered before they are written (compute lists, root tables):
  // window read, lane and list or root write were one path. A list is then complete a cycle after
  // the detection round of its group is over, so the per-group "round over" bits are registered too.
  const Expr push_q = m.signal("push_q", G, Sign::Unsigned, "last cycle's COMPUTE pairs, appended now");
  const Expr root_we_q =
      m.signal("root_we_q", G, Sign::Unsigned, "last cycle's decided pairs, their roots written now");
  const Expr dec_token_q = m.signal("decided_token_q", tw, Sign::Unsigned, "the token those pairs belong to");
  const Expr root_q = m.signal("det_root_last", lanes * tw, Sign::Unsigned,
                               "the roots decided last cycle (each lane's registered entry)");
  const Expr group_done_q = m.signal("group_done_q", G, Sign::Unsigned,
                                     "group g's detection round was over last cycle (its list is complete now)");
  std::vector<Expr> done_bits;
  // A group's list is complete once the scan has left its set of rounds and its last decision
  // has left the second stage.
  for (int g = G - 1; g >= 0; --g) {
    const int sg = g / set_groups;
    Expr scanned = !det_busy_q;
    Expr in_s2 = s2_valid_q;
    if (set_w > 0) {
      const Expr sgc = constant(set_w, static_cast<uint64_t>(sg));
      if (sg < sets - 1) scanned = scanned || (set_q > sgc);
      in_s2 = in_s2 && (s2_set_q == sgc);
    }
    done_bits.push_back(!group_valid[g] || (scanned && !in_s2));
  }
  Always& decisions = m.always_ff(clk, rst_n, "registered decisions (cleared by a run start)");
  decisions.flop(push_q, mux(run_start, zero(G), push), 0);
  decisions.flop(root_we_q, mux(run_start, zero(G), root_we), 0);
  // At a run start the detector is not busy yet: its groups are complete only in dense mode and
  // when the lists are kept.
  decisions.flop(group_done_q,
                 mux(run_start, mux(dense_start || keep_start, ones(G), ~group_valid), concat(done_bits)), 0);
  Block& decided =
      m.always_ff_no_reset(clk, "decided token (qualified by push_q, root_we_q)").if_(retire).then_();
  decided.assign(dec_token_q, s2_token_q);
  // A segment's list is complete once the detection round of its group is over.
  std::vector<Expr> final_bits;
  for (int sg = segs - 1; sg >= 0; --sg) {
    std::vector<Expr> done_of_tile;
    for (int g = sg; g < G; g += segs) done_of_tile.push_back(group_done_q[g]);
    final_bits.push_back(select(kt_q, done_of_tile, bit(true)));
  }
  const Expr list_final = m.wire("list_final", concat(final_bits), "segment s's compute list is complete");
  const Expr pass_end = m.wire("pass_end", st_issue && pass_last, "the pass's last issue: the next pass may follow");
  const Expr pass_start = m.wire("pass_start", run_start || pass_end, "rewind the segment pointers");
  m.instance(find(parts, "kld_dispatcher"), "u_dispatcher",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"dim_t_i", t_c},
              {"dim_h_i", h_c},
              {"dim_w_i", w_c},
              {"tile_h_i", tile_h_c},
              {"tile_w_i", tile_w_c},
              {"win_i", win_q.slice(ww - 1, 0)},
              {"n_i", n_tokens},
              {"groups_i", n_groups},
              {"dense_i", dense_q},
              {"scan_clear_i", run_start},
              {"scan_step_next_i", paired ? m.wire("scan_step_next", step_next && round_d[0],
                                                   "next cycle's step is from group 1: the scan moves on")
                                          : step_next},
              {"list_clear_i", run_start && !keep_start},
              {"push_i", push_q},
              {"push_token_i", dec_token_q},
              {"kt_i", kt_q},
              {"pass_start_i", pass_start},
              {"issue_en_i", st_issue},
              {"ready_i", ones(segs)},
              {"final_i", list_final},
              {"scan_token_o", scan_token},
              {"scan_token_next_o", scan_token_next},
              {"scan_slot_o", scan_slot},
              {"scan_avail_o", scan_avail},
              {"scan_ref_slot_next_o", scan_ref_slot_next},
              {"scan_ref_near_next_o", scan_ref_near_next},
              {"scan_ref_two_next_o", scan_ref_two_next},
              {"scan_last_o", scan_last},
              {"seg_valid_o", seg_valid},
              {"seg_token_o", seg_token},
              {"pass_pending_o", pass_pending},
              {"pass_nonempty_o", pass_nonempty},
              {"pass_last_o", pass_last}});

  // ---- the issue pipeline (kIssueStages registers): the issued token, whose A word is then read
  // and registered, so neither memory read shares a path with the other or with a PE ----
  const Expr iss_valid_q = m.signal("issue_valid_q", segs, Sign::Unsigned, "segments that issued last cycle");
  const Expr iss_token_q = m.signal("issue_token_q", segs * tw, Sign::Unsigned, "their tokens (the A read address)");
  const Expr iss_kt_q = m.signal("issue_kt_q", ktw, Sign::Unsigned, "their k-tile");
  const Expr iss_sel_q = m.signal("issue_sel_q", 1, Sign::Unsigned, "their weight buffer");
  const bool banked = partials_banked(c);
  const Expr iss_bank_q = banked ? m.signal("issue_bank_q", 1, Sign::Unsigned, "their m-tile's partial bank") : Expr();
  const Expr feed_valid_q = m.signal("feed_valid_q", segs, Sign::Unsigned, "segments whose A word enters the array");
  const Expr feed_tag_q = m.signal("feed_tag_q", segs * ArrayBlock::tag_width(c, banked), Sign::Unsigned,
                                   banked ? "{bank, k-tile, token} of each segment's word"
                                          : "{k-tile, token} of each segment's word");
  const Expr feed_sel_q = m.signal("feed_sel_q", 1, Sign::Unsigned, "their weight buffer");
  const Expr feed_data_q = m.signal("feed_data_q", segs * gw * dw, Sign::Unsigned, "the A words");
  const Expr any_issue = m.wire("issue_any", reduce_or(seg_valid));
  const Expr any_feed = m.wire("feed_any", reduce_or(iss_valid_q));
  Always& ip = m.always_ff(clk, rst_n, "issue pipeline: valid bits (the rest holds while nothing flows)");
  ip.flop(iss_valid_q, seg_valid, 0);
  ip.flop(feed_valid_q, iss_valid_q, 0);
  Block& ipd = m.always_ff_no_reset(clk, "issue pipeline: tokens, tags and words (qualified by the valid bits)");
  IfStmt& ipi = ipd.if_(any_issue);
  ipi.then_().assign(iss_token_q, seg_token);
  ipi.then_().assign(iss_kt_q, kt_q);
  ipi.then_().assign(iss_sel_q, buf_q);
  if (banked) ipi.then_().assign(iss_bank_q, mt_q[0]);

  // ---- scratchpads: A in one bank per group, B in one memory ----
  const Module& a_sram = find(parts, SramBlock::name(token_memory_depth(c), gw * dw, 2));
  const Expr a_fire = m.wire("a_fire", a_valid && !busy_q);
  // Read port 0: the detector, one cycle ahead (the lanes take the registered word); port 1: the array feed.
  std::vector<Expr> a_rd, a_issue;
  // The detector's A read, a cycle ahead. Between runs the scan rests at position 0 (a detection
  // ends with the step past the grid's last position, which wraps; reset and a clear set it), so a
  // START needs no address of its own and the register bus stays off the path to the A memories.
  const Expr a_scan_addr = m.wire("a_scan_addr", scan_token_next, "token whose A the detector takes next cycle");
  // The memories have no read enable: a bank reads whenever its address moves. So each bank's
  // addresses move only when its group is read: the detector's during the group's round, the
  // array's when the issued k-tile holds the group. Outside its round a bank's detector address is
  // token 0, the first position of every round: the next round's first read-ahead then needs no
  // next-round logic in front of the memories (one read per bank and round, where its address
  // returns to 0).
  const int ktiles = c.max_kt();
  // Whether the scan is in a bank's set, registered per bank from the next cycle's round: the
  // round register's compare and its fanout to every bank stay off the path into the memories.
  // No reset: the flags follow the round from the first clock edge (reset holds round_q at 0).
  Block* scan_sel = sets > 1 ? &m.always_ff_no_reset(clk, "each A bank's detector address follows the scan")
                             : nullptr;
  const Expr set_d = paired && set_w > 0 ? round_d.slice(rw - 1, 1) : round_d;
  for (int g = 0; g < G; ++g) {
    const std::string gn = std::to_string(g);
    a_rd.push_back(m.signal("a_rdata_" + gn, gw * dw, Sign::Unsigned, "for the detector, next cycle's position"));
    a_issue.push_back(m.signal("a_issue_" + gn, gw * dw, Sign::Unsigned, "for the array"));
    Expr scan_addr = a_scan_addr, seg_addr = iss_token_q.slice((g % segs + 1) * tw - 1, (g % segs) * tw);
    if (sets > 1) {
      const Expr in_set = m.signal("a_scan_sel_" + gn + "_q", 1, Sign::Unsigned,
                                   "the scan is in bank " + gn + "'s " + set_name);
      scan_sel->assign(in_set, set_d == constant(set_w, static_cast<uint64_t>(g / set_groups)));
      scan_addr = m.wire("a_scan_addr_" + gn, mux(in_set, a_scan_addr, zero(tw)),
                         "bank " + gn + "'s detector address: the scan's in its " + set_name + ", else token 0");
    }
    if (ktiles > 1) {
      const Expr held =
          m.signal("a_issue_addr_" + gn + "_q", tw, Sign::Unsigned, "bank " + gn + "'s array address");
      ipi.then_()
          .if_(kt_q == constant(ktw, static_cast<uint64_t>(g / segs)))
          .then_()
          .assign(held, seg_token.slice((g % segs + 1) * tw - 1, (g % segs) * tw));
      seg_addr = held;
    }
    m.instance(a_sram, kABankInstancePrefix + gn,
               {{"clk_i", clk},
                {"we_i", a_fire && (a_group == constant(clog2(G), static_cast<uint64_t>(g)))},
                {"waddr_i", a_token},
                {"wdata_i", a_data},
                {"raddr0_i", scan_addr},
                {"rdata0_o", a_rd.back()},
                {"raddr1_i", seg_addr},
                {"rdata1_o", a_issue.back()}},
               "A channels of group " + gn);
  }
  m.assign(a_ready, !busy_q);
  m.assign(b_ready, !busy_q);
  const Expr advance = m.signal("pass_advance", 1, Sign::Unsigned, "the pass engine moves on to its next pass");
  const WeightLoader wl = weight_loader(m, c, find(parts, "kld_weight_loader"), kIssueStages + gw,
                                        {clk, rst_n, run_start, pass_end, advance, buf_q, dim_k_q, dim_m_q,
                                         b_valid && !busy_q, concat({b_row, b_mtile}), b_data});

  // ---- the detector ----
  // The lanes' A words are read a cycle ahead, at the next cycle's scan position and round, and
  // registered: the A read is then off the detector's path (memory, lane, compute-list write).
  std::vector<Expr> lane_valid, lane_en, lane_rope, lane_tau, lane_a_next;
  for (int l = lanes - 1; l >= 0; --l) {
    std::vector<Expr> v, en, rp, t, a;  // of the groups lane l decides, one per round
    for (int g = l; g < G; g += lanes) {
      v.push_back(group_valid[g]);
      en.push_back(regs.q("GROUP_CFG", "ENABLE", g));
      rp.push_back(regs.q("GROUP_CFG", "ROPE", g));
      t.push_back(regs.q("TAU", "VALUE", g));
      a.push_back(a_rd[static_cast<size_t>(g)]);
    }
    lane_valid.push_back(select(round_q, v, bit(false)));
    lane_en.push_back(select(round_q, en, bit(false)));
    lane_rope.push_back(select(round_q, rp, zero(regs.q("GROUP_CFG", "ROPE").width())));
    lane_tau.push_back(select(round_q, t, zero(tauw)));
    lane_a_next.push_back(select(round_d, a, zero(gw * dw)));
  }
  const Expr lane_a_q = m.signal("lane_a_q", lanes * gw * dw, Sign::Unsigned,
                                 "A word of each lane's group at the scan position");
  m.always_ff_no_reset(clk, "the lanes' A words, read a cycle ahead").assign(lane_a_q, concat(lane_a_next));
  const Expr lanes_valid = m.wire("lane_valid", concat(lane_valid), "lane l decides group round*LANES + l");
  DetectorBlock::Instance det;
  det.clk = clk;
  det.rst_n = rst_n;
  det.step_next = step_next;
  det.retire_next = retire_next;
  det.scan = {scan_token, Expr(), scan_slot, scan_avail, scan_ref_slot_next, scan_ref_near_next, scan_ref_two_next,
              scan_last, Expr()};
  det.phase_next = paired ? round_d[0] : Expr();
  det.policy = pol;
  det.naxes = naxes;
  det.axes = axes;
  det.lane_valid = lanes_valid;
  det.enable = m.wire("lane_enable", concat(lane_en));
  det.rope = m.wire("lane_rope", concat(lane_rope));
  det.tau = m.wire("lane_tau", concat(lane_tau));
  det.a = lane_a_q;
  det.reuse = reuse;
  det.axis = axis;
  det.root = root;
  det.root_last = root_q;
  m.instance(find(parts, "kld_detector"), "u_detector", det.connect(c));
  if (paired) m.unused(scan_ref_two_next, "lanes deciding two groups find distance-2 references in the window");

  // ---- the array ----
  std::vector<Expr> seg_data;
  for (int s = segs - 1; s >= 0; --s) {
    std::vector<Expr> a_of_tile;
    for (int g = s; g < G; g += segs) a_of_tile.push_back(a_issue[static_cast<size_t>(g)]);
    seg_data.push_back(select(iss_kt_q, a_of_tile, zero(gw * dw)));
  }
  IfStmt& ipf = ipd.if_(any_feed);
  ipf.then_().assign(feed_tag_q, issue_tags(iss_kt_q, iss_token_q, c, segs, iss_bank_q));
  ipf.then_().assign(feed_sel_q, iss_sel_q);
  ipf.then_().assign(feed_data_q,
                     m.wire("seg_data", concat(seg_data), "segment s reads the A bank of group kt*SEGS+s"));
  const Expr tap_valid = m.signal("tap_valid", segs * cols);
  const Expr tap_tag = m.signal("tap_tag", segs * cols * ArrayBlock::tag_width(c, banked));
  const Expr tap_psum = m.signal("tap_psum", segs * cols * c.partial_w(), Sign::Unsigned, "PARTIAL_W bits per tap");
  m.instance(find(parts, "kld_array"), "u_array",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"load_i", wl.shift},
              {"load_sel_i", wl.buf},
              {"w_top_i", wl.w_top},
              {"seg_valid_i", feed_valid_q},
              {"sel_i", feed_sel_q},
              {"seg_tag_i", feed_tag_q},
              {"seg_data_i", feed_data_q},
              {"tap_valid_o", tap_valid},
              {"tap_tag_o", tap_tag},
              {"tap_psum_o", tap_psum}});

  // ---- the merge unit ----
  const Expr merged = m.signal("merged", gws * cols * aw);
  std::vector<Connection> merge_conns = {{"clk_i", clk},
              {"tap_valid_i", tap_valid},
              {"tap_tag_i", tap_tag},
              {"tap_psum_i", tap_psum},
              {"root_we_i", root_we_q},
              {"root_token_i", dec_token_q},
              {"root_data_i", root_q},
              {"gather_token_i", gi_q},
              {"gather_en_i", gather_en},
              {"dense_i", dense_q},
              {"group_valid_i", group_valid_q},
              {"out_data_o", merged}};
  if (banked) merge_conns.push_back({"rbank_i", gmt_q[0]});
  m.instance(find(parts, "kld_merge"), "u_merge", merge_conns);

  // ---- streams ----
  m.assign(out_valid, out_valid_q);
  m.assign(out_mtile, out_mt_q);
  m.assign(out_token, out_token_q);
  m.assign(out_lanes, out_lanes_q);
  m.assign(out_data, merged);
  m.assign(dec_valid, s2_valid_q && trace_q && dec_ready_q);
  m.assign(dec_round, s2_round_q);
  m.assign(dec_token, s2_token_q);
  std::vector<Expr> dec_fields;
  for (int l = lanes - 1; l >= 0; --l)
    dec_fields.push_back(concat({root.slice((l + 1) * tw - 1, l * tw), s2_lanes_q[l], reuse[l],
                                 axis.slice(2 * l + 1, 2 * l)}));
  m.assign(dec_data, concat(dec_fields));
  m.assign(busy_out, busy_q);
  m.assign(done_out, done_q);

  // ---- control ----
  const Expr out_fire = m.wire("out_fire", out_valid_q && out_ready);
  const Expr gather_free = m.wire("gather_free", !gather_issue_q && (!sum_valid_q || gather_en),
                                  "the gather engine can take an m-tile this cycle: its last read of the other "
                                  "bank is over or being registered");
  // An m-tile's passes end (mtile_end); its last partial is written `drain` cycles later (landed),
  // and from the next cycle the gather engine may take it. Counted per m-tile: ended and not yet
  // handed to the gather (at most two: the pass engine starts an m-tile only once the gather of
  // the one two before, which wrote the same bank, is over), landed and not yet handed.
  const Expr mtile_end = m.wire("mtile_end", pass_end && kt_is_last, "the m-tile's last pass ends its ISSUE");
  const Expr land_q = m.signal("land_q", drain, Sign::Unsigned,
                               "bit k: an m-tile's passes ended k+1 cycles ago (its last taps in flight)");
  const Expr landed = m.wire("landed", land_q[drain - 1], "an m-tile's last partial is written in this cycle");
  const Expr pend_q = m.signal("handoff_pending_q", 2, Sign::Unsigned, "m-tiles whose passes ended, not handed");
  const Expr ready_q =
      m.signal("handoff_ready_q", 2, Sign::Unsigned, "m-tiles whose partials are all written, not handed");
  const Expr hand_mt_q = m.signal("handoff_mt_q", mtw, Sign::Unsigned, "the m-tile the gather engine takes next");
  const Expr gather_start = m.wire("gather_start", (ready_q != zero(2)) && gather_free,
                                   "hand an m-tile's partials to the gather engine");
  const Expr bank_free = m.wire("bank_free", (pend_q == zero(2)) || ((pend_q == constant(2, 1)) && gather_free),
                                "the gather of the m-tile before the pass engine's is over or taking its last read: "
                                "the next m-tile may write that bank");
  const Expr run_finish = m.wire("run_finish",
                                 out_fire && out_last_q && !gather_issue_q && !sum_valid_q && !mid_valid_q &&
                                     (pend_q == zero(2)),
                                 "the last word of the last gather leaves (in TAIL)");
  Always& hand = m.always_ff(clk, rst_n, "m-tiles between their last issue and the gather engine");
  hand.flop(land_q, concat({land_q.slice(drain - 2, 0), mtile_end}), 0);
  const Expr took = zext(gather_start, 2);
  hand.flop(pend_q, mux(run_start, zero(2), pend_q + zext(mtile_end, 2) - took), 0);
  hand.flop(ready_q, mux(run_start, zero(2), ready_q + zext(landed, 2) - took), 0);
  hand.flop(hand_mt_q, mux(run_start, zero(mtw), mux(gather_start, hand_mt_q + constant(mtw, 1), hand_mt_q)), 0);
  m.assign(advance, (pass_end && !kt_is_last) || (st_handoff && bank_free));
  Always& fsm = m.always_ff(clk, rst_n, "pass engine (docs/hardware.md)");
  for (const Expr& q : {state_q, mt_q, kt_q, buf_q}) fsm.on_reset().assign(q, 0);
  fsm.on_reset().assign(busy_q, 0);
  fsm.on_reset().assign(done_q, 0);
  fsm.on_reset().assign(error_q, 0);
  CaseStmt& sc = fsm.body().case_(state_q);
  Block& idle = sc.item(st[kIdle]);
  IfStmt& go = idle.if_(start_req);
  go.then_().assign(error_q, cfg_error);
  IfStmt& ok = go.then_().if_(!cfg_error);
  ok.then_().assign(busy_q, 1);
  ok.then_().assign(done_q, 0);
  ok.then_().assign(mt_q, 0);
  ok.then_().assign(kt_q, 0);
  ok.then_().assign(buf_q, 0);
  ok.then_().assign(state_q, st[kLoadW]);
  // on to the next pass: it issues from the next cycle if its weights are in, else waits in LOADW
  auto next_pass = [&](Block& b) {
    b.assign(buf_q, !buf_q);
    IfStmt& in = b.if_(wl.next_ready);
    in.then_().assign(state_q, st[kIssue]);
    in.else_().assign(state_q, st[kLoadW]);
  };
  Block& lw = sc.item(st[kLoadW]);
  lw.comment("wait until the pass's last row is in the PEs (a cycle after the loader sent it)");
  lw.if_(wl.loaded).then_().assign(state_q, st[kIssue]);
  Block& is = sc.item(st[kIssue]);
  IfStmt& isl = is.if_(pass_last);
  IfStmt& kl = isl.then_().if_(kt_is_last);
  kl.then_().assign(kt_q, 0);
  IfStmt& ml = kl.then_().if_(mt_is_last);
  ml.then_().assign(state_q, st[kTail]);
  ml.else_().assign(state_q, st[kHandoff]);
  kl.else_().assign(kt_q, kt_q + constant(ktw, 1));
  next_pass(kl.else_());
  Block& ho = sc.item(st[kHandoff]);
  ho.comment("the passes of m-tile mt are over; mt+1 writes the bank of mt-1: wait until its gather has");
  ho.comment("read it (mt's own last partials land meanwhile, in the other bank)");
  IfStmt& hf = ho.if_(bank_free);
  hf.then_().assign(mt_q, mt_q + constant(mtw, 1));
  next_pass(hf.then_());
  Block& tl = sc.item(st[kTail]);
  IfStmt& tf = tl.if_(run_finish);
  tf.then_().assign(state_q, st[kIdle]);
  tf.then_().assign(busy_q, 0);
  tf.then_().assign(done_q, 1);
  sc.default_().assign(state_q, st[kIdle]);

  Always& dete = m.always_ff(clk, rst_n,
                             paired ? "detection engine: pairs of rounds of LANES groups, a scan position every two "
                                      "cycles"
                                    : "detection engine: rounds of LANES groups, one scan position per cycle");
  Expr det_over;  // the last position of the last round steps
  if (paired) {
    // Each step moves to the lane's other group; a step from group 1 moves the scan on, past the
    // grid's last position to the next pair's first.
    const Expr pair_over = m.wire("det_pair_over", step && phase_q && scan_last, "the pair's last position steps");
    // No run-start term: a run starts only while idle, where the phase is 0 (a detection ends with
    // the step from group 1) and nothing steps, so the window's read address (phase_d, slot) does
    // not wait for the register bus's START decode.
    const Expr phase_d = m.wire("det_phase_d", phase_q != step, "phase of the next cycle");
    if (rw > 1) {
      const Expr pair_d = m.wire("det_pair_d",
                                 mux(run_start, zero(rw - 1),
                                     mux(pair_over && !set_is_last, set_q + constant(set_w, 1), set_q)),
                                 "pair of the next cycle");
      m.assign(round_d, concat({pair_d, phase_d}));
    } else {
      m.assign(round_d, phase_d);
    }
    det_over = pair_over && set_is_last;
  } else {
    m.assign(round_d, mux(run_start, zero(rw),
                          mux(step && scan_last && !set_is_last, round_q + constant(rw, 1), round_q)));
    det_over = step && scan_last && set_is_last;
  }
  dete.flop(round_q, round_d, 0);
  const Expr det_busy_d = m.wire("det_busy_d", mux(run_start, !dense_start && !keep_start, det_busy_q && !det_over));
  const Expr s2_valid_d = m.wire("det_s2_valid_d", !run_start && mux(det_advance, step, s2_valid_q));
  // Next cycle's advance, from the ready the consumer raises now (TRACE is written only while idle,
  // and a run starts with the second stage empty).
  const Expr advance_next =
      m.wire("det_advance_d", !(trace_q && s2_valid_d && !dec_ready), "the stages move on next cycle");
  m.assign(step_next, det_busy_d && advance_next);
  m.assign(retire_next, s2_valid_d && advance_next);
  dete.flop(det_busy_q, det_busy_d, 0);
  dete.flop(s2_valid_q, s2_valid_d, 0);
  dete.flop(dec_ready_q, dec_ready, 0);
  dete.flop(step, step_next, 0);
  dete.flop(retire, retire_next, 0);
  Block& s2 = m.always_ff_no_reset(clk, "the position in the lanes' second stage").if_(step).then_();
  s2.assign(s2_round_q, round_q);
  s2.assign(s2_token_q, scan_token);
  s2.assign(s2_lanes_q, lanes_valid);
  // STATUS.DECIDED: a detecting run fills the lists and root tables for the stored A and
  // configuration; a dense run empties the lists; a write to A, or to a register detection reads
  // (any but CTRL and DIM_M), leaves them stale.
  const Expr stale = m.wire("decisions_stale",
                            a_fire || (wr && (reg_addr != constant(ra, reg::kCtrl)) &&
                                       (reg_addr != constant(ra, reg::kDimM))),
                            "the kept decisions no longer match A and the configuration");
  dete.flop(decided_q, !stale && mux(run_start, !dense_start, decided_q), 0);

  Always& gat = m.always_ff(clk, rst_n, "gather engine: one token enters per cycle while the pipeline advances");
  for (const Expr& q : {gather_issue_q, gmt_q, gi_q}) gat.on_reset().assign(q, 0);
  IfStmt& gs = gat.body().if_(gather_start);
  gs.then_().assign(gather_issue_q, 1);
  gs.then_().assign(gmt_q, hand_mt_q);
  gs.then_().assign(gi_q, 0);
  IfStmt& gf = gs.else_().if_(gather_enter);
  IfStmt& gl = gf.then_().if_(gi_is_last);
  gl.then_().assign(gather_issue_q, 0);
  gl.else_().assign(gi_q, gi_next.slice(tw - 1, 0));
  Always& gp = m.always_ff(clk, rst_n, "gather pipeline: valid bits and the token each place holds");
  IfStmt& ga = gp.body().if_(gather_en);
  for (const auto& [q, d] : std::vector<std::pair<Expr, Expr>>{{sum_valid_q, gather_enter},
                                                               {sum_last_q, gi_is_last},
                                                               {sum_mt_q, gmt_q},
                                                               {sum_token_q, gi_q},
                                                               {sum_lanes_q, enter_lanes},
                                                               {mid_valid_q, sum_valid_q},
                                                               {mid_last_q, sum_last_q},
                                                               {mid_mt_q, sum_mt_q},
                                                               {mid_token_q, sum_token_q},
                                                               {mid_lanes_q, sum_lanes_q},
                                                               {out_lanes_q, mid_lanes_q},
                                                               {out_valid_q, mid_valid_q},
                                                               {out_last_q, mid_last_q},
                                                               {out_mt_q, mid_mt_q},
                                                               {out_token_q, mid_token_q}}) {
    gp.on_reset().assign(q, 0);
    ga.then_().assign(q, d);
  }
  m.unused(concat({pass_pending, pass_nonempty}),
           "ISSUE ends on pass_last; pending and nonempty are kept for the dispatcher's unit test");

  // ---- performance counters (cleared by a run start) ----
  const int mw = dim_m_q.width();
  const Expr cols_here = m.wire("cols_valid", mux(mt_is_last, dim_m_q - zext(mt_q, mw) * static_cast<int64_t>(cols),
                                                  constant(mw, static_cast<uint64_t>(cols))),
                                "output columns of this m-tile");
  // At most ROWS*COLS MACs a cycle, and no more than a run's N*K*M: the per-cycle sum is that wide.
  const int incw = std::min(clog2(static_cast<int64_t>(rows) * cols + 1), macs_w);
  const Expr macs_per_issue = m.wire("macs_per_issue", resize(cols_here, incw) << gshift);
  if (mw > incw) m.unused(cols_here.slice(mw - 1, incw), "an m-tile has at most COLS columns");
  Expr issued_now = zero(incw), skipped_now = zero(macs_w);
  for (int s = 0; s < segs; ++s) issued_now = issued_now + mux(seg_valid[s], macs_per_issue, zero(incw));
  // The lanes' REUSE decisions are registered before the skipped-MAC sum: summed and added in
  // the cycle of the decision, they made kld_top's critical path (window SRAM, detector lane,
  // sum, 64-bit counter). MACS_SKIPPED lags one cycle, hidden by the passes and the gather that
  // follow the last decision before DONE is set.
  const Expr reused_pairs_q = m.signal("reused_pairs_q", lanes, Sign::Unsigned, "lanes deciding REUSE last cycle");
  for (int l = 0; l < lanes; ++l)
    skipped_now = skipped_now + mux(reused_pairs_q[l], resize(dim_m_q, macs_w) << gshift, zero(macs_w));
  const Expr issued_add = m.wire("macs_issued_now", issued_now);
  const Expr skipped_add = m.wire("macs_skipped_now", skipped_now);
  const Expr stall_trace = m.wire("stall_trace", trace_q && s2_valid_q && !dec_ready_q, "the detector waits for the trace");
  const Expr starved = m.wire("starved", st_issue && (seg_valid == zero(segs)) && !pass_last,
                              "ISSUE waits for the detector to extend a compute list");
  const Expr stall_out = m.wire("stall_out", out_valid_q && !out_ready, "the gather waits for the consumer");
  const Expr wait_gather = m.wire("wait_gather", st_handoff && !bank_free,
                                  "the pass engine waits for the gather of the other bank");
  const Expr stalled = m.wire("stalled", stall_trace || stall_out);
  Always& ctr = m.always_ff(clk, rst_n, "performance counters");
  auto counter = [&](const Expr& q, const Expr& inc) {
    ctr.flop(q, mux(run_start, zero(q.width()), q + inc), 0);
  };
  // CYCLES and STALL have no bound, so 64 bits, each half incremented apart (split_increment): a
  // 64-bit increment's carry chain was kld_top's critical path on ASAP7.
  auto wide_counter = [&](const Expr& q, const Expr& inc) {
    ctr.flop(q, mux(run_start, zero(64), split_increment(q, inc)), 0);
  };
  wide_counter(cycles_q, busy_q);
  // BUSY, STARVED and MACS_ISSUED add increments registered a cycle earlier: their conditions come
  // from the dispatcher's issue logic, which then fed a 64-bit carry chain in the same cycle (kld_top's
  // second-longest path on sky130). The lag is hidden: the gather follows the last issue.
  const Expr issue_inc_q = m.signal("issue_inc_q", 2, Sign::Unsigned, "{starved, issued} last cycle");
  const Expr issued_inc_q = m.signal("macs_issued_inc_q", incw, Sign::Unsigned, "MACs issued last cycle");
  ctr.flop(issue_inc_q, mux(run_start, zero(2), concat({starved, reduce_or(seg_valid)})), 0);
  ctr.flop(issued_inc_q, mux(run_start, zero(incw), issued_add), 0);
  counter(busy_cnt_q, zext(issue_inc_q[0], busy_w));
  wide_counter(stall_q, stalled);
  counter(stall_out_q, mux(stall_out, constant(32, 1), zero(32)));
  counter(stall_trace_q, mux(stall_trace, constant(32, 1), zero(32)));
  counter(wait_gather_q, mux(wait_gather, constant(32, 1), zero(32)));
  counter(loadw_cycles_q, mux(st_loadw, constant(32, 1), zero(32)));
  counter(starved_q, zext(issue_inc_q[1], 32));
  std::vector<Expr> reused_now;
  for (int l = lanes - 1; l >= 0; --l) reused_now.push_back(retire && s2_lanes_q[l] && reuse[l]);
  ctr.flop(reused_pairs_q, mux(run_start, zero(lanes), concat(reused_now)), 0);
  counter(issued_q, zext(issued_inc_q, macs_w));
  counter(skipped_q, skipped_add);
  // REUSED[g] counts from registered decisions too: its 32-bit increment, enabled straight by
  // the lane, was the next critical path on sky130 (the lane, then a ripple carry chain).
  const Expr reused_groups_q = m.signal("reused_groups_q", G, Sign::Unsigned, "groups deciding REUSE last cycle");
  std::vector<Expr> reused_groups_now;
  for (int g = G - 1; g >= 0; --g) reused_groups_now.push_back(root_we[g] && reuse[g % lanes]);
  ctr.flop(reused_groups_q, mux(run_start, zero(G), concat(reused_groups_now)), 0);
  for (int g = 0; g < G; ++g)
    counter(reused_q[static_cast<size_t>(g)], zext(reused_groups_q[g], reused_w));

  // ---- register reads ----
  regs.read("STATUS", "BUSY", busy_q);
  regs.read("STATUS", "DONE", done_q);
  regs.read("STATUS", "ERROR", error_q);
  regs.read("STATUS", "DECIDED", decided_q);
  regs.read_wide("CYCLES", cycles_q);
  regs.read_wide("BUSY", busy_cnt_q);
  regs.read_wide("STALL", stall_q);
  regs.read_wide("MACS_ISSUED", issued_q);
  regs.read_wide("MACS_SKIPPED", skipped_q);
  regs.read("STALL_OUT", stall_out_q);
  regs.read("STALL_TRACE", stall_trace_q);
  regs.read("WAIT_GATHER", wait_gather_q);
  regs.read("LOADW_CYCLES", loadw_cycles_q);
  regs.read("STARVED", starved_q);
  for (int g = 0; g < G; ++g) regs.read("REUSED", reused_q[static_cast<size_t>(g)], g);
  regs.finish();
  return m;
}

Module PlainTopBlock::generate(const HwConfig& c, const std::vector<const Module*>& parts) {
  Module m("kld_plain_top",
           "Plain dense weight-stationary systolic array of the same size and widths with no reuse logic: the "
           "area and energy baseline");
  const int dw = c.data_w, aw = c.acc_w, gw = c.group_w, rows = c.rows, cols = c.cols, segs = c.segs();
  const int G = c.max_groups(), tw = c.token_w(), ktw = clog2(c.max_kt()), mtw = clog2(c.max_mt());
  const int ra = reg_addr_width(c), krow_w = clog2(c.max_kt() * rows);
  // From a pass's last issue until its last sum is written: the issue register, the array and the
  // accumulators' read stage.
  const int drain = kPlainIssueStages + rows + cols - 1 + c.mul_pipe + kPlainAccStages, cntw = clog2(drain + 1);
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr reg_valid = m.input("reg_valid_i", 1);
  const Expr reg_write = m.input("reg_write_i", 1);
  const Expr reg_addr = m.input("reg_addr_i", ra);
  const Expr reg_wdata = m.input("reg_wdata_i", 32);
  const Expr reg_rdata = m.output("reg_rdata_o", 32);
  const Expr a_valid = m.input("a_valid_i", 1);
  const Expr a_ready = m.output("a_ready_o", 1);
  const Expr a_token = m.input("a_token_i", tw);
  const Expr a_group = m.input("a_group_i", clog2(G));
  const Expr a_data = m.input("a_data_i", gw * dw);
  const Expr b_valid = m.input("b_valid_i", 1);
  const Expr b_ready = m.output("b_ready_o", 1);
  const Expr b_row = m.input("b_row_i", krow_w);
  const Expr b_mtile = m.input("b_mtile_i", mtw);
  const Expr b_data = m.input("b_data_i", cols * dw);
  const Expr out_valid = m.output("out_valid_o", 1);
  const Expr out_ready = m.input("out_ready_i", 1);
  const Expr out_mtile = m.output("out_mtile_o", mtw);
  const Expr out_token = m.output("out_token_o", tw);
  const Expr out_data = m.output("out_data_o", cols * aw);
  const Expr busy_out = m.output("busy_o", 1);
  const Expr done_out = m.output("done_o", 1);

  // ---- registers: the fields of the register map the plain top implements ----
  const Expr busy_q = m.signal("busy_q", 1), done_q = m.signal("done_q", 1);
  const Expr cycles_q = m.signal("cycles_q", 64);
  const Expr wr = m.wire("reg_wr", reg_valid && reg_write && !busy_q, "configuration is written only while idle");
  RegisterBlock regs(m, c, RegisterBlock::Top::Plain, {clk, rst_n, reg_valid, reg_addr, reg_wdata, reg_rdata}, wr);
  const Expr start = regs.pulse("CTRL", "START");
  const Expr dim_t_q = regs.q("DIM_T"), dim_h_q = regs.q("DIM_H"), dim_w_q = regs.q("DIM_W");
  const Expr dim_k_q = regs.q("DIM_K"), dim_m_q = regs.q("DIM_M");
  // N = T*H*W in TW+1 bits (it fits when T, H, W are within MAX_T, MAX_H, MAX_W; the low bits of a
  // product depend on the operands' low bits only), in two registered steps so that no path holds
  // two multipliers. A run's first issue is three cycles after its last dimension write (START,
  // LOADW, then ISSUE): N is ready then.
  const int nw = tw + 1;
  const Expr hw_tokens = m.signal("hw_tokens_q", nw, Sign::Unsigned, "H*W");
  const Expr n_tokens = m.signal("n_tokens_q", nw, Sign::Unsigned, "N of the configured grid");
  Always& sizes = m.always_ff(clk, rst_n, "N, two cycles after the dimensions: H*W, then T*(H*W)");
  sizes.flop(hw_tokens, resize(dim_h_q, nw) * resize(dim_w_q, nw), 0);
  sizes.flop(n_tokens, resize(dim_t_q, nw) * hw_tokens, 0);

  // Run control: for each m-tile, LOADW (first pass only when the loader is ahead), ISSUE per k-tile
  // pass, DRAIN, then hand the m-tile to the gather engine and go on with the next m-tile (TAIL
  // after the last: wait until its last word has left). The gather reads an m-tile's outputs while
  // the next m-tile's first pass overwrites them behind it, one memory bank for both.
  std::vector<Expr> st(static_cast<size_t>(kTail) + 1);
  for (State k : {kIdle, kLoadW, kIssue, kDrain, kTail})
    st[static_cast<size_t>(k)] =
        m.localparam(kStateNames[k], 3, static_cast<uint64_t>(k), k == kIdle ? "run control states" : "");
  const Expr state_q = m.signal("state_q", 3);
  const Expr mt_q = m.signal("mt_q", mtw), kt_q = m.signal("kt_q", ktw), cnt_q = m.signal("cnt_q", cntw);
  const Expr buf_q = m.signal("buf_q", 1, Sign::Unsigned, "weight buffer of the issuing pass (pass parity)");
  const Expr tok_q = m.signal("token_q", tw + 1, Sign::Unsigned, "token the pass issues");
  auto in_state = [&](State s) { return state_q == st[static_cast<size_t>(s)]; };
  const Expr st_issue = m.wire("st_issue", in_state(kIssue));
  const Expr st_drain = m.wire("st_drain", in_state(kDrain));
  const Expr kt_is_last = m.wire("kt_is_last", last_tile(kt_q, rows, dim_k_q));
  const Expr mt_is_last = m.wire("mt_is_last", last_tile(mt_q, cols, dim_m_q));
  const Expr tok_is_last = m.wire("token_is_last", tok_q + constant(tw + 1, 1) == n_tokens);
  const Expr tok = m.wire("token", tok_q.slice(tw - 1, 0));
  const Expr kt_d = m.signal("kt_d", ktw), tok_d = m.signal("token_d", tw + 1);
  // The gather engine streams m-tile gather_mt_q's outputs, token gather_token_q per cycle, into the
  // output register (no path from a memory to an output) whenever it is free or its word is taken.
  const Expr gather_active_q = m.signal("gather_active_q", 1, Sign::Unsigned, "the gather engine holds an m-tile");
  const Expr gather_mt_q = m.signal("gather_mt_q", mtw);
  const Expr gather_tok_q = m.signal("gather_token_q", tw + 1, Sign::Unsigned, "token the gather reads next");
  const Expr out_valid_q = m.signal("out_valid_q", 1, Sign::Unsigned, "the output register holds a word");
  const Expr out_mt_q = m.signal("out_mt_q", mtw), out_token_q = m.signal("out_token_q", tw);
  const Expr out_data_q = m.signal("out_data_q", cols * c.out_sum_w(), Sign::Unsigned, "OUT_SUM_W bits a word");
  const Expr gather_en = m.wire("gather_en", !out_valid_q || out_ready, "the output register takes a word");
  const Expr gather_enter = m.wire("gather_enter", gather_active_q && gather_en, "the gather reads a token");
  const Expr gather_tok_is_last = m.wire("gather_token_is_last", gather_tok_q + constant(tw + 1, 1) == n_tokens);
  // A pass issues token j only once the gather has read j (the first pass of an m-tile overwrites
  // the accumulator the previous m-tile's gather has yet to read; later passes find it done).
  const Expr issue = m.wire("issue", st_issue && (!gather_active_q || gather_tok_q > tok_q),
                            "a token enters the array");
  const Expr pass_end = m.wire("pass_end", issue && tok_is_last);
  const Expr drain_done = m.wire("drain_done", cnt_q == constant(cntw, static_cast<uint64_t>(drain - 1)));
  const Expr handoff = m.wire("handoff", st_drain && drain_done && !gather_active_q,
                              "the drained m-tile goes to the gather engine");
  const Expr advance = m.wire("pass_advance", (pass_end && !kt_is_last) || (handoff && !mt_is_last),
                              "on to the next pass");
  // The issuing token and k-tile, next values (a START comes only while idle: configuration is
  // written only then).
  const Expr tok_after = mux(tok_is_last, zero(tw + 1), tok_q + constant(tw + 1, 1));
  m.assign(tok_d, mux(start, zero(tw + 1), mux(issue, tok_after, tok_q)));
  const Expr kt_after = mux(kt_is_last, zero(ktw), kt_q + constant(ktw, 1));
  m.assign(kt_d, mux(start, zero(ktw), mux(pass_end, kt_after, kt_q)));
  Always& issue_pos = m.always_ff(clk, rst_n, "token and k-tile of the issuing pass");
  issue_pos.flop(tok_q, tok_d, 0);
  issue_pos.flop(kt_q, kt_d, 0);

  // A banks as in kld_top; the array reads all groups of the k-tile at once, at the issuing token
  // (a register), and the selected row lands in the issue register with the issue's valid, tag and
  // weight buffer: the memory read is off the run control's paths and off the PEs'.
  const Module& a_sram = find(parts, SramBlock::name(token_memory_depth(c), gw * dw, 1));
  std::vector<Expr> a_rd;
  for (int g = 0; g < G; ++g) {
    a_rd.push_back(m.signal("a_rdata_" + std::to_string(g), gw * dw));
    m.instance(a_sram, kABankInstancePrefix + std::to_string(g),
               {{"clk_i", clk},
                {"we_i", a_valid && !busy_q && (a_group == constant(clog2(G), static_cast<uint64_t>(g)))},
                {"waddr_i", a_token},
                {"wdata_i", a_data},
                {"raddr_i", tok},
                {"rdata_o", a_rd.back()}});
  }
  std::vector<Expr> row_data;
  for (int s = segs - 1; s >= 0; --s) {
    std::vector<Expr> a_of_tile;
    for (int g = s; g < G; g += segs) a_of_tile.push_back(a_rd[static_cast<size_t>(g)]);
    // Rows past DIM_K read zero (their groups hold another run's data).
    const Expr exists =
        (zext(kt_q, dim_k_q.width()) * static_cast<int64_t>(rows) + static_cast<int64_t>(s * gw)) < dim_k_q;
    row_data.push_back(mux(exists, select(kt_q, a_of_tile, zero(gw * dw)), zero(gw * dw)));
  }
  const Expr row_q = m.signal("row_q", rows * dw, Sign::Unsigned, "the A row of the issue register's token");
  m.always_ff_no_reset(clk, "the issue register: the A row").assign(row_q, concat(row_data));
  m.assign(a_ready, !busy_q);
  m.assign(b_ready, !busy_q);
  // kld_top's loader with a reach of ROWS (no issue registers; a Reach override unless equal).
  const WeightLoader wl = weight_loader(m, c, find(parts, "kld_weight_loader"), kPlainIssueStages + rows,
                                        {clk, rst_n, start, pass_end, advance, buf_q, dim_k_q, dim_m_q,
                                         b_valid && !busy_q, concat({b_row, b_mtile}), b_data});

  const int tagw = ArrayBlock::tag_width(c, false);
  const Expr issue_q = m.signal("issue_q", 1, Sign::Unsigned, "the issue register holds a token");
  const Expr issue_buf_q = m.signal("issue_buf_q", 1, Sign::Unsigned, "its weight buffer");
  const Expr issue_tag_q = m.signal("issue_tag_q", tagw, Sign::Unsigned, "its {k-tile, token}");
  Always& isr = m.always_ff(clk, rst_n, "the issue register: valid, weight buffer and tag");
  isr.flop(issue_q, issue, 0);
  isr.flop(issue_buf_q, buf_q, 0);
  isr.flop(issue_tag_q, m.wire("issue_tag", issue_tags(kt_q, tok, c, 1), "{k-tile, token}"), 0);
  const Expr tap_valid = m.signal("tap_valid", cols), tap_tag = m.signal("tap_tag", cols * tagw);
  // kld_plain_array's taps (its PARTIAL_W: a column of ROWS products, at most MAX_K of them non-zero)
  // and a dot product's width (docs/hardware.md "Widths").
  const int pw = c.sum_w(std::min(rows, c.max_k)), sw = c.out_sum_w();
  const Expr tap_psum = m.signal("tap_psum", cols * pw);
  m.instance(find(parts, "kld_plain_array"), "u_array",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"load_i", wl.shift},
              {"load_sel_i", wl.buf},
              {"w_top_i", wl.w_top},
              {"seg_valid_i", issue_q},
              {"sel_i", issue_buf_q},
              {"seg_tag_i", issue_tag_q},
              {"seg_data_i", row_q},
              {"tap_valid_o", tap_valid},
              {"tap_tag_o", tap_tag},
              {"tap_psum_o", tap_psum}});

  // Output accumulators: one memory per column, read-modify-write at each tap in two stages. A tap
  // reads its token's sum into acc_old_q (with its partial, address and first-k-tile flag); the
  // cycle after, the sum (or the first k-tile's partial alone) is written back. A tap of the token
  // written in that same cycle (the next k-tile's pass of a one-token grid) takes the sum being
  // written instead of the memory's stale word.
  const Module& acc_sram = find(parts, SramBlock::name(token_memory_depth(c), sw, 2));
  std::vector<Expr> out_words;
  Always& accr = m.always_ff(clk, rst_n, "accumulators' read stage: the tap's valid");
  Block& accd = m.always_ff_no_reset(clk, "accumulators' read stage: address, partial, old sum (data only)");
  for (int cc = cols - 1; cc >= 0; --cc) {
    const std::string cn = std::to_string(cc);
    const Expr tag = tap_tag.slice(cc * tagw + tw - 1, cc * tagw);
    // The first k-tile's partial starts the sum (the tag carries the k-tile: passes overlap).
    const Expr first = tagw == tw ? bit(true) : tap_tag.slice((cc + 1) * tagw - 1, cc * tagw + tw) == zero(ktw);
    const Expr we_q = m.signal("acc_we_" + cn + "_q", 1, Sign::Unsigned, "column " + cn + ": a sum to write");
    const Expr addr_q = m.signal("acc_addr_" + cn + "_q", tw);
    const Expr first_q = m.signal("acc_first_" + cn + "_q", 1);
    const Expr psum_q = m.signal("acc_in_" + cn + "_q", pw, Sign::Unsigned, "the tap's partial");
    const Expr psum = m.wire("acc_in_" + cn, sext(psum_q, sw));
    const Expr old_q = m.signal("acc_old_" + cn + "_q", sw);
    const Expr rd = m.signal("acc_old_" + cn, sw), word = m.signal("acc_out_" + cn, sw);
    const Expr sum = m.wire("acc_sum_" + cn, mux(first_q, psum, old_q + psum), "the word written back");
    const Expr same = m.wire("acc_fwd_" + cn, we_q && addr_q == tag, "the tap's token is being written now");
    accr.flop(we_q, tap_valid[cc], 0);
    accd.assign(addr_q, tag);
    accd.assign(first_q, first);
    accd.assign(psum_q, tap_psum.slice((cc + 1) * pw - 1, cc * pw));
    accd.assign(old_q, mux(same, sum, rd));
    m.instance(acc_sram, "u_acc_" + cn,
               {{"clk_i", clk},
                {"we_i", we_q},
                {"waddr_i", addr_q},
                {"wdata_i", sum},
                {"raddr0_i", tag},
                {"rdata0_o", rd},
                {"raddr1_i", gather_tok_q.slice(tw - 1, 0)},
                {"rdata1_o", word}},
               "accumulators of column " + cn);
    out_words.push_back(word);
  }
  Always& outr = m.always_ff(clk, rst_n, "output register: valid, m-tile and token");
  IfStmt& oe = outr.body().if_(gather_en);
  for (const auto& [q, d] : std::vector<std::pair<Expr, Expr>>{
           {out_valid_q, gather_enter}, {out_mt_q, gather_mt_q}, {out_token_q, gather_tok_q.slice(tw - 1, 0)}}) {
    outr.on_reset().assign(q, 0);
    oe.then_().assign(q, d);
  }
  m.always_ff_no_reset(clk, "output register: the words (data only)")
      .if_(gather_en)
      .then_()
      .assign(out_data_q, concat(out_words));
  m.assign(out_valid, out_valid_q);
  m.assign(out_mtile, out_mt_q);
  m.assign(out_token, out_token_q);
  std::vector<Expr> sext_words;  // most significant first
  for (int cc = cols - 1; cc >= 0; --cc) sext_words.push_back(sext(out_data_q.slice((cc + 1) * sw - 1, cc * sw), aw));
  m.assign(out_data, concat(sext_words));
  m.assign(busy_out, busy_q);
  m.assign(done_out, done_q);

  Always& gat = m.always_ff(clk, rst_n, "gather engine: takes a drained m-tile, reads one token per cycle");
  for (const Expr& q : {gather_active_q, gather_mt_q, gather_tok_q}) gat.on_reset().assign(q, 0);
  IfStmt& gh = gat.body().if_(handoff);
  gh.then_().assign(gather_active_q, 1);
  gh.then_().assign(gather_mt_q, mt_q);
  gh.then_().assign(gather_tok_q, 0);
  IfStmt& ge = gh.else_().if_(gather_enter);
  ge.then_().assign(gather_tok_q, gather_tok_q + constant(tw + 1, 1));
  ge.then_().if_(gather_tok_is_last).then_().assign(gather_active_q, 0);

  Always& fsm = m.always_ff(clk, rst_n, "run control: for each m-tile, every k-tile pass, then the hand-off");
  for (const Expr& q : {state_q, mt_q, cnt_q, buf_q}) fsm.on_reset().assign(q, 0);
  fsm.on_reset().assign(busy_q, 0);
  fsm.on_reset().assign(done_q, 0);
  // on to the next pass: it issues from the next cycle if its weights are in, else waits in LOADW
  auto next_pass = [&](Block& b) {
    b.assign(buf_q, !buf_q);
    IfStmt& in = b.if_(wl.next_ready);
    in.then_().assign(state_q, st[kIssue]);
    in.else_().assign(state_q, st[kLoadW]);
  };
  CaseStmt& sc = fsm.body().case_(state_q);
  IfStmt& go = sc.item(st[kIdle]).if_(start);
  go.then_().assign(busy_q, 1);
  go.then_().assign(done_q, 0);
  go.then_().assign(mt_q, 0);
  go.then_().assign(buf_q, 0);
  go.then_().assign(state_q, st[kLoadW]);
  sc.item(st[kLoadW]).if_(wl.loaded).then_().assign(state_q, st[kIssue]);
  IfStmt& kl = sc.item(st[kIssue]).if_(pass_end).then_().if_(kt_is_last);
  kl.then_().assign(cnt_q, 0);
  kl.then_().assign(state_q, st[kDrain]);
  next_pass(kl.else_());
  IfStmt& dd = sc.item(st[kDrain]).if_(drain_done);
  IfStmt& ml = dd.then_().if_(handoff).then_().if_(mt_is_last);
  ml.then_().assign(state_q, st[kTail]);
  ml.else_().assign(mt_q, mt_q + constant(mtw, 1));
  next_pass(ml.else_());
  dd.else_().assign(cnt_q, cnt_q + constant(cntw, 1));
  IfStmt& tf = sc.item(st[kTail]).if_(!gather_active_q && out_valid_q && out_ready);
  tf.then_().comment("the last word leaves");
  tf.then_().assign(state_q, st[kIdle]);
  tf.then_().assign(busy_q, 0);
  tf.then_().assign(done_q, 1);
  sc.default_().assign(state_q, st[kIdle]);

  Always& ctr = m.always_ff(clk, rst_n, "the cycle counter (cleared by a run start)");
  ctr.flop(cycles_q, mux(start, zero(64), mux(busy_q, cycles_q + constant(64, 1), cycles_q)), 0);
  regs.read("STATUS", "BUSY", busy_q);
  regs.read("STATUS", "DONE", done_q);
  regs.read_wide("CYCLES", cycles_q);
  regs.finish();
  return m;
}

}  // namespace kaleido::hw
