// Verilator testbench of kld_top, driven by golden vectors (docs/hardware.md).
// Built for kld_plain_top (Verilator --top-module kld_plain_top) it runs the
// dense baseline instead: every run dense, outputs compared with A . B from
// the golden model, CYCLES read back (the plain top has no other counters and
// no decision trace).
//
// Programs the registers from the generated register-map header, loads the
// scratchpads, runs one GEMM in reuse or dense mode with seeded random stalls
// on every valid/ready interface, and compares every output element, every
// (token, group) decision with its reference and root, and every work counter
// with the golden model; cycle counters are checked against the documented
// schedule. With --reset-at (or --reset-at-fraction) the first run is cut by
// a reset in its middle, then everything is programmed, loaded and run again
// and must compare as if nothing had happened; the report says where the
// reset hit and what the counters read before and after it. Each --keep vectors
// file (the same A and configuration, another B) runs after the first reuse run
// with CTRL.KEEP: B alone is loaded, the run reuses that run's decisions, and its
// outputs are compared with the golden model of its B. Each --then vectors file
// (another workload) is then programmed, loaded and run on the same instance
// without a reset, so nothing the earlier runs left may reach it. Prints a report
// (and JSON with --json); exit 0 only when everything compared equal and
// something was compared.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// The Verilator model folder holds the header of the top it was built for.
#if __has_include("Vkld_plain_top.h")
#include "Vkld_plain_top.h"
#define KLD_TB_PLAIN 1
using TopModel = Vkld_plain_top;
#else
#include "Vkld_top.h"
#define KLD_TB_PLAIN 0
using TopModel = Vkld_top;
#endif
#include "kld_regs.hpp"
#include "port_bits.hpp"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/random.hpp"
#include "golden/scan.hpp"
#include "golden/vectors.hpp"
#include "hw/schedule.hpp"

namespace {

using kaleido::GoldenVectors;
using kld_tb::get_bits;
using kld_tb::set_bits;

constexpr bool kPlainTop = KLD_TB_PLAIN != 0;
constexpr int kGatherW = kPlainTop ? 1 : static_cast<int>(kld::kGATHER_W);  // output words per beat
constexpr const char* kTopName = kPlainTop ? "kld_plain_top" : "kld_top";

struct Options {
  std::string vectors;
  std::string mode = "reuse";  // reuse or dense
  uint64_t seed = 1;
  double stall = 0.3;          // probability that a driven valid/ready is low in a cycle
  uint64_t max_cycles = 50'000'000;
  std::string json_out;
  std::string trace_file;
  uint64_t trace_from = 0, trace_to = 0;
  int64_t reset_at = -1;       // assert reset in the middle of the first run at this cycle, then rerun
  double reset_fraction = -1;  // the same at this fraction (0..1) of that run's free-running schedule
  bool corrupt_expected = false;  // negative test: flip one expected output bit
  int runs = 1;                // back-to-back runs without reset
  std::string dump_inputs;     // write every cycle's input values (for gate-level replay)
  bool check_registers = false;  // read back the register map after reset, before the runs
  bool check_start = false;      // kld_top: START refused on bad values, including one written just before
  // kld_top: further B tiles of the same A (vectors files), each run with CTRL.KEEP after the first
  // reuse run: no detection, the lists and root tables of that run.
  std::vector<std::string> keep;
  // Vectors files of other workloads (any shape the hardware takes), each reprogrammed, loaded
  // and run in every --mode after the runs above, on the same instance and without a reset.
  std::vector<std::string> then;
  std::string repro;
};

// Work and cycle counters as the register map shows them.
struct Counters {
  uint64_t cycles = 0, busy = 0, stall = 0, issued = 0, skipped = 0;
  bool all_zero() const { return cycles == 0 && busy == 0 && stall == 0 && issued == 0 && skipped == 0; }
  nlohmann::json to_json() const {
    return {{"cycles", cycles}, {"busy_cycles", busy}, {"stall_cycles", stall}, {"macs_issued", issued},
            {"macs_skipped", skipped}};
  }
};

// What a reset in the middle of a run did: where it hit, and the counters
// just before it (counting) and just after it (restarted from zero).
struct ResetReport {
  int64_t requested_at = -1;  // cycles after START
  bool happened = false;      // false: the run was done before that cycle
  uint64_t run_cycles = 0;    // cycles of the run when it was cut (or when it finished)
  Counters before, after;
  nlohmann::json to_json() const {
    return {{"requested_at", requested_at}, {"happened", happened}, {"run_cycles", run_cycles},
            {"counters_before", before.to_json()}, {"counters_after", after.to_json()}};
  }
};

class Harness {
 public:
  Harness(const Options& o, const GoldenVectors& v)
      : opt_(o), v_(&v), rng_(o.seed), ctx_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<TopModel>(ctx_.get());
    if (!o.dump_inputs.empty()) {
      dump_in_ = std::make_unique<std::ofstream>(o.dump_inputs);
      if (!*dump_in_) throw kaleido::FileError(o.dump_inputs, "cannot write");
      *dump_in_ << "ports: rst_ni reg_valid_i reg_write_i reg_addr_i reg_wdata_i a_valid_i a_token_i a_group_i a_data_i "
                   "b_valid_i b_row_i b_mtile_i b_data_i out_ready_i"
                << (kPlainTop ? "" : " dec_ready_i") << "\n";
    }
#if VM_TRACE_FST
    if (!o.trace_file.empty()) {
      ctx_->traceEverOn(true);
      fst_ = std::make_unique<VerilatedFstC>();
      top_->trace(fst_.get(), 99);
      fst_->open(o.trace_file.c_str());
    }
#endif
  }
  ~Harness() {
#if VM_TRACE_FST
    if (fst_) fst_->close();
#endif
    top_->final();
  }
  // Another workload on the same instance (--then): program() and load() write it from now on.
  void use(const GoldenVectors& v) { v_ = &v; }

