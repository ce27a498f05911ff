#include "hw/ring_plan.hpp"

#include <algorithm>
#include <functional>

#include "common/error.hpp"
#include "hw/blocks.hpp"
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

void check_mask(const HwConfig& hw, const ReuseConfig& cfg, const RingMask& mask) {
  if (mask.key_block < hw.cols || mask.key_block % hw.cols != 0)
    throw ConfigError("key-block", std::to_string(mask.key_block),
                      "a key block is a whole number of m-tiles (a multiple of COLS = " + std::to_string(hw.cols) + ")");
  const size_t want = static_cast<size_t>(ring_query_blocks(cfg)) * static_cast<size_t>(ring_key_blocks(cfg, mask));
  if (mask.keep.size() != want)
    throw ConfigError("block mask", std::to_string(mask.keep.size()) + " entries",
                      "one per (query block, key block): " + std::to_string(want));
}

// Cycles from a pass's last issue until its last partial is in the ring: the drain of the array
// (docs/hardware.md, "Cycle count": GROUP_W rows to the segment's tap, COLS columns, MUL_PIPE).
int64_t landing_latency(const HwConfig& hw) { return hw.group_w + hw.cols + hw.mul_pipe; }

// A detector lane's two stages: a position's decision is readable this many cycles after it enters.
constexpr int64_t kDetectLatency = 2;

using Chunk = RingChunk;

// COMPUTE pairs per (chunk, group): counts[c * G + g]; all of them when `dec` is null.
std::vector<int64_t> compute_counts(const ReuseConfig& cfg, const std::vector<PairDecision>* dec,
                                    const std::vector<Chunk>& chunks) {
  const int G = cfg.groups();
  std::vector<int64_t> counts(chunks.size() * static_cast<size_t>(G), 0);
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  for (size_t c = 0; c < chunks.size(); ++c)
    for (int64_t p = chunks[c].p0; p < chunks[c].p1; ++p) {
      const int32_t tok = scan.token_at(p);
      for (int g = 0; g < G; ++g) {
        const bool computes =
            !dec || (*dec)[static_cast<size_t>(tok) * static_cast<size_t>(G) + static_cast<size_t>(g)].kind ==
                        PairKind::Compute;
        if (computes) ++counts[c * static_cast<size_t>(G) + static_cast<size_t>(g)];
      }
    }
  return counts;
}

// The (m-tile, chunk) pairs the run executes, in order: every chunk of every m-tile but those
// whose (query block, key block) the mask drops, except in the first m-tile, which runs every
// chunk (masked: its outputs discarded) so that the A its issue reads is saved for the later ones.
struct Step {
  int64_t mt = 0;
  size_t chunk = 0;
  bool masked = false;
};

std::vector<Step> executed_steps(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<Chunk>& chunks,
                                 const RingMask* mask) {
  const int64_t MT = (cfg.out_cols + hw.cols - 1) / hw.cols;
  if (mask) check_mask(hw, cfg, *mask);
  const int kb_count = mask ? ring_key_blocks(cfg, *mask) : 1;
  std::vector<Step> steps;
  for (int64_t mt = 0; mt < MT; ++mt)
    for (size_t c = 0; c < chunks.size(); ++c) {
      const int64_t kb = mask ? mt * hw.cols / mask->key_block : 0;
      const bool dropped = mask && !mask->keep[static_cast<size_t>(chunks[c].block * kb_count + kb)];
      if (dropped && mt > 0) continue;
      steps.push_back({mt, c, dropped});
    }
  return steps;
}

}  // namespace

std::vector<RingChunk> ring_chunks(const ReuseConfig& cfg, int chunk) {
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  const int th = cfg.tile_h > 0 ? cfg.tile_h : cfg.grid.h, tw = cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w;
  auto tile_of = [&](int64_t p) {
    const TokenCoord c = scan.coord(scan.token_at(p));
    return std::pair<int, int>{c.h / th, c.w / tw};
  };
  std::vector<RingChunk> out;
  int block = -1;
  std::pair<int, int> tile{-1, -1};
  for (int64_t p = 0; p < scan.size(); ++p) {
    const auto t = tile_of(p);
    if (t != tile) {
      tile = t;
      out.push_back({p, p, ++block});
    } else if (out.back().p1 - out.back().p0 == chunk) {
      out.push_back({p, p, block});
    }
    out.back().p1 = p + 1;
  }
  return out;
}

