#include "hw/ring_plan.hpp"

#include <algorithm>
#include <functional>

#include "common/error.hpp"
#include "golden/intmath.hpp"
#include "golden/scan.hpp"

namespace kaleido::hw {

namespace {

void check_shape(const ReuseConfig& cfg, const RingShape& shape) {
  if (shape.chunk < 1)
    throw ConfigError("chunk", std::to_string(shape.chunk), "a chunk holds at least one scan position");
  if (shape.lead < 1)
    throw ConfigError("lead", std::to_string(shape.lead), "the passes run at least one chunk ahead of the gather");
  if (shape.list_w < 1)
    throw ConfigError("list-w", std::to_string(shape.list_w), "the list builder reads at least one position a cycle");
  if (cfg.channels % cfg.group_w != 0)
    throw ConfigError("group-w", std::to_string(cfg.group_w), "must divide K = " + std::to_string(cfg.channels));
}

// Cycles from a pass's last issue until its last partial is in the ring: the drain of the array
// (docs/hardware.md, "Cycle count": GROUP_W rows to the segment's tap, COLS columns, MUL_PIPE).
int64_t landing_latency(const HwConfig& hw) { return hw.group_w + hw.cols + hw.mul_pipe; }

// A detector lane's two stages: a position's decision is readable this many cycles after it enters.
constexpr int64_t kDetectLatency = 2;

// COMPUTE pairs per (chunk, group) in scan order: counts[c * G + g]; all of them when `dec` is null.
std::vector<int64_t> compute_counts(const ReuseConfig& cfg, const std::vector<PairDecision>* dec, int chunk) {
  const int G = cfg.groups();
  const int64_t N = cfg.grid.tokens(), NC = (N + chunk - 1) / chunk;
  std::vector<int64_t> counts(static_cast<size_t>(NC * G), 0);
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  for (int64_t p = 0; p < N; ++p) {
    const int32_t tok = scan.token_at(p);
    for (int g = 0; g < G; ++g) {
      const bool computes =
          !dec || (*dec)[static_cast<size_t>(tok) * static_cast<size_t>(G) + static_cast<size_t>(g)].kind ==
                      PairKind::Compute;
      if (computes) ++counts[static_cast<size_t>((p / chunk) * G + g)];
    }
  }
  return counts;
}

}  // namespace

int64_t ring_window(const ReuseConfig& cfg) {
  if (cfg.window_depth > 0) return cfg.window_depth;
  return ScanOrder(cfg.grid, cfg.tile_h, cfg.tile_w).required_window_depth();
}

int64_t ring_depth(const ReuseConfig& cfg, const RingShape& shape) {
  check_shape(cfg, shape);
  return ring_window(cfg) + (shape.lead + 1) * static_cast<int64_t>(shape.chunk);
}

std::vector<SramRole> ring_storage(const HwConfig& hw, const ReuseConfig& cfg, const RingShape& shape) {
  check_shape(cfg, shape);
  const int64_t N = cfg.grid.tokens(), K = cfg.channels, G = cfg.groups(), W = ring_window(cfg), C = shape.chunk;
  return {
      {"ring of partial sums (one per group and column)", "G*COLS x (W + (L + 1) C) x PARTIAL_W", G * hw.cols,
       ring_depth(cfg, shape), hw.sum_w(hw.group_w)},
      {"decision codes (COMPUTE, REUSE along t, h, w)", "N x 2G (LIST_W positions a word)", 1, N, 2 * G},
      {"detector window (Ahat of the last W positions)", "W x K*DATA_W", 1, W, K * hw.data_w},
      {"A chunk buffers (the chunk issued and the next)", "2 x C x K*DATA_W", 2, C, K * hw.data_w},
      {"compute lists (two chunks, one per group)", "2G x C x clog2(C)", 2 * G, C, clog2(C)},
      {"chunk summaries (no COMPUTE pair in the chunk)", "ceil(N / C) x 1", 1, (N + C - 1) / C, 1},
      {"B slices (this m-tile's and the next)", "2 x K x COLS*DATA_W", 2, K, static_cast<int64_t>(hw.cols) * hw.data_w},
  };
}

RingCycles ring_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>* decisions,
                       const RingShape& shape, GroupPairing pairing) {
  check_shape(cfg, shape);
  const int chunk = shape.chunk;
  const int G = cfg.groups(), segs = hw.segs();
  if (segs < 1) throw ConfigError("group-w", std::to_string(hw.group_w), "must not exceed ROWS");
  const int64_t N = cfg.grid.tokens(), NC = (N + chunk - 1) / chunk;
  const int64_t MT = (cfg.out_cols + hw.cols - 1) / hw.cols, KT = (G + segs - 1) / segs;
  const std::vector<int64_t> counts = compute_counts(cfg, decisions, chunk);
  const int64_t rounds = (G + hw.det_lanes() - 1) / hw.det_lanes();
  const int64_t lat = landing_latency(hw);

  RingCycles r;
  r.chunks = NC;
  std::vector<int64_t> det_end(static_cast<size_t>(NC), 0);
  for (int64_t c = 0, t = 0; c < NC && decisions; ++c) {
    t += rounds * std::min<int64_t>(chunk, N - c * chunk);
    det_end[static_cast<size_t>(c)] = t + kDetectLatency;
  }
  std::vector<int64_t> gather_end(static_cast<size_t>(MT * NC), 0);
  // When chunk q's compute lists are complete: the detector's in the first m-tile; later, the list
  // builder's, which reads the chunk's codes LIST_W positions a cycle into a free list buffer (two:
  // the one issued and the next).
  std::vector<int64_t> lists_ready(static_cast<size_t>(MT * NC), 0);
  int64_t prev_pass_start = 0;
  int64_t engine_free = 0;          // the pass engine's next free cycle
  int64_t weights_ready = hw.rows;  // the next pass's weights: the first load starts at cycle 0
  std::vector<int64_t> seg_weights_ready(static_cast<size_t>(segs), hw.group_w);  // GroupPairing::Independent
  for (int64_t q = 0; q < MT * NC; ++q) {
    const int64_t c = q % NC, n = std::min<int64_t>(chunk, N - c * chunk);
    int64_t ready = engine_free;
    auto wait_for = [&](int64_t until, int64_t& counter) {
      if (until > ready) counter += until - ready, ready = until;
    };
    const int64_t beats = (n + hw.gather_w - 1) / hw.gather_w;
    if (decisions && q < NC) {
      lists_ready[static_cast<size_t>(q)] = det_end[static_cast<size_t>(c)];
      wait_for(det_end[static_cast<size_t>(c)], r.detect_wait);
    } else if (decisions) {
      // A chunk with no COMPUTE pair (its summary bit) has no list to build.
      const bool any = std::any_of(counts.begin() + c * G, counts.begin() + (c + 1) * G, [](int64_t k) { return k > 0; });
      lists_ready[static_cast<size_t>(q)] = std::max(lists_ready[static_cast<size_t>(q - 1)], prev_pass_start) +
                                           (any ? (n + shape.list_w - 1) / shape.list_w : 0);
      wait_for(lists_ready[static_cast<size_t>(q)], r.list_wait);
    }
    if (q > shape.lead) wait_for(gather_end[static_cast<size_t>(q - shape.lead - 1)], r.ring_wait);
    prev_pass_start = ready;
    // The chunk's groups in the order the passes take them, SEGS at a time.
    std::vector<int64_t> order(counts.begin() + c * G, counts.begin() + (c + 1) * G);
    if (pairing != GroupPairing::KTile) std::sort(order.begin(), order.end(), std::greater<int64_t>());
    if (pairing == GroupPairing::Independent) {
      // Longest list first, each to the segment free first; a segment's next group loads its
      // GROUP_W rows of weights while its current one issues.
      std::vector<int64_t> seg_ready(static_cast<size_t>(segs), ready), seg_issue(static_cast<size_t>(segs), 0);
      for (const int64_t len : order) {
        if (len == 0) break;
        const auto s = static_cast<size_t>(std::min_element(seg_ready.begin(), seg_ready.end()) - seg_ready.begin());
        seg_ready[s] = std::max(seg_ready[s], seg_weights_ready[s]);
        seg_weights_ready[s] = seg_ready[s] + hw.group_w;
        seg_ready[s] += len;
        seg_issue[s] += len;
      }
      const int64_t end = *std::max_element(seg_ready.begin(), seg_ready.end());
      const int64_t busiest = *std::max_element(seg_issue.begin(), seg_issue.end());
      r.issue += busiest;
      r.weight_wait += end - ready - busiest;
      ready = end;
    }
    for (int64_t kt = 0; kt < KT && pairing != GroupPairing::Independent; ++kt) {
      int64_t len = 0;
      for (int s = 0; s < segs; ++s) {
        const int64_t g = kt * segs + s;
        if (g < G) len = std::max(len, order[static_cast<size_t>(g)]);
      }
      if (len == 0) continue;  // every pair of the k-tile reuses: no pass, no weight load
      wait_for(weights_ready, r.weight_wait);
      weights_ready = ready + hw.rows;  // the next pass's weights load into the shadow registers now
      r.issue += len;
      ready += len;
    }
    engine_free = ready;
    const int64_t start = std::max(ready + lat, q > 0 ? gather_end[static_cast<size_t>(q - 1)] : 0);
    gather_end[static_cast<size_t>(q)] = start + beats;
    r.gather_beats += beats;
  }
  r.total = gather_end.back();
  r.tail = r.total - engine_free;
  return r;
}

