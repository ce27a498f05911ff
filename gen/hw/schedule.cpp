#include "hw/schedule.hpp"

#include <algorithm>
#include <deque>

#include "common/error.hpp"
#include "golden/scan.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// When each group's compute-list entries become available to ISSUE, and when
// its list is complete, from the detection engine's progress.
struct Lists {
  std::vector<std::vector<int64_t>> avail;  // per group, ascending cycles
  std::vector<int64_t> final_at;            // per group: first cycle the list is complete
  int64_t trace_stalls = 0;                 // cycles a decision waited for the trace consumer
};

// Detection steps a position into the lanes' second stage every cycle, except in the cycles the
// trace consumer holds it: a decision waits in the second stage in a cycle after one with
// dec_ready_i low (`not_ready_cycles`, sorted, relative to the first BUSY cycle; ready latency 1).
// The rounds (LANES groups each) come in sets of LANE_GROUPS that present every scan position
// once per round, round by round (each lane decides its groups in turn). A position's decision
// retires in the next cycle that is not held (the cycle the next position steps in); it is
// registered, then written: its list entry is readable two cycles after it retires. A group's
// list is complete two cycles after the last decision of its set of rounds retires.
Lists detection_lists(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& dec,
                      const std::vector<int64_t>& not_ready_cycles) {
  const int G = cfg.groups();
  const int64_t N = cfg.grid.tokens();
  const int lanes = hw.det_lanes();
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  Lists l;
  l.avail.assign(static_cast<size_t>(G), {});
  l.final_at.assign(static_cast<size_t>(G), 0);
  const int P = hw.lane_groups;
  const int64_t rounds = detection_rounds(G, lanes, P);
  size_t stall = 0;
  int64_t cycle = 0;
  auto skip_stalls = [&] {  // only while a decision is held: an empty stage steps regardless
    while (stall < not_ready_cycles.size() && not_ready_cycles[stall] < cycle) ++stall;
    while (stall < not_ready_cycles.size() && not_ready_cycles[stall] == cycle) {
      ++stall;
      ++cycle;
      ++l.trace_stalls;
    }
  };
  auto groups_of = [&](int64_t first_round, int64_t n_rounds) {  // [begin, end) of their groups
    return std::pair<int64_t, int64_t>{std::min<int64_t>(G, first_round * lanes),
                                       std::min<int64_t>(G, (first_round + n_rounds) * lanes)};
  };
  // The position in the second stage: its round and scan position (none before the first step).
  int64_t held_round = -1, held_pos = 0;
  auto retire = [&](int64_t at) {
    if (held_round < 0) return;
    const int32_t tok = scan.token_at(held_pos);
    const auto [g0, g1] = groups_of(held_round, 1);
    for (int64_t g = g0; g < g1; ++g)
      if (dec[static_cast<size_t>(tok) * static_cast<size_t>(G) + static_cast<size_t>(g)].kind == PairKind::Compute)
        l.avail[static_cast<size_t>(g)].push_back(at + 2);
    if (held_pos == N - 1 && held_round % P == P - 1) {
      const auto [p0, p1] = groups_of(held_round - (P - 1), P);
      for (int64_t g = p0; g < p1; ++g) l.final_at[static_cast<size_t>(g)] = at + 2;
    }
  };
  for (int64_t set_first = 0; set_first < rounds; set_first += P)
    for (int64_t p = 0; p < N; ++p)
      for (int64_t phase = 0; phase < P; ++phase) {
        if (held_round >= 0) skip_stalls();  // a held decision can stall the step; an empty stage cannot
        retire(cycle);
        held_round = set_first + phase;
        held_pos = p;
        ++cycle;
      }
  skip_stalls();
  retire(cycle);
  return l;
}

// The gather engine of docs/hardware.md, cycle by cycle: four places (a beat of GATHER_W tokens
// enters and its roots are read; its partials are read into registers; the partials are summed; its
// words wait in the output register) that advance together unless the output register holds a
// beat the consumer does not take.
class GatherEngine {
 public:
  GatherEngine(int64_t beats, const std::vector<int64_t>& stall_cycles) : n_(beats), stalls_(stall_cycles) {}
  int64_t now() const { return now_; }
  // The engine may take an m-tile in this cycle: no token left to enter, and the last one's partial
  // read is over or being registered.
  bool free() const { return to_enter_ == 0 && (!sum_ || advances()); }
  // The last word of an m-tile leaves in this cycle and nothing follows it.
  bool finishing() const { return to_enter_ == 0 && !sum_ && !mid_ && out_ && out_last_ && advances(); }
  void step(bool start) {
    if (advances()) {
      out_ = mid_;
      out_last_ = mid_last_;
      mid_ = sum_;
      mid_last_ = sum_last_;
      sum_ = to_enter_ > 0;
      sum_last_ = to_enter_ == 1;
      if (to_enter_ > 0) --to_enter_;
    }
    if (start) to_enter_ = n_;
    ++now_;
  }