int64_t ring_window(const ReuseConfig& cfg) {
  if (cfg.window_depth > 0) return cfg.window_depth;
  return ScanOrder(cfg.grid, cfg.tile_h, cfg.tile_w).required_window_depth();
}

int64_t ring_depth(const ReuseConfig& cfg, const RingShape& shape) {
  check_shape(cfg, shape);
  return ring_window(cfg) + (shape.lead + 1) * static_cast<int64_t>(shape.chunk);
}

int64_t ring_code_words(const ReuseConfig& cfg, const RingShape& shape) {
  check_shape(cfg, shape);
  int64_t words = 0;
  for (const Chunk& c : ring_chunks(cfg, shape.chunk)) words += (c.p1 - c.p0 + shape.list_w - 1) / shape.list_w;
  return words;
}

std::string ring_rtl_misfit(const ReuseConfig& cfg, const RingShape& shape, int gather_w) {
  const int tw = cfg.tile_w_eff(), edge = cfg.grid.w % tw;
  if (tw % gather_w == 0 && edge % gather_w == 0 && shape.chunk % gather_w == 0) return "";
  return "the built merge needs scan-tile widths (" + std::to_string(tw) +
         (edge != 0 ? ", edge tiles " + std::to_string(edge) : std::string()) + ") and chunks (" +
         std::to_string(shape.chunk) + ") that are multiples of GATHER_W (" + std::to_string(gather_w) + ")";
}

std::vector<SramRole> ring_storage(const HwConfig& hw, const ReuseConfig& cfg, const RingShape& shape) {
  check_shape(cfg, shape);
  const int64_t K = cfg.channels, G = cfg.groups(), W = ring_window(cfg), C = shape.chunk;
  const int code_words = static_cast<int>(ring_code_words(cfg, shape));
  const int walk_words = RingFrontBlock::walk_words(shape.chunk, shape.list_w);
  const int replay_words = RingAReplayBlock::fifo_words(shape.chunk);
  return {
      {"ring of partial sums (one per group and column)", "G*COLS x (W + (L + 1) C) x PARTIAL_W", G * hw.cols,
       ring_depth(cfg, shape), hw.sum_w(hw.group_w)},
      // As kld_ring_codes holds them: a word of LIST_W positions' codes, a chunk starting a word;
      // more words than a memory reads in a cycle are parts of equal rows (rounded up).
      {"decision codes (COMPUTE, REUSE along t, h, w)", "sum over chunks of ceil(n / LIST_W) x LIST_W*2G", 1,
       RingCodesBlock::parts(code_words) * RingCodesBlock::part_rows(code_words), shape.list_w * 2 * G},
      {"detector window (Ahat of the last W positions)", "W x K*DATA_W", 1, W, K * hw.data_w},
      {"A chunk buffers (the chunk issued and the next)", "2 x C x K*DATA_W", 2, C, K * hw.data_w},
      // As kld_ring_lists holds them: per group LIST_W banks, entry e in bank e mod LIST_W, both
      // buffers in each (C * clog2(C) bits a list when C is a multiple of LIST_W, a power of two).
      {"compute lists (two chunks, one per group)", "G*LIST_W x 2 ceil(C / LIST_W) x ENTRY_W", G * shape.list_w,
       2 * RingListsBlock::rows(shape.chunk, shape.list_w), RingListsBlock::entry_w(shape.chunk, shape.list_w)},
      {"chunk summaries (no COMPUTE pair in the chunk)", "chunks (ceil(N / C), more with scan tiles) x 1", 1,
       static_cast<int64_t>(ring_chunks(cfg, shape.chunk).size()), 1},
      {"B slices (this m-tile's and the next)", "2 x K x COLS*DATA_W", 2, K, static_cast<int64_t>(hw.cols) * hw.data_w},
      // As kld_ring_front holds it: the code words of the last four chunks built, for the walk
      // (the code memory's one read port is the builds'), in parts as the code memory.
      {"walk buffer (codes of the chunks built, not yet walked)", "4 x ceil(C / LIST_W) x LIST_W*2G", 1,
       RingCodesBlock::parts(walk_words) * RingCodesBlock::part_rows(walk_words), shape.list_w * 2 * G},
      // As kld_ring_a_replay holds them: the later m-tiles' A, streamed back in the issue's order;
      // FIFOs deeper than a memory reads in a cycle are parts of equal rows (rounded up).
      {"A replay FIFOs (later m-tiles: the pass issued and the next)", "SEGS x 2C x GROUP_W*DATA_W", hw.segs(),
       RingCodesBlock::parts(replay_words) * RingCodesBlock::part_rows(replay_words),
       static_cast<int64_t>(hw.group_w) * hw.data_w},
  };
}