WideMatrix ring_output(const HwConfig& hw, const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b,
                       const IntReuse& reuse, const RingShape& shape, int64_t depth) {
  check_shape(cfg, shape);
  const int chunk = shape.chunk;
  const int G = cfg.groups(), Gw = cfg.group_w, cols = hw.cols, pw = hw.sum_w(Gw);
  const int64_t N = cfg.grid.tokens(), M = cfg.out_cols, NC = (N + chunk - 1) / chunk;
  const int64_t MT = (M + cols - 1) / cols;
  if (a.rows != N || a.cols != cfg.channels || b.rows != cfg.channels || b.cols != M ||
      static_cast<int64_t>(reuse.decisions.size()) != N * G)
    throw InternalError("ring_output: operands or decisions do not match the workload");
  if (depth < 1) throw ConfigError("ring depth", std::to_string(depth), "at least one slot");
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  // Slot (g, column j of the m-tile, s) at [(g * cols + j) * depth + s]; owner[g * depth + s] is the
  // flattened position (mt * N + p) whose partials the slot holds, -1 before any write.
  std::vector<int64_t> slot(static_cast<size_t>(G) * static_cast<size_t>(cols) * static_cast<size_t>(depth), 0);
  std::vector<int64_t> owner(static_cast<size_t>(G) * static_cast<size_t>(depth), -1);
  auto at = [&](int g, int64_t j, int64_t s) -> int64_t& {
    return slot[static_cast<size_t>((g * cols + j) * depth + s)];
  };
  WideMatrix out(N, M, 0);

  auto positions = [&](int64_t q) {
    const int64_t c = q % NC;
    return std::pair<int64_t, int64_t>{c * chunk, std::min<int64_t>(N, (c + 1) * chunk)};
  };
  auto passes = [&](int64_t q) {  // the array writes every COMPUTE partial of chunk q
    const int64_t mt = q / NC;
    const auto [p0, p1] = positions(q);
    for (int64_t p = p0; p < p1; ++p) {
      const int32_t tok = scan.token_at(p);
      const int64_t s = (mt * N + p) % depth;
      for (int g = 0; g < G; ++g) {
        if (reuse.at(tok, g).kind != PairKind::Compute) continue;
        for (int64_t j = 0; j < cols && mt * cols + j < M; ++j) {
          int64_t sum = 0;
          for (int k = g * Gw; k < (g + 1) * Gw; ++k)
            sum += static_cast<int64_t>(a.at(tok, k)) * static_cast<int64_t>(b.at(k, mt * cols + j));
          if (!fits_signed(sum, pw)) throw InternalError("ring_output: a partial exceeds PARTIAL_W");
          at(g, j, s) = sum;
        }
        owner[static_cast<size_t>(g * depth + s)] = mt * N + p;
      }
    }
  };
  auto gather = [&](int64_t q) {  // REUSE pairs copy their reference's slot; each position sums its G slots
    const int64_t mt = q / NC;
    const auto [p0, p1] = positions(q);
    for (int64_t p = p0; p < p1; ++p) {
      const int32_t tok = scan.token_at(p);
      const int64_t s = (mt * N + p) % depth;
      for (int g = 0; g < G; ++g) {
        const PairDecision& d = reuse.at(tok, g);
        const int64_t src = d.kind == PairKind::Compute ? p : scan.pos_of(d.ref);
        const int64_t from = (mt * N + src) % depth;
        if (owner[static_cast<size_t>(g * depth + from)] != mt * N + src)
          throw InternalError("ring slot read after it was overwritten: group " + std::to_string(g) +
                              ", position " + std::to_string(p) + " reads position " + std::to_string(src) +
                              " in a ring of " + std::to_string(depth) + " slots (chunk " + std::to_string(chunk) +
                              ", lead " + std::to_string(shape.lead) + ")");
        if (d.kind != PairKind::Compute) {
          for (int64_t j = 0; j < cols; ++j) at(g, j, s) = at(g, j, from);
          owner[static_cast<size_t>(g * depth + s)] = mt * N + p;
        }
      }
      for (int64_t j = 0; j < cols && mt * cols + j < M; ++j) {
        int64_t sum = 0;
        for (int g = 0; g < G; ++g) sum += at(g, j, s);
        out.at(tok, mt * cols + j) = wrap_signed(sum, cfg.acc_w);
      }
    }
  };
  // Chunks q - L + 1 .. q are written while chunk q - L is gathered: every write of them lands
  // before its reads (the order that lets the least ring be checked).
  for (int64_t q = 0; q < MT * NC; ++q) {
    passes(q);
    if (q >= shape.lead) gather(q - shape.lead);
  }
  for (int64_t q = std::max<int64_t>(0, MT * NC - shape.lead); q < MT * NC; ++q) gather(q);
  return out;
}

}  // namespace kaleido::hw
