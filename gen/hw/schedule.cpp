#include "hw/schedule.hpp"

#include <algorithm>

#include "golden/scan.hpp"

namespace kaleido::hw {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t out_stall(const StreamStalls& s, int64_t mt) {
  return mt < static_cast<int64_t>(s.out_per_mt.size()) ? s.out_per_mt[static_cast<size_t>(mt)] : 0;
}

// When each group's compute-list entries become available to ISSUE, and when
// its list is complete, from the detection engine's progress.
struct Lists {
  std::vector<std::vector<int64_t>> avail;  // per group, ascending cycles
  std::vector<int64_t> final_at;            // per group: first cycle the list is complete
};

// Detection steps one scan position per cycle, except in the cycles the trace
// consumer held it (sorted, relative to the first BUSY cycle).
Lists detection_lists(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>& dec,
                      const std::vector<int64_t>& trace_stall_cycles) {
  const int G = cfg.groups();
  const int64_t N = cfg.grid.tokens();
  const int lanes = hw.det_lanes();
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  Lists l;
  l.avail.assign(static_cast<size_t>(G), {});
  l.final_at.assign(static_cast<size_t>(G), 0);
  const int64_t rounds = ceil_div(G, lanes);
  size_t stall = 0;
  int64_t cycle = 0;
  for (int64_t r = 0; r < rounds; ++r)
    for (int64_t p = 0; p < N; ++p) {
      while (stall < trace_stall_cycles.size() && trace_stall_cycles[stall] == cycle) {
        ++stall;
        ++cycle;
      }
      const int32_t tok = scan.token_at(p);
      for (int64_t g = r * lanes; g < std::min<int64_t>(G, (r + 1) * lanes); ++g) {
        if (dec[static_cast<size_t>(tok) * static_cast<size_t>(G) + static_cast<size_t>(g)].kind == PairKind::Compute)
          l.avail[static_cast<size_t>(g)].push_back(cycle + 1);
        if (p == N - 1) l.final_at[static_cast<size_t>(g)] = cycle + 1;
      }
      ++cycle;
    }
  return l;
}

// The pass engine and the gather engine of docs/hardware.md, cycle by cycle
// numbered from 0 (the first cycle with BUSY set). `lists` is empty in dense
// mode (every segment issues every token, nothing waits for detection).
ScheduleCycles run_engines(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<int64_t>& len,
                           const Lists* lists, const StreamStalls& st) {
  const int64_t N = cfg.grid.tokens();
  const int G = cfg.groups();
  const int64_t KT = ceil_div(cfg.channels, hw.rows), MT = ceil_div(cfg.out_cols, hw.cols);
  const int64_t drain = hw.group_w + hw.cols - 1 + hw.mul_pipe;
  ScheduleCycles s;
  if (lists)
    for (int64_t f : lists->final_at) s.detect = std::max(s.detect, f);
  int64_t t = 0, last_word = -1;  // t: first LOADW cycle of the next pass
  for (int64_t mt = 0; mt < MT; ++mt) {
    for (int64_t kt = 0; kt < KT; ++kt) {
      const int64_t issue = t + hw.rows;  // first ISSUE cycle
      s.loadw += hw.rows;
      s.passes += hw.rows;
      // Segments of this k-tile: their groups' lists (a segment past G has none).
      std::vector<int64_t> groups;
      for (int seg = 0; seg < hw.segs(); ++seg)
        if (kt * hw.segs() + seg < G) groups.push_back(kt * hw.segs() + seg);
      auto final_at = [&](int64_t g) { return lists ? lists->final_at[static_cast<size_t>(g)] : 0; };
      // Empty pass: at the last LOADW cycle every list is complete and empty.
      bool empty = true;
      for (int64_t g : groups) empty = empty && len[static_cast<size_t>(g)] == 0 && final_at(g) <= issue - 1;
      if (empty) {
        t = issue;
        continue;
      }
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
      s.passes += issue_cycles + drain;
      t = end + drain + 1;
    }
    // HANDOFF: hand mt to the gather engine once the gather of mt-1 sends its
    // last word (or later); the gather then sends N words from the next cycle.
    const int64_t handoff = std::max(t, last_word);
    s.wait_gather += handoff - t;
    s.handoff += handoff - t + 1;
    last_word = handoff + N + out_stall(st, mt);
    t = handoff + 1;
  }
  s.total = last_word + 1;
  s.tail = s.total - t;
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
  const Lists lists = detection_lists(hw, cfg, decisions, stalls.trace_cycles);
  return run_engines(hw, cfg, compute_list_lengths(cfg, decisions), &lists, stalls);
}

}  // namespace kaleido::hw