 private:
  bool advances() const { return !(out_ && std::binary_search(stalls_.begin(), stalls_.end(), now_)); }
  int64_t n_;
  const std::vector<int64_t>& stalls_;
  int64_t now_ = 0, to_enter_ = 0;
  bool sum_ = false, sum_last_ = false, mid_ = false, mid_last_ = false, out_ = false, out_last_ = false;
};

// The pass engine, the weight loader and the gather engine of docs/hardware.md,
// cycle by cycle numbered from 0 (the first cycle with BUSY set). `lists` is
// empty in dense mode (every segment issues every token, nothing waits for
// detection). Passes q = mt*KT + kt run in order; pass q computes with weight
// buffer q mod 2. An m-tile's passes end without a drain: its last partial is
// written `land` cycles after its last issue, and from the next cycle the
// gather engine takes it as soon as it is free; the pass engine starts m-tile
// mt + 1 (the bank of mt - 1) once the gather of mt - 1 is over.
ScheduleCycles run_engines(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<int64_t>& len,
                           const Lists* lists, const StreamStalls& st) {
  const int64_t N = cfg.grid.tokens();
  const int G = cfg.groups();
  const int64_t KT = ceil_div(cfg.channels, hw.rows), MT = ceil_div(cfg.out_cols, hw.cols);
  // The issue registers delay every activation by kIssueStages cycles on its way to the array.
  const int64_t land = kIssueStages + hw.group_w + hw.cols - 1 + hw.mul_pipe;  // last issue to last partial
  // a buffer reloads this many cycles after its pass's ISSUE ended
  const int64_t reload = kIssueStages + hw.group_w + hw.cols - 1;
  ScheduleCycles s;
  if (lists) {
    for (int64_t f : lists->final_at) s.detect = std::max(s.detect, f);
    s.trace_stalls = lists->trace_stalls;
  }
  int64_t adv = 0;               // first cycle the pass engine is on pass q
  int64_t adv_prev = 0;          // ... on pass q-1 (the loader stays at most one pass ahead)
  int64_t loader_free = 0;       // first cycle after the loader's previous load
  int64_t buf_free[2] = {0, 0};  // first cycle each buffer may be reloaded
  int64_t last_issue = 0;        // the last ISSUE cycle of the last m-tile
  GatherEngine gather(ceil_div(N, hw.gather_w), st.out_cycles);  // beats of GATHER_W tokens
  // M-tiles whose passes have ended and that the gather engine has not taken, in order: the first
  // cycle it may take each.
  std::deque<int64_t> waiting;
  // Steps the gather engine to cycle t, handing it each waiting m-tile in its first free cycle.
  auto gather_until = [&](int64_t t) {
    while (gather.now() < t) {
      const bool start = !waiting.empty() && waiting.front() <= gather.now() && gather.free();
      if (start) waiting.pop_front();
      gather.step(start);
    }
  };
  for (int64_t mt = 0, q = 0; mt < MT; ++mt) {
    for (int64_t kt = 0; kt < KT; ++kt, ++q) {
      // LOADW: the loader shifts in pass q's ROWS rows from `load`; ISSUE starts
      // once they are in and the pass engine has reached pass q.
      const int64_t load = std::max({loader_free, adv_prev, buf_free[q % 2]});
      loader_free = load + hw.rows;
      // First ISSUE cycle: the PEs shift each row a cycle after the loader sends it.
      const int64_t issue = std::max(adv, load + hw.rows + 1);
      s.loadw += issue - adv;
      // Segments of this k-tile: their groups' lists (a segment past G has none).
      std::vector<int64_t> groups;
      for (int seg = 0; seg < hw.segs(); ++seg)
        if (kt * hw.segs() + seg < G) groups.push_back(kt * hw.segs() + seg);
      auto final_at = [&](int64_t g) { return lists ? lists->final_at[static_cast<size_t>(g)] : 0; };
      int64_t end = issue;  // the ISSUE cycle in which every segment is finishing
      std::vector<int64_t> issued;  // cycles with an issue, over all segments
      for (int64_t g : groups) {
        int64_t prev = issue - 1;
        for (int64_t k = 0; k < len[static_cast<size_t>(g)]; ++k) {
          const int64_t avail = lists ? lists->avail[static_cast<size_t>(g)][static_cast<size_t>(k)] : 0;
          prev = std::max(prev + 1, avail);
          issued.push_back(prev);
        }
        end = std::max({end, prev, final_at(g)});
      }
      std::sort(issued.begin(), issued.end());
      issued.erase(std::unique(issued.begin(), issued.end()), issued.end());
      const int64_t issue_cycles = end - issue + 1;
      s.busy += static_cast<int64_t>(issued.size());
      const bool end_issues = std::binary_search(issued.begin(), issued.end(), end);
      s.starved += issue_cycles - static_cast<int64_t>(issued.size()) - (end_issues ? 0 : 1);
      s.passes += issue - adv + issue_cycles;
      buf_free[q % 2] = end + reload;
      adv_prev = adv;
      if (kt + 1 < KT) {
        adv = end + 1;  // the next pass follows without a drain
        continue;
      }
      waiting.push_back(end + land + 1);
      if (mt + 1 == MT) {
        last_issue = end;  // TAIL
        break;
      }
      // HANDOFF from the next cycle until the gather of m-tile mt - 1 is over: no m-tile before mt
      // waits, and the engine is free (or has taken mt).
      int64_t h = end + 1;
      for (;; ++h) {
        gather_until(h);
        if (waiting.empty() || (waiting.size() == 1 && gather.free())) break;
      }
      s.wait_gather += h - (end + 1);
      s.handoff += h - end;
      adv = h + 1;
    }
  }
  // TAIL: until the last m-tile's last word leaves.
  while (!(waiting.empty() && gather.finishing())) gather_until(gather.now() + 1);
  s.total = gather.now() + 1;
  s.tail = s.total - (last_issue + 1);
  return s;
}

}  // namespace