int ring_query_blocks(const ReuseConfig& cfg) {
  const int th = cfg.tile_h > 0 ? cfg.tile_h : cfg.grid.h, tw = cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w;
  return ((cfg.grid.h + th - 1) / th) * ((cfg.grid.w + tw - 1) / tw);
}

int ring_key_blocks(const ReuseConfig& cfg, const RingMask& mask) {
  if (mask.key_block < 1) throw ConfigError("key-block", std::to_string(mask.key_block), "at least one column");
  return (cfg.out_cols + mask.key_block - 1) / mask.key_block;
}

RingCycles ring_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>* decisions,
                       const RingShape& shape, GroupPairing pairing, const RingMask* mask) {
  check_shape(cfg, shape);
  const int G = cfg.groups(), segs = hw.segs();
  if (segs < 1) throw ConfigError("group-w", std::to_string(hw.group_w), "must not exceed ROWS");
  const int64_t KT = (G + segs - 1) / segs;
  const std::vector<Chunk> chunks = ring_chunks(cfg, shape.chunk);
  const std::vector<Step> steps = executed_steps(hw, cfg, chunks, mask);
  const std::vector<int64_t> counts = compute_counts(cfg, decisions, chunks);
  const int64_t rounds = (G + hw.det_lanes() - 1) / hw.det_lanes();
  const int64_t lat = landing_latency(hw);

  RingCycles r;
  r.chunks = static_cast<int64_t>(chunks.size());
  r.steps = static_cast<int64_t>(steps.size());
  if (steps.empty()) return r;
  // The detector decides every chunk in scan order from cycle 0, whatever the mask (its decisions
  // serve every key block).
  std::vector<int64_t> det_end(chunks.size(), 0);
  for (size_t c = 0, t = 0; c < chunks.size() && decisions; ++c) {
    t += static_cast<size_t>(rounds * (chunks[c].p1 - chunks[c].p0));
    det_end[c] = static_cast<int64_t>(t) + kDetectLatency;
  }
  std::vector<int64_t> gather_end(steps.size(), 0);
  // When step e's compute lists are complete: the detector's in m-tile 0; later, the list
  // builder's, which reads the chunk's codes LIST_W positions a cycle into a free list buffer (two:
  // the one issued and the next).
  std::vector<int64_t> lists_ready(steps.size(), 0);
  int64_t prev_pass_start = 0;
  int64_t engine_free = 0;          // the pass engine's next free cycle
  int64_t weights_ready = hw.rows;  // the next pass's weights: the first load starts at cycle 0
  std::vector<int64_t> seg_weights_ready(static_cast<size_t>(segs), hw.group_w);  // GroupPairing::Independent
  for (size_t e = 0; e < steps.size(); ++e) {
    const size_t c = steps[e].chunk;
    const int64_t n = chunks[c].p1 - chunks[c].p0;
    const auto cG = static_cast<std::ptrdiff_t>(c) * G;
    int64_t ready = engine_free;
    auto wait_for = [&](int64_t until, int64_t& counter) {
      if (until > ready) counter += until - ready, ready = until;
    };
    const int64_t beats = (n + hw.gather_w - 1) / hw.gather_w;
    if (decisions && steps[e].mt == 0) {
      lists_ready[e] = det_end[c];
      wait_for(det_end[c], r.detect_wait);
    } else if (decisions) {
      // A chunk with no COMPUTE pair (its summary bit) has no list to build.
      const bool any = std::any_of(counts.begin() + cG, counts.begin() + cG + G, [](int64_t k) { return k > 0; });
      lists_ready[e] = std::max({e > 0 ? lists_ready[e - 1] : 0, prev_pass_start, det_end[c]}) +
                       (any ? (n + shape.list_w - 1) / shape.list_w : 0);
      wait_for(lists_ready[e], r.list_wait);
    }
    if (e > static_cast<size_t>(shape.lead))
      wait_for(gather_end[e - static_cast<size_t>(shape.lead) - 1], r.ring_wait);
    prev_pass_start = ready;
    // The chunk's groups in the order the passes take them, SEGS at a time.
    std::vector<int64_t> order(counts.begin() + cG, counts.begin() + cG + G);
    if (pairing != GroupPairing::KTile) std::sort(order.begin(), order.end(), std::greater<int64_t>());
    if (pairing == GroupPairing::Independent) {
      // Longest list first, each to the segment free first; a segment's next group loads its
      // GROUP_W rows of weights while its current one issues.
      std::vector<int64_t> seg_ready(static_cast<size_t>(segs), ready), seg_issue(static_cast<size_t>(segs), 0);
      for (const int64_t len : order) {
        if (len == 0) break;
        const auto sg = static_cast<size_t>(std::min_element(seg_ready.begin(), seg_ready.end()) - seg_ready.begin());
        seg_ready[sg] = std::max(seg_ready[sg], seg_weights_ready[sg]);
        seg_weights_ready[sg] = seg_ready[sg] + hw.group_w;
        seg_ready[sg] += len;
        seg_issue[sg] += len;
      }
      const int64_t end = *std::max_element(seg_ready.begin(), seg_ready.end());
      const int64_t busiest = *std::max_element(seg_issue.begin(), seg_issue.end());
      r.issue += busiest;
      r.weight_wait += end - ready - busiest;
      ready = end;
    }
    for (int64_t kt = 0; kt < KT && pairing != GroupPairing::Independent; ++kt) {
      int64_t len = 0;
      for (int sg = 0; sg < segs; ++sg) {
        const int64_t g = kt * segs + sg;
        if (g < G) len = std::max(len, order[static_cast<size_t>(g)]);
      }
      if (len == 0) continue;  // every pair of the k-tile reuses: no pass, no weight load
      wait_for(weights_ready, r.weight_wait);
      weights_ready = ready + hw.rows;  // the next pass's weights load into the shadow registers now
      r.issue += len;
      ready += len;
    }
    engine_free = ready;
    gather_end[e] = std::max(ready + lat, e > 0 ? gather_end[e - 1] : 0) + beats;
    r.gather_beats += beats;
  }
  r.total = gather_end.back();
  r.tail = r.total - engine_free;
  return r;
}