  bool chance() { return rng_.uniform() >= opt_.stall; }

  void eval_low() {
    top_->clk_i = 0;
    top_->eval();
  }
  void tick() {
    top_->clk_i = 0;
    top_->eval();
    dump();
    if (dump_in_) record_inputs();
    ctx_->timeInc(1);
    top_->clk_i = 1;
    top_->eval();
    dump();
    ctx_->timeInc(1);
    ++cycle_;
  }
  // One line per cycle: the inputs as sampled by the coming rising edge.
  void record_inputs() {
    std::ostream& o = *dump_in_;
    o << kld_tb::hex(top_->rst_ni) << ' ' << kld_tb::hex(top_->reg_valid_i) << ' ' << kld_tb::hex(top_->reg_write_i) << ' '
      << kld_tb::hex(top_->reg_addr_i) << ' ' << kld_tb::hex(top_->reg_wdata_i) << ' ' << kld_tb::hex(top_->a_valid_i)
      << ' ' << kld_tb::hex(top_->a_token_i) << ' ' << kld_tb::hex(top_->a_group_i) << ' ' << kld_tb::hex(top_->a_data_i)
      << ' ' << kld_tb::hex(top_->b_valid_i) << ' ' << kld_tb::hex(top_->b_row_i) << ' ' << kld_tb::hex(top_->b_mtile_i)
      << ' ' << kld_tb::hex(top_->b_data_i) << ' ' << kld_tb::hex(top_->out_ready_i);
#if !KLD_TB_PLAIN
    o << ' ' << kld_tb::hex(top_->dec_ready_i);
#endif
    o << '\n';
  }
  void dump() {
#if VM_TRACE_FST
    if (fst_ && cycle_ >= opt_.trace_from && cycle_ < opt_.trace_to) fst_->dump(ctx_->time());
#endif
  }

  void idle_inputs() {
    top_->reg_valid_i = 0;
    top_->reg_write_i = 0;
    top_->a_valid_i = 0;
    top_->b_valid_i = 0;
    top_->out_ready_i = 0;
    set_dec_ready(false);
  }
  // Words of this output beat that exist (bit j: token out_token_o + j); the plain top sends one.
  uint32_t out_lanes() const {
#if !KLD_TB_PLAIN
    return static_cast<uint32_t>(top_->out_lanes_o);
#else
    return 1u;
#endif
  }
  void set_dec_ready(bool ready) {
    dec_ready_ = ready;
#if !KLD_TB_PLAIN
    top_->dec_ready_i = ready;
#endif
  }

  void reset() {
    idle_inputs();
    top_->rst_ni = 0;
    tick();
    tick();
    top_->rst_ni = 1;
    tick();
  }

  void write_reg(uint32_t addr, uint32_t data) {
    top_->reg_valid_i = 1;
    top_->reg_write_i = 1;
    top_->reg_addr_i = addr;
    top_->reg_wdata_i = data;
    tick();
    top_->reg_valid_i = 0;
    top_->reg_write_i = 0;
  }
  uint32_t read_reg(uint32_t addr) {
    top_->reg_valid_i = 1;
    top_->reg_write_i = 0;
    top_->reg_addr_i = addr;
    eval_low();
    const uint32_t d = top_->reg_rdata_o;
    top_->reg_valid_i = 0;
    return d;
  }
  uint64_t read_reg64(uint32_t lo) { return read_reg(lo) | (uint64_t{read_reg(lo + 1)} << 32); }
  Counters read_counters() {
    return {read_reg64(kld::CYCLES_LO), read_reg64(kld::BUSY_LO), read_reg64(kld::STALL_LO),
            read_reg64(kld::MACS_ISSUED_LO), read_reg64(kld::MACS_SKIPPED_LO)};
  }

  // Read-back of the register map (kld_regs.hpp, kFields) right after reset: every word reads
  // its RW fields' reset values and its constants; all RW bits written 1 read back as 1 where
  // this top implements the field (0 elsewhere: ignored), then written 0 read 0. Counters and
  // status read 0 after reset. START is never written. Returns the words checked.
  int64_t check_registers(std::vector<std::string>& errors) {
    struct Word {
      uint32_t writable = 0, kept = 0, reset = 0, constant = 0;
    };
    std::map<uint32_t, Word> words;
    for (const kld::Field& f : kld::kFields)
      for (uint32_t g = 0; g < f.count; ++g) {
        Word& w = words[f.addr + g];
        const uint32_t mask = (f.width >= 32 ? ~0u : (1u << f.width) - 1u) << f.lsb;
        const bool here = !kPlainTop || f.plain;
        if (f.access == 'w') {
          w.writable |= mask;
          if (here) {
            w.kept |= mask;
            w.reset |= static_cast<uint32_t>(f.reset << f.lsb) & mask;
          }
        }
        if (f.constant && here) w.constant |= static_cast<uint32_t>(f.reset << f.lsb) & mask;
      }
    auto expect = [&](uint32_t addr, uint32_t want, const char* when) {
      const uint32_t got = read_reg(addr);
      if (got != want && errors.size() < 20)
        errors.push_back("register " + std::to_string(addr) + " " + when + ": expected " + std::to_string(want) +
                         ", read " + std::to_string(got));
    };
    for (const auto& [addr, w] : words) expect(addr, w.reset | w.constant, "after reset");
    for (const auto& [addr, w] : words) {
      if (!w.writable) continue;
      write_reg(addr, w.writable);
      expect(addr, w.kept | w.constant, "written with ones");
      write_reg(addr, 0);
      expect(addr, w.constant, "written with zeros");
    }
    return static_cast<int64_t>(words.size());
  }