std::vector<int64_t> compute_list_lengths(const ReuseConfig& cfg, const std::vector<PairDecision>& decisions) {
  const int G = cfg.groups();
  std::vector<int64_t> len(static_cast<size_t>(G), 0);
  for (size_t k = 0; k < decisions.size(); ++k)
    if (decisions[k].kind == PairKind::Compute) ++len[k % static_cast<size_t>(G)];
  return len;
}

ScheduleCycles dense_cycles(const HwConfig& hw, const ReuseConfig& cfg, const StreamStalls& stalls) {
  const std::vector<int64_t> all(static_cast<size_t>(cfg.groups()), cfg.grid.tokens());
  return run_engines(hw, cfg, all, nullptr, stalls);
}

ScheduleCycles reuse_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& decisions,
                            const StreamStalls& stalls) {
  const Lists lists = detection_lists(hw, cfg, decisions, stalls.trace_not_ready_cycles);
  return run_engines(hw, cfg, compute_list_lengths(cfg, decisions), &lists, stalls);
}

ScheduleCycles keep_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& decisions,
                           const StreamStalls& stalls) {
  const std::vector<int64_t> len = compute_list_lengths(cfg, decisions);
  Lists lists;
  lists.final_at.assign(len.size(), 0);
  for (int64_t n : len) lists.avail.emplace_back(static_cast<size_t>(n), 0);
  return run_engines(hw, cfg, len, &lists, stalls);
}

void check_workload_fits(const HwConfig& hw, const ReuseConfig& c) {
  auto at_most = [](const char* what, int64_t value, const char* param, int64_t limit, const char* option) {
    if (value > limit)
      throw ConfigError(what, std::to_string(value),
                        std::string("exceeds the hardware's ") + param + " = " + std::to_string(limit) + " (raise " +
                            option + ")");
  };
  at_most("T", c.grid.t, "MAX_T", hw.max_t, "--max-t");
  at_most("H", c.grid.h, "MAX_H", hw.max_h, "--max-h");
  at_most("W", c.grid.w, "MAX_W", hw.max_w, "--max-w");
  at_most("K", c.channels, "MAX_K", hw.max_k, "--max-k");
  at_most("M", c.out_cols, "MAX_M", hw.max_m, "--max-m");
  const int64_t depth = c.window_depth > 0 ? c.window_depth
                                           : ScanOrder(c.grid, c.tile_h, c.tile_w).required_window_depth();
  at_most("window depth", depth, "WIN_CAP", hw.window_cap(), "--win-cap, or shorten --window or --tile");
  check_algorithm_widths(hw, c.data_w, c.acc_w, c.group_w);
  if (c.mode == Mode::TokenReuse)
    throw ConfigError("mode", "token", "token-level reuse is a golden-model baseline, not a hardware mode");
  if (!(hw.policies & (1u << static_cast<unsigned>(c.policy))))
    throw ConfigError("policy", policy_name(c.policy),
                      "is not built into the hardware (--policies " + std::to_string(hw.policies) + ")");
}

int lanes_to_keep_up(const HwConfig& hw, int groups, double r) {
  if (groups < 1 || r < 0 || r > 1) throw InternalError("lanes_to_keep_up: bad groups or reuse ratio");
  const int segs = hw.segs();
  const double issue_rounds = static_cast<double>((groups + segs - 1) / segs) * (1.0 - r);  // in units of N
  for (int lanes = 1; lanes <= (groups + hw.lane_groups - 1) / hw.lane_groups; ++lanes)
    if (detection_rounds(groups, lanes, hw.lane_groups) <= issue_rounds) return lanes;
  return 0;
}

int gather_w_to_keep_up(const HwConfig& hw, int channels, double r) {
  if (channels < 1 || r < 0 || r > 1) throw InternalError("gather_w_to_keep_up: bad channel count or reuse ratio");
  const double kt = static_cast<double>(ceil_div(channels, hw.rows));
  const int64_t widest = find_hw_field("gather_w")->max;
  for (int w = 1; w <= widest; ++w)
    if (w * kt * (1.0 - r) >= 1.0) return w;
  return 0;
}

}  // namespace kaleido::hw