WideMatrix ring_output(const HwConfig& hw, const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b,
                       const IntReuse& reuse, const RingShape& shape, int64_t depth, const RingMask* mask) {
  check_shape(cfg, shape);
  const int G = cfg.groups(), Gw = cfg.group_w, cols = hw.cols, pw = hw.sum_w(Gw);
  const int64_t N = cfg.grid.tokens(), M = cfg.out_cols;
  if (a.rows != N || a.cols != cfg.channels || b.rows != cfg.channels || b.cols != M ||
      static_cast<int64_t>(reuse.decisions.size()) != N * G)
    throw InternalError("ring_output: operands or decisions do not match the workload");
  if (depth < 1) throw ConfigError("ring depth", std::to_string(depth), "at least one slot");
  const ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  const std::vector<Chunk> chunks = ring_chunks(cfg, shape.chunk);
  const std::vector<Step> steps = executed_steps(hw, cfg, chunks, mask);
  // Positions get ring indices in the order the run executes them: x = base[e] + (p - p0). The
  // chunks of one query block in one m-tile run back to back, so a reference (same tile, earlier)
  // sits p - src indices back. Slot (g, column j, x mod depth) at [(g * cols + j) * depth + x mod
  // depth]; owner[g * depth + x mod depth] is the index x whose partials it holds, -1 before any write.
  std::vector<int64_t> base(steps.size(), 0);
  for (size_t e = 1; e < steps.size(); ++e)
    base[e] = base[e - 1] + chunks[steps[e - 1].chunk].p1 - chunks[steps[e - 1].chunk].p0;
  std::vector<int64_t> slot(static_cast<size_t>(G) * static_cast<size_t>(cols) * static_cast<size_t>(depth), 0);
  std::vector<int64_t> owner(static_cast<size_t>(G) * static_cast<size_t>(depth), -1);
  auto at = [&](int g, int64_t j, int64_t x) -> int64_t& {
    return slot[static_cast<size_t>((g * cols + j) * depth + x % depth)];
  };
  auto owner_of = [&](int g, int64_t x) -> int64_t& { return owner[static_cast<size_t>(g * depth + x % depth)]; };
  WideMatrix out(N, M, 0);  // a dropped block's outputs stay 0

  // Calls fn(p, token, x, m-tile) for every position p of step e, x its ring index.
  auto each_position = [&](size_t e, auto&& fn) {
    const Chunk& ch = chunks[steps[e].chunk];
    for (int64_t p = ch.p0; p < ch.p1; ++p) fn(p, scan.token_at(p), base[e] + (p - ch.p0), steps[e].mt);
  };
  auto passes = [&](size_t e) {  // the array writes every COMPUTE partial of step e
    each_position(e, [&](int64_t, int32_t tok, int64_t x, int64_t mt) {
      for (int g = 0; g < G; ++g) {
        if (reuse.at(tok, g).kind != PairKind::Compute) continue;
        for (int64_t j = 0; j < cols && mt * cols + j < M; ++j) {
          int64_t sum = 0;
          for (int k = g * Gw; k < (g + 1) * Gw; ++k)
            sum += static_cast<int64_t>(a.at(tok, k)) * static_cast<int64_t>(b.at(k, mt * cols + j));
          if (!fits_signed(sum, pw)) throw InternalError("ring_output: a partial exceeds PARTIAL_W");
          at(g, j, x) = sum;
        }
        owner_of(g, x) = x;
      }
    });
  };
  auto gather = [&](size_t e) {  // REUSE pairs copy their reference's slot; each position sums its G slots
    each_position(e, [&](int64_t p, int32_t tok, int64_t x, int64_t mt) {
      for (int g = 0; g < G; ++g) {
        const PairDecision& d = reuse.at(tok, g);
        const int64_t src = d.kind == PairKind::Compute ? p : scan.pos_of(d.ref);
        const int64_t from = x - (p - src);
        if (owner_of(g, from) != from)
          throw InternalError("ring slot read after it was overwritten: group " + std::to_string(g) +
                              ", position " + std::to_string(p) + " reads position " + std::to_string(src) +
                              " in a ring of " + std::to_string(depth) + " slots (chunk " +
                              std::to_string(shape.chunk) + ", lead " + std::to_string(shape.lead) + ")");
        if (d.kind != PairKind::Compute) {
          for (int64_t j = 0; j < cols; ++j) at(g, j, x) = at(g, j, from);
          owner_of(g, x) = x;
        }
      }
      if (steps[e].masked) return;  // run for its A's save only: a dropped block's outputs stay 0
      for (int64_t j = 0; j < cols && mt * cols + j < M; ++j) {
        int64_t sum = 0;
        for (int g = 0; g < G; ++g) sum += at(g, j, x);
        out.at(tok, mt * cols + j) = wrap_signed(sum, cfg.acc_w);
      }
    });
  };
  // Steps e - L + 1 .. e are written while step e - L is gathered: every write of them lands
  // before its reads (the order that lets the least ring be checked).
  const auto L = static_cast<size_t>(shape.lead);
  for (size_t e = 0; e < steps.size(); ++e) {
    passes(e);
    if (e >= L) gather(e - L);
  }
  for (size_t e = steps.size() > L ? steps.size() - L : 0; e < steps.size(); ++e) gather(e);
  return out;
}

}  // namespace kaleido::hw