  // START with the values the registers hold must be refused (STATUS.ERROR, no run). Returns false
  // and says why otherwise; a refused START leaves the top idle.
  bool start_refused(const std::string& what, std::vector<std::string>& errors, uint32_t ctrl_bits = 0) {
    write_reg(kld::CTRL, 1u << kld::CTRL_START_LSB | ctrl_bits);
    const bool error = (read_reg(kld::STATUS) & (1u << kld::STATUS_ERROR_LSB)) != 0;
    const bool busy = top_->busy_o != 0;
    if (!error || busy)
      errors.push_back("START with " + what + ": STATUS.ERROR " + std::to_string(error) + ", busy " +
                       std::to_string(busy) + " (expected a refusal)");
    if (busy) throw kaleido::Error("a START that should have been refused started a run (" + what + ")");
    return error && !busy;
  }

  // The START checks (kld_top): after reset (zero dimensions) and with each out-of-range value
  // written in the cycle just before START, the run is refused; each good value is written back
  // just before the next START, so the last one is the real run's (which must start). Returns the
  // checks made.
  int check_start_refusals(std::vector<std::string>& errors, bool after_reset) {
#if !KLD_TB_PLAIN
    // CTRL.KEEP with nothing to keep: no detecting run since reset (nor before the first run).
    start_refused(after_reset ? "KEEP after reset" : "KEEP before any detection", errors, 1u << kld::CTRL_KEEP_LSB);
#endif
    if (after_reset) {
      start_refused("the reset values", errors);
      return 2;
    }
    const auto& c = v_->config;
    const uint32_t pol = read_reg(kld::POLICY);
    struct Bad {
      uint32_t addr, bad, good;
      const char* what;
    };
    const std::vector<Bad> cases = {
        {kld::DIM_T, 0, static_cast<uint32_t>(c.grid.t), "DIM_T = 0"},
        {kld::DIM_W, kld::kMAX_W + 1, static_cast<uint32_t>(c.grid.w), "DIM_W = MAX_W + 1"},
        {kld::DIM_K, kld::kMAX_K + 1, static_cast<uint32_t>(c.channels), "DIM_K = MAX_K + 1"},
        {kld::DIM_M, kld::kMAX_M + 1, static_cast<uint32_t>(c.out_cols), "DIM_M = MAX_M + 1"},
        {kld::TILE_W, static_cast<uint32_t>(c.grid.w) + 1, static_cast<uint32_t>(c.tile_w), "TILE_W > DIM_W"},
        {kld::WIN, kld::kWIN_CAP + 1, static_cast<uint32_t>(v_->window_depth), "WIN = WIN_CAP + 1"},
        {kld::POLICY, 3u << kld::POLICY_POLICY_LSB, pol, "POLICY = 3 (no such policy)"},
        {kld::POLICY, 0, pol, "the fixed policy with no axes"},
    };
    std::vector<Bad> all = cases;
    if (kld::kGROUP_W > 1)
      all.push_back({kld::DIM_K, static_cast<uint32_t>(c.channels) + 1, static_cast<uint32_t>(c.channels),
                     "DIM_K not a multiple of GROUP_W"});
    for (const Bad& b : all) {
      write_reg(b.addr, b.bad);
      start_refused(b.what, errors);
      write_reg(b.addr, b.good);
    }
    return static_cast<int>(all.size()) + 1;
  }

  void program() {
    const auto& c = v_->config;
    write_reg(kld::DIM_T, static_cast<uint32_t>(c.grid.t));
    write_reg(kld::DIM_H, static_cast<uint32_t>(c.grid.h));
    write_reg(kld::DIM_W, static_cast<uint32_t>(c.grid.w));
    write_reg(kld::DIM_K, static_cast<uint32_t>(c.channels));
    write_reg(kld::DIM_M, static_cast<uint32_t>(c.out_cols));
    write_reg(kld::TILE_H, static_cast<uint32_t>(c.tile_h));
    write_reg(kld::TILE_W, static_cast<uint32_t>(c.tile_w));
    write_reg(kld::WIN, static_cast<uint32_t>(v_->window_depth));
    uint32_t pol = static_cast<uint32_t>(c.policy) << kld::POLICY_POLICY_LSB;
    pol |= static_cast<uint32_t>(c.fixed_axes.size()) << kld::POLICY_NAXES_LSB;
    const uint32_t axis_lsb[3] = {kld::POLICY_AXIS0_LSB, kld::POLICY_AXIS1_LSB, kld::POLICY_AXIS2_LSB};
    for (size_t k = 0; k < c.fixed_axes.size(); ++k) pol |= static_cast<uint32_t>(c.fixed_axes[k]) << axis_lsb[k];
    write_reg(kld::POLICY, pol);
    for (int g = 0; g < c.groups(); ++g) {
      write_reg(kld::TAU + static_cast<uint32_t>(g), c.tau_of(g));
      const uint32_t cfg = (c.group_enabled(g) ? 1u : 0u) << kld::GROUP_CFG_ENABLE_LSB |
                           static_cast<uint32_t>(c.rope_mask(g)) << kld::GROUP_CFG_ROPE_LSB;
      write_reg(kld::GROUP_CFG + static_cast<uint32_t>(g), cfg);
    }
  }

  // Loads A (token, group) words and B (row, m-tile) words with random gaps; `b` alone for a
  // further B tile (writing A would make the kept decisions stale).
  void load() { load(&v_->a, v_->b); }
  void load(const kaleido::IntMatrix* a, const kaleido::IntMatrix& b) {
    const auto& c = v_->config;
    const int G = c.groups();
    const int MT = (c.out_cols + static_cast<int>(kld::kCOLS) - 1) / static_cast<int>(kld::kCOLS);
    std::vector<std::pair<int, int>> a_words, b_words;
    for (int64_t i = 0; a && i < c.grid.tokens(); ++i)
      for (int g = 0; g < G; ++g) a_words.emplace_back(static_cast<int>(i), g);
    for (int k = 0; k < c.channels; ++k)
      for (int mt = 0; mt < MT; ++mt) b_words.emplace_back(k, mt);
    size_t ai = 0, bi = 0;
    uint64_t guard = 0;
    while (ai < a_words.size() || bi < b_words.size()) {
      const bool a_valid = ai < a_words.size() && chance();
      const bool b_valid = bi < b_words.size() && chance();
      top_->a_valid_i = a_valid;
      top_->b_valid_i = b_valid;
      if (a_valid) {
        const auto [tok, g] = a_words[ai];
        top_->a_token_i = static_cast<uint32_t>(tok);
        top_->a_group_i = static_cast<uint32_t>(g);
        for (int j = 0; j < static_cast<int>(kld::kGROUP_W); ++j)
          set_bits(top_->a_data_i, j * static_cast<int>(kld::kDATA_W), static_cast<int>(kld::kDATA_W),
                   static_cast<uint64_t>(a->at(tok, g * c.group_w + j)));
      }
      if (b_valid) {
        const auto [k, mt] = b_words[bi];
        top_->b_row_i = static_cast<uint32_t>(k);
        top_->b_mtile_i = static_cast<uint32_t>(mt);
        for (int col = 0; col < static_cast<int>(kld::kCOLS); ++col) {
          const int m = mt * static_cast<int>(kld::kCOLS) + col;
          const int32_t w = m < c.out_cols ? b.at(k, m) : 0;
          set_bits(top_->b_data_i, col * static_cast<int>(kld::kDATA_W), static_cast<int>(kld::kDATA_W),
                   static_cast<uint64_t>(w));
        }
      }
      eval_low();
      const bool a_fire = a_valid && top_->a_ready_o;
      const bool b_fire = b_valid && top_->b_ready_o;
      tick();
      ai += a_fire;
      bi += b_fire;
      if (++guard > 100 * (a_words.size() + b_words.size() + 100)) throw kaleido::Error("load never completed: a_ready_o/b_ready_o stuck low");
    }
    top_->a_valid_i = 0;
    top_->b_valid_i = 0;
  }

  struct DecisionSeen {
    bool reuse;
    int axis;
    int64_t root;
  };

  // Runs one GEMM; returns false if the cycle limit hit. With `reset`, asserts
  // reset once the run is reset->requested_at cycles old and returns.
  bool run(bool dense, ResetReport* reset = nullptr, bool keep = false) {
    outputs_.clear();
    decisions_.clear();
    out_words_ = dec_words_ = dec_protocol_errors_ = 0;
    stalls_ = kaleido::hw::StreamStalls{};
    run_start_ = cycle_;
    uint32_t ctrl = 1u << kld::CTRL_START_LSB | 1u << kld::CTRL_TRACE_LSB;
    if (dense) ctrl |= 1u << kld::CTRL_DENSE_LSB;
#if !KLD_TB_PLAIN
    if (keep) ctrl |= 1u << kld::CTRL_KEEP_LSB;
#else
    if (keep) throw kaleido::Error("kld_plain_top has no CTRL.KEEP");
#endif
    write_reg(kld::CTRL, ctrl);
    if (read_reg(kld::STATUS) & (1u << kld::STATUS_ERROR_LSB))
      throw kaleido::Error("the hardware refused START (STATUS.ERROR): a runtime value is out of range");
    const uint64_t start = cycle_;
    while (!top_->done_o) {
      if (cycle_ - start > opt_.max_cycles) return false;
      if (reset && static_cast<int64_t>(cycle_ - start) >= reset->requested_at) {
        reset->happened = true;
        reset->run_cycles = cycle_ - start;
        reset->before = read_counters();
        idle_inputs();
        top_->rst_ni = 0;
        tick();
        top_->rst_ni = 1;
        tick();
        reset->after = read_counters();
        return true;
      }
      // The trace has ready latency 1: a decision may transfer in this cycle only if the edge
      // before sampled dec_ready_i high.
      const bool dec_may_transfer = dec_ready_;
      if (!dec_may_transfer) stalls_.trace_not_ready_cycles.push_back(static_cast<int64_t>(cycle_ - start));
      top_->out_ready_i = chance();
      set_dec_ready(chance());
      eval_low();
      // Back-pressure applied, by stream (the schedule is moved by it).
      if (top_->out_valid_o && !top_->out_ready_i) stalls_.out_cycles.push_back(static_cast<int64_t>(cycle_ - start));
      if (top_->out_valid_o && top_->out_ready_i) {
        const int mt = static_cast<int>(top_->out_mtile_o);
        const int64_t tok = static_cast<int64_t>(top_->out_token_o);
        const int cols = static_cast<int>(kld::kCOLS), aw = static_cast<int>(kld::kACC_W);
        const uint32_t lanes = out_lanes();
        for (int j = 0; j < kGatherW; ++j) {
          if (!((lanes >> j) & 1u)) continue;  // past the last token
          for (int col = 0; col < cols; ++col)
            outputs_[{tok + j, mt * cols + col}] =
                kld_tb::sign_extend(get_bits(top_->out_data_o, (j * cols + col) * aw, aw), aw);
          ++out_words_;
        }
      }
      watch_trace(dec_may_transfer);
      tick();
    }
    top_->out_ready_i = 0;
    set_dec_ready(false);
    run_end_ = cycle_;
    if (reset) reset->run_cycles = cycle_ - start;
    return true;
  }
  // The decision stream of kld_top this cycle (after eval_low): every word it presents transfers
  // (ready latency 1), and may be presented only when `may_transfer`. The plain top has no trace.
  void watch_trace(bool may_transfer) {
#if !KLD_TB_PLAIN
    const int G = v_->config.groups();
    const int lanes = static_cast<int>(kld::kLANES);
    const int lane_bits = 4 + static_cast<int>(kld::kTOKEN_W);
    if (!top_->dec_valid_o) return;
    if (!may_transfer) ++dec_protocol_errors_;
    const int round = static_cast<int>(top_->dec_round_o);
    const int64_t tok = static_cast<int64_t>(top_->dec_token_o);
    for (int l = 0; l < lanes; ++l) {
      const uint64_t f = get_bits(top_->dec_data_o, l * lane_bits, lane_bits);
      if (!((f >> 3) & 1u)) continue;  // lane has no group this round
      const int g = round * lanes + l;
      if (g >= G) continue;
      decisions_[{tok, g}] = DecisionSeen{((f >> 2) & 1u) != 0, static_cast<int>(f & 3u), static_cast<int64_t>(f >> 4)};
    }
    ++dec_words_;
#else
    (void)may_transfer;
#endif
  }
  uint64_t run_start() const { return run_start_; }
  uint64_t run_end() const { return run_end_; }

  uint64_t cycle() const { return cycle_; }
  const std::map<std::pair<int64_t, int>, int64_t>& outputs() const { return outputs_; }
  const std::map<std::pair<int64_t, int>, DecisionSeen>& decisions() const { return decisions_; }
  uint64_t out_words() const { return out_words_; }
  const kaleido::hw::StreamStalls& stalls() const { return stalls_; }
  uint64_t dec_words() const { return dec_words_; }
  // Decision words presented in a cycle after dec_ready_i was low (a ready-latency-1 violation).
  uint64_t dec_protocol_errors() const { return dec_protocol_errors_; }

 private:
  const Options& opt_;
  const GoldenVectors* v_;  // the workload program() and load() write
  kaleido::Rng rng_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<TopModel> top_;
  std::unique_ptr<std::ofstream> dump_in_;
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> fst_;
#endif
  uint64_t cycle_ = 0, run_start_ = 0, run_end_ = 0;
  std::map<std::pair<int64_t, int>, int64_t> outputs_;
  std::map<std::pair<int64_t, int>, DecisionSeen> decisions_;
  uint64_t out_words_ = 0, dec_words_ = 0, dec_protocol_errors_ = 0;
  bool dec_ready_ = false;  // dec_ready_i as driven now (sampled by the next edge)
  kaleido::hw::StreamStalls stalls_;
};

kaleido::hw::HwConfig hw_from_header() {
  kaleido::hw::HwConfig h;
  for (const kld::Parameter& p : kld::kParameters) {
    const auto& fields = kaleido::hw::hw_fields();
    const auto f = std::find_if(fields.begin(), fields.end(), [&](const auto& x) { return p.name == std::string(x.param); });
    if (f == fields.end()) throw kaleido::Error(std::string("kld_regs.hpp names an unknown parameter ") + p.name);
    f->set(h, static_cast<int64_t>(p.value));
  }
  return h;
}

// The host's check (hw/schedule.hpp) against the parameters this testbench was built with.
void check_fits(const GoldenVectors& v) {
  try {
    kaleido::hw::check_workload_fits(hw_from_header(), v.config);
  } catch (const kaleido::Error& e) {
    throw kaleido::Error(std::string("vectors do not fit this hardware: ") + e.what());
  }
}

struct RunReport {
  bool dense = false;
  bool keep = false;  // CTRL.KEEP: the decisions of the previous reuse run, a further B tile
  kaleido::ReuseConfig config;  // the run's workload
  bool done = false;
  std::vector<std::string> errors;
  int64_t compared_outputs = 0, compared_decisions = 0;
  uint64_t cycles = 0, busy = 0, stall = 0, issued = 0, skipped = 0;
  uint64_t stall_out = 0, stall_trace = 0, wait_gather = 0, loadw = 0, starved = 0;  // counters by cause
  int64_t schedule = 0, schedule_free = 0;  // with the back-pressure applied, and free-running
  uint64_t start_cycle = 0, end_cycle = 0;  // testbench cycles of the START write and of done
  uint64_t checked_cycle = 0;  // ... once the run's counters were read back (before anything else)
  nlohmann::json to_json() const {
    return {{"mode", keep ? "keep" : dense ? "dense" : "reuse"},       {"bit_exact", done && errors.empty() && compared_outputs > 0},
            {"compared_outputs", compared_outputs},    {"compared_decisions", compared_decisions},
            {"cycles", cycles},                        {"busy_cycles", busy},
            {"stall_cycles", stall},                   {"schedule_cycles", schedule},
            {"schedule_cycles_free_running", schedule_free},
            {"stalls", {{"output", stall_out}, {"trace", stall_trace}, {"bank_conflict", wait_gather},
                        {"weight_load", loadw}, {"detector_starved", starved}}},
            {"macs_issued", issued},                   {"macs_skipped", skipped},
            {"start_cycle", start_cycle},             {"end_cycle", end_cycle},
            {"checked_cycle", checked_cycle},
            {"errors", errors}};
  }
};

// The documented schedule of one run, moved by the back-pressure `st`.
kaleido::hw::ScheduleCycles schedule_of(const GoldenVectors& v, bool dense, const kaleido::hw::StreamStalls& st,
                                        bool keep = false) {
  const auto hw = hw_from_header();
  if (dense) return kaleido::hw::dense_cycles(hw, v.config, st);
  return keep ? kaleido::hw::keep_cycles(hw, v.config, v.decisions, st)
              : kaleido::hw::reuse_cycles(hw, v.config, v.decisions, st);
}

// One START..done run in `dense` or reuse mode, compared with the golden model.
// With `keep` (reuse mode), `v` holds a further B tile: the run uses the lists and root tables
// of the last detection, traces no decision and counts none (MACS_SKIPPED and REUSED read 0).
RunReport run_and_compare(Harness& h, const Options& opt, const GoldenVectors& v, bool dense, bool keep = false) {
  const auto& c = v.config;
  const int G = c.groups();
  const int64_t N = c.grid.tokens();
  RunReport rep;
  rep.dense = dense;
  rep.keep = keep;
  rep.config = v.config;
  // Expected values: reuse mode from the golden vectors; dense mode is A . B.
  kaleido::WideMatrix expect_out = dense ? kaleido::gemm_wrap(v.a, v.b, c.acc_w) : v.out;
  if (opt.corrupt_expected) expect_out.data[expect_out.data.size() / 2] ^= 1;
  const int64_t expect_issued = dense ? N * c.channels * c.out_cols : v.counters.macs_issued;
  const int64_t expect_skipped = dense || keep ? 0 : v.counters.macs_skipped;
  auto schedule = [&](const kaleido::hw::StreamStalls& st) { return schedule_of(v, dense, st, keep); };
  if (!kPlainTop) rep.schedule_free = schedule({}).total;  // the documented schedule is kld_top's
  auto mismatch = [&](const std::string& what) {
    if (rep.errors.size() < 20) rep.errors.push_back(what);
  };
  rep.done = h.run(dense, nullptr, keep);
  rep.start_cycle = h.run_start();
  rep.end_cycle = h.run_end();
  if (!rep.done) {
    mismatch("no done after " + std::to_string(opt.max_cycles) + " cycles (limit)");
    return rep;
  }
  const Counters counters = h.read_counters();
  rep.cycles = counters.cycles;
  rep.busy = counters.busy;
  rep.stall = counters.stall;
  rep.issued = counters.issued;
  rep.skipped = counters.skipped;
  rep.stall_out = h.read_reg(kld::STALL_OUT);
  rep.stall_trace = h.read_reg(kld::STALL_TRACE);
  rep.wait_gather = h.read_reg(kld::WAIT_GATHER);
  rep.loadw = h.read_reg(kld::LOADW_CYCLES);
  rep.starved = h.read_reg(kld::STARVED);

  // Decisions with reference (through the axis) and root.
  if (h.dec_protocol_errors() != 0)
    mismatch(std::to_string(h.dec_protocol_errors()) +
             " decision words presented in a cycle after dec_ready_i was low (ready latency 1)");
  if (keep && h.dec_words() != 0)
    mismatch("a KEEP run traced " + std::to_string(h.dec_words()) + " decision words (no detection expected)");
  if (!dense && !keep) {
    const kaleido::ScanOrder scan(c.grid, c.tile_h, c.tile_w);
    for (int64_t i = 0; i < N; ++i)
      for (int g = 0; g < G; ++g) {
        const kaleido::PairDecision& e = v.decisions[static_cast<size_t>(i * G + g)];
        auto it = h.decisions().find({i, g});
        if (it == h.decisions().end()) {
          mismatch("decision token " + std::to_string(i) + " group " + std::to_string(g) + ": never traced");
          continue;
        }
        ++rep.compared_decisions;
        const auto& s = it->second;
        const bool e_reuse = e.kind == kaleido::PairKind::Reuse;
        const int64_t got_ref = s.reuse ? scan.reference(static_cast<int32_t>(i), static_cast<kaleido::Axis>(s.axis)) : -1;
        if (s.reuse != e_reuse || (e_reuse && (s.axis != static_cast<int>(e.axis) || got_ref != e.ref)) ||
            s.root != e.root)
          mismatch("decision token " + std::to_string(i) + " group " + std::to_string(g) + ": expected " +
                   (e_reuse ? "REUSE axis " + std::to_string(static_cast<int>(e.axis)) + " ref " + std::to_string(e.ref)
                            : std::string("COMPUTE")) +
                   " root " + std::to_string(e.root) + ", got " +
                   (s.reuse ? "REUSE axis " + std::to_string(s.axis) + " ref " + std::to_string(got_ref)
                            : std::string("COMPUTE")) +
                   " root " + std::to_string(s.root));
      }
  }
  // Outputs: every element of N x M, in token, column order.
  for (int64_t i = 0; i < N; ++i)
    for (int m = 0; m < c.out_cols; ++m) {
      auto it = h.outputs().find({i, m});
      if (it == h.outputs().end()) {
        mismatch("output token " + std::to_string(i) + " column " + std::to_string(m) + ": never produced");
        continue;
      }
      ++rep.compared_outputs;
      if (it->second != expect_out.at(i, m))
        mismatch("output token " + std::to_string(i) + " column " + std::to_string(m) + ": expected " +
                 std::to_string(expect_out.at(i, m)) + ", got " + std::to_string(it->second));
    }
  const int MT = (c.out_cols + static_cast<int>(kld::kCOLS) - 1) / static_cast<int>(kld::kCOLS);
  if (h.out_words() != static_cast<uint64_t>(N * MT))
    mismatch("output words: expected " + std::to_string(N * MT) + ", got " + std::to_string(h.out_words()));
  // The START write's clock edge sets BUSY; CYCLES counts the edges that find BUSY set, the
  // last of which clears it and raises done_o.
  const uint64_t seen = h.run_end() - h.run_start() - 1;
  if (rep.cycles != seen)
    mismatch("CYCLES: the testbench saw " + std::to_string(seen) + " busy cycles, hardware counted " +
             std::to_string(rep.cycles));
  rep.checked_cycle = h.cycle();
  if (kPlainTop) return rep;  // no other counters; no documented schedule of the plain top
  const kaleido::hw::ScheduleCycles sched = schedule(h.stalls());
  rep.schedule = sched.total;
  // Work counters against the golden model.
  if (rep.issued != static_cast<uint64_t>(expect_issued))
    mismatch("MACS_ISSUED: expected " + std::to_string(expect_issued) + ", got " + std::to_string(rep.issued));
  if (rep.skipped != static_cast<uint64_t>(expect_skipped))
    mismatch("MACS_SKIPPED: expected " + std::to_string(expect_skipped) + ", got " + std::to_string(rep.skipped));
  for (int g = 0; g < G; ++g) {
    const uint64_t got = h.read_reg(kld::REUSED + static_cast<uint32_t>(g));
    const uint64_t want =
        dense || keep ? 0 : static_cast<uint64_t>(v.counters.reused_per_group[static_cast<size_t>(g)]);
    if (got != want)
      mismatch("REUSED[" + std::to_string(g) + "]: expected " + std::to_string(want) + ", got " + std::to_string(got));
  }
  // Cycle counters against the documented schedule, moved by the back-pressure this run applied.
  const auto out_stalls = static_cast<int64_t>(h.stalls().out_cycles.size());
  auto expect_counter = [&](const char* name, uint64_t got, int64_t want) {
    if (got != static_cast<uint64_t>(want))
      mismatch(std::string(name) + ": schedule gives " + std::to_string(want) + ", hardware counted " +
               std::to_string(got));
  };
  expect_counter("CYCLES", rep.cycles, sched.total);
  expect_counter("STALL_OUT", rep.stall_out, out_stalls);
  expect_counter("STALL_TRACE", rep.stall_trace, sched.trace_stalls);
  expect_counter("STALL", rep.stall, out_stalls + sched.trace_stalls);
  expect_counter("STARVED", rep.starved, sched.starved);
  expect_counter("WAIT_GATHER", rep.wait_gather, sched.wait_gather);
  expect_counter("LOADW_CYCLES", rep.loadw, sched.loadw);
  if (rep.busy != static_cast<uint64_t>(sched.busy))
    mismatch("BUSY: schedule gives " + std::to_string(sched.busy) + ", hardware counted " + std::to_string(rep.busy));
  rep.checked_cycle = h.cycle();  // REUSED[g] and the cause counters were read above
  return rep;
}

int run_main(const Options& opt) {
  GoldenVectors v = kaleido::read_vectors(opt.vectors);
  check_fits(v);
  const auto& c = v.config;
  // Runs back to back on the same loaded scratchpads: --mode reuse|dense|both, --runs times.
  std::vector<bool> modes;
  for (int k = 0; k < opt.runs; ++k) {
    if (kPlainTop) {
      modes.push_back(true);  // the plain top computes dense only
      continue;
    }
    if (opt.mode != "dense") modes.push_back(v.config.mode == kaleido::Mode::Dense);
    if (opt.mode == "dense" || opt.mode == "both") modes.push_back(true);
  }
  Harness h(opt, v);
  h.reset();
  std::vector<std::string> register_errors;
  int64_t register_words = 0;
  if (opt.check_registers) register_words = h.check_registers(register_errors);
  std::vector<std::string> start_errors;
  int start_checks = 0;
  if (opt.check_start && kPlainTop) throw kaleido::Error("--check-start: kld_plain_top has no START checks");
  if (opt.check_start) start_checks += h.check_start_refusals(start_errors, true);
  h.program();
  h.load();
  if (opt.check_start) start_checks += h.check_start_refusals(start_errors, false);
  std::optional<ResetReport> reset;
  std::vector<std::string> reset_errors;
  if (opt.reset_at >= 0 || opt.reset_fraction >= 0) {
    reset.emplace();
    const auto free_running = static_cast<double>(schedule_of(v, modes.front(), {}).total);
    reset->requested_at =
        opt.reset_at >= 0 ? opt.reset_at : static_cast<int64_t>(opt.reset_fraction * free_running);
    h.run(modes.front(), &*reset);  // the interrupted run; everything after it must be as if it never was
    if (!reset->happened)
      reset_errors.push_back("reset not applied: the run was done after " + std::to_string(reset->run_cycles) +
                             " cycles, before cycle " + std::to_string(reset->requested_at));
    else if (!reset->after.all_zero())
      reset_errors.push_back("counters not cleared by the reset: " + reset->after.to_json().dump());
    h.program();
    h.load();
  }
  // Further B tiles of the same A and configuration, run with CTRL.KEEP after the first reuse run.
  std::vector<GoldenVectors> kept;
  for (const std::string& f : opt.keep) {
    kept.push_back(kaleido::read_vectors(f));
    const GoldenVectors& k = kept.back();
    if (nlohmann::json(k.config) != nlohmann::json(v.config) || k.a.data != v.a.data)
      throw kaleido::Error(f + ": --keep vectors must have the A and the configuration of --vectors");
  }
  if (!kept.empty() && (kPlainTop || std::find(modes.begin(), modes.end(), false) == modes.end()))
    throw kaleido::Error("--keep needs a reuse-mode run of kld_top before it");
  std::vector<RunReport> reports;
  bool ok = true;
  bool kept_done = kept.empty();
  for (bool dense : modes) {
    reports.push_back(run_and_compare(h, opt, v, dense));
    if (dense || kept_done) continue;
    for (const GoldenVectors& k : kept) {
      h.load(nullptr, k.b);  // B alone: writing A would make the decisions stale
      reports.push_back(run_and_compare(h, opt, k, false, true));
    }
    h.load(nullptr, v.b);
    kept_done = true;
#if !KLD_TB_PLAIN
    if (opt.check_start) {  // a write to a register detection reads leaves the decisions stale
      h.write_reg(kld::TAU, v.config.tau_of(0));
      start_checks += h.start_refused("KEEP after a TAU write", start_errors, 1u << kld::CTRL_KEEP_LSB);
    }
#endif
  }
  // Whatever the earlier runs left in the memories (partials, lists and root tables of more groups
  // or tokens, B of more columns) must not reach the outputs of a smaller workload run next.
  std::vector<GoldenVectors> then;
  for (const std::string& f : opt.then) then.push_back(kaleido::read_vectors(f));
  for (const GoldenVectors& t : then) {
    h.use(t);
    h.program();
    h.load();
    for (bool dense : modes) reports.push_back(run_and_compare(h, opt, t, dense));
  }
  for (const RunReport& r : reports) ok = ok && r.done && r.errors.empty() && r.compared_outputs > 0;
  ok = ok && reset_errors.empty() && register_errors.empty() && start_errors.empty();
  const RunReport& first = reports.front();
  nlohmann::json j = first.to_json();
  j["vectors"] = opt.vectors;
  j["then"] = opt.then;
  j["seed"] = opt.seed;
  j["stall_probability"] = opt.stall;
  j["bit_exact"] = ok;
  j["sim_cycles_total"] = h.cycle();
  j["top"] = kTopName;
  j["reset"] = reset ? reset->to_json() : nlohmann::json();
  if (opt.check_registers) j["register_check"] = {{"words", register_words}, {"errors", register_errors}};
  if (opt.check_start) j["start_check"] = {{"refusals", start_checks}, {"errors", start_errors}};
  if (reset) j["reset"]["errors"] = reset_errors;
  j["runs"] = nlohmann::json::array();
  for (const RunReport& r : reports) j["runs"].push_back(r.to_json());
  if (!opt.json_out.empty()) kaleido::write_file_atomic(opt.json_out, j.dump(2) + "\n");
  if (reset && reset->happened)
    std::printf("RESET after %llu cycles of the first run (CYCLES read %llu, MACS_ISSUED %llu; after the reset: %s)\n",
                static_cast<unsigned long long>(reset->run_cycles),
                static_cast<unsigned long long>(reset->before.cycles),
                static_cast<unsigned long long>(reset->before.issued),
                reset->after.all_zero() ? "all counters 0" : reset->after.to_json().dump().c_str());
  if (opt.check_registers && register_errors.empty())
    std::printf("PASS registers: %lld words of the register map read back as mapped (%s)\n",
                static_cast<long long>(register_words), kTopName);
  for (const std::string& e : register_errors)
    std::printf("FAIL registers (%s): %s\n  reproduce: %s\n", kTopName, e.c_str(), opt.repro.c_str());
  if (opt.check_start && start_errors.empty())
    std::printf("PASS START checks: %d out-of-range configurations refused, the next good one started\n",
                start_checks);
  for (const std::string& e : start_errors)
    std::printf("FAIL START checks: %s\n  reproduce: %s\n", e.c_str(), opt.repro.c_str());
  for (const std::string& e : reset_errors)
    std::printf("FAIL reset: %s\n  reproduce: %s\n", e.c_str(), opt.repro.c_str());
  for (size_t k = 0; k < reports.size(); ++k) {
    const RunReport& r = reports[k];
    const bool run_ok = r.done && r.errors.empty() && r.compared_outputs > 0;
    if (run_ok) {
      std::printf("PASS run %zu: %lld outputs, %lld decisions, counters and cycles equal (%s mode, %llu cycles, %llu stall)\n",
                  k, static_cast<long long>(r.compared_outputs), static_cast<long long>(r.compared_decisions),
                  r.keep ? "keep" : r.dense ? "dense" : "reuse", static_cast<unsigned long long>(r.cycles),
                  static_cast<unsigned long long>(r.stall));
      continue;
    }
    const kaleido::ReuseConfig& w = r.config;
    std::printf("FAIL run %zu (%s mode, seed %llu, %dx%dx%d K=%d M=%d Gw=%d DATA_W=%d ACC_W=%d, %s policy, tile %dx%d):\n", k,
                r.keep ? "keep" : r.dense ? "dense" : "reuse", static_cast<unsigned long long>(opt.seed), w.grid.t, w.grid.h, w.grid.w,
                w.channels, w.out_cols, w.group_w, w.data_w, w.acc_w, kaleido::policy_name(w.policy), w.tile_h, w.tile_w);
    if (r.compared_outputs == 0) std::printf("  nothing was compared\n");
    for (const auto& e : r.errors) std::printf("  %s\n", e.c_str());
    std::printf("  reproduce: %s\n", opt.repro.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string cmdline;
  for (int k = 0; k < argc; ++k) cmdline += std::string(k ? " " : "") + argv[k];
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "kld_tb: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--vectors") o.vectors = next();
    else if (a == "--mode") o.mode = next();
    else if (a == "--seed") o.seed = std::stoull(next());
    else if (a == "--stall") o.stall = std::stod(next());
    else if (a == "--max-cycles") o.max_cycles = std::stoull(next());
    else if (a == "--json") o.json_out = next();
    else if (a == "--trace") o.trace_file = next();
    else if (a == "--trace-window") {
      const std::string w = next();
      const auto colon = w.find(':');
      o.trace_from = std::stoull(w.substr(0, colon));
      o.trace_to = colon == std::string::npos ? o.trace_from + 1000 : std::stoull(w.substr(colon + 1));
    } else if (a == "--reset-at") o.reset_at = std::stoll(next());
    else if (a == "--reset-at-fraction") o.reset_fraction = std::stod(next());
    else if (a == "--corrupt-expected") o.corrupt_expected = true;
    else if (a == "--runs") o.runs = std::stoi(next());
    else if (a == "--dump-inputs") o.dump_inputs = next();
    else if (a == "--check-registers") o.check_registers = true;
    else if (a == "--check-start") o.check_start = true;
    else if (a == "--keep") o.keep.push_back(next());
    else if (a == "--then") o.then.push_back(next());
    else if (a == "--repro") o.repro = next();
    else {
      std::fprintf(stderr, "kld_tb: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.vectors.empty()) {
    std::fprintf(stderr, "usage: kld_tb --vectors FILE [--mode reuse|dense|both] [--runs N] [--seed S] [--stall P] [--json OUT]\n"
                         "              [--trace FILE.fst --trace-window FROM:TO]"
                         " [--reset-at CYCLE | --reset-at-fraction F]\n"
                         "              [--check-registers] [--check-start] [--keep FILE]... [--then FILE]...\n");
    return 2;
  }
  if (o.reset_fraction >= 1) {
    std::fprintf(stderr, "kld_tb: --reset-at-fraction must be below 1 (a reset inside the run)\n");
    return 2;
  }
  if (o.trace_to == 0 && !o.trace_file.empty()) o.trace_to = 2000;
  if (o.repro.empty()) o.repro = cmdline;
  try {
    return run_main(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kld_tb: error: %s\n", e.what());
    return 2;
  }
}
