// Block test of kld_ring_merge: the scan of a MAX_T x MAX_H x MAX_W grid in tiles of
// tile_h x tile_w (the job's; edge tiles narrower), each tile row padded to whole rows of the ring
// (a multiple of GATHER_W positions; the padding is never valid), cut into chunks of at most
// `chunk` positions (a multiple of GATHER_W) that never cross a tile, run as steps (every chunk, once per m-tile) in the order of
// hw::ring_output: the taps of step e land (random order, gaps, several segments and columns in
// a cycle) while step e - 1 is gathered (beats of GATHER_W positions of one chunk, gather_en_i
// low at random), and step e + 1 starts once that gather has left the ring's read stages.
// Position x of the run (padding included) has slot x mod RING_DEPTH, RING_DEPTH at least padded
// tile area + 2 chunk, the least ring for that order (hw::ring_depth at lead 1). Codes are random (COMPUTE, or REUSE of the w,
// h or t neighbour inside the tile: long chains, references inside a beat and across beats),
// partials random per m-tile.
//
// The expectation does not use a ring: each pair's partial is its root's, found by following
// the references through the whole grid, and an output is the wrapped sum of the valid groups'
// partials, compared lane by lane whenever out_valid_o shows a position (and out_valid_o itself
// in every cycle).
#include <algorithm>
#include <array>
#include <deque>
#include <optional>

#include "Vkld_ring_merge.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingMergeBlock;
using namespace kld_unit;

struct Position {
  int tile;
  int t, h, w;  // inside the tile
  bool pad;     // past the tile's width: fills the row of the ring
};

struct Beat {
  int64_t step;
  int64_t first;  // index of lane 0's position in the chunk's position list
  uint64_t mask;  // valid lanes
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int segs = c.segs(), cols = c.cols, G = c.max_groups(), gws = c.gather_w, pw = c.partial_w();
  const int sw = c.out_sum_w(), aw = c.acc_w;
  const int depth = job.raw.at("ring_depth").get<int>(), rows = RingMergeBlock::bank_rows(c, depth);
  const int rw = RingMergeBlock::row_w(c, depth), bw = RingMergeBlock::bank_w(c);
  const int tagw = RingMergeBlock::tag_width(c, depth), ktw = kaleido::vlog::clog2(c.max_kt());
  const int tile_h = job.raw.at("tile_h").get<int>(), tile_w = job.raw.at("tile_w").get<int>();
  const int chunk = job.raw.at("chunk").get<int>();
  const int64_t mtiles = job.iterations;
  const int padded_w = (tile_w + gws - 1) / gws * gws;
  if (depth % gws != 0 || chunk % gws != 0)
    throw std::runtime_error("ring_depth and chunk must be multiples of GATHER_W (whole rows of the ring)");
  if (depth < tile_h * padded_w + 2 * chunk)
    throw std::runtime_error("ring_depth below padded tile area + 2 chunk: the order of this test needs it");
  Vkld_ring_merge dut;
  Clock<Vkld_ring_merge> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  // The scan: tile by tile, inside a tile frame by frame, row by row (rows padded).
  std::vector<Position> pos;
  std::vector<std::array<int, 3>> tile_dims;  // h, padded w, padded area of each tile
  int64_t real_positions = 0;
  for (int h0 = 0; h0 < c.max_h; h0 += tile_h)
    for (int w0 = 0; w0 < c.max_w; w0 += tile_w) {
      const int th = std::min(tile_h, c.max_h - h0), tw = std::min(tile_w, c.max_w - w0);
      const int twp = (tw + gws - 1) / gws * gws;
      const int id = static_cast<int>(tile_dims.size());
      tile_dims.push_back({th, twp, th * twp});
      for (int t = 0; t < c.max_t; ++t)
        for (int h = 0; h < th; ++h)
          for (int w = 0; w < twp; ++w) pos.push_back({id, t, h, w, w >= tw});
      real_positions += static_cast<int64_t>(c.max_t) * th * tw;
    }
  const auto P = static_cast<int64_t>(pos.size());
  // Codes: each pair of a position and a group; REUSE only of a neighbour inside the tile.
  const int reuse_percent = static_cast<int>(rng.range(40, 90));
  std::vector<uint64_t> code(static_cast<size_t>(P * G), RingMergeBlock::kCompute);
  auto dist = [&](int64_t p, uint64_t k) -> int64_t {
    const auto& d = tile_dims[static_cast<size_t>(pos[static_cast<size_t>(p)].tile)];
    return k == RingMergeBlock::kRefW ? 1 : k == RingMergeBlock::kRefH ? d[1] : d[2];
  };
  int64_t reuse_pairs = 0, inbeat_refs = 0, prev_beat_refs = 0, two_back_refs = 0;
  for (int64_t p = 0; p < P; ++p)
    for (int g = 0; g < G; ++g) {
      const Position& q = pos[static_cast<size_t>(p)];
      if (q.pad) continue;
      std::vector<uint64_t> allowed;
      if (q.w > 0) allowed.push_back(RingMergeBlock::kRefW);
      if (q.h > 0) allowed.push_back(RingMergeBlock::kRefH);
      if (q.t > 0) allowed.insert(allowed.end(), 2, RingMergeBlock::kRefT);  // long t-chains
      if (allowed.empty() || rng.range(0, 99) >= reuse_percent) continue;
      code[static_cast<size_t>(p * G + g)] = allowed[static_cast<size_t>(rng.range(0, static_cast<int64_t>(allowed.size()) - 1))];
      ++reuse_pairs;
    }
  auto root_of = [&](int64_t p, int g) {
    while (code[static_cast<size_t>(p * G + g)] != RingMergeBlock::kCompute) p -= dist(p, code[static_cast<size_t>(p * G + g)]);
    return p;
  };
  // Chunks: runs of at most `chunk` positions inside one tile.
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t p = 0; p < P;) {
    int64_t e = p;
    while (e < P && e - p < chunk && pos[static_cast<size_t>(e)].tile == pos[static_cast<size_t>(p)].tile) ++e;
    chunks.emplace_back(p, e);
    p = e;
  }
  const auto steps = static_cast<int64_t>(chunks.size()) * mtiles;
  std::vector<int64_t> base(static_cast<size_t>(steps) + 1, 0);  // run index of each step's first position
  for (int64_t e = 0; e < steps; ++e) {
    const auto& ch = chunks[static_cast<size_t>(e % static_cast<int64_t>(chunks.size()))];
    base[static_cast<size_t>(e) + 1] = base[static_cast<size_t>(e)] + (ch.second - ch.first);
  }
  // Partials of every m-tile's COMPUTE pairs, PARTIAL_W-bit signed.
  auto pidx = [&](int64_t mt, int64_t p, int g, int col) {
    return static_cast<size_t>(((mt * P + p) * G + g) * cols + col);
  };
  std::vector<int64_t> partial(static_cast<size_t>(mtiles * P * G * cols), 0);
  for (auto& v : partial) v = operand(rng, pw);
  uint64_t group_valid = 1;
  for (int g = 1; g < G; ++g) group_valid |= static_cast<uint64_t>(rng.range(0, 3) != 0) << g;
  auto expected = [&](int64_t mt, int64_t p, int col) {
    int64_t sum = 0;
    for (int g = 0; g < G; ++g)
      if ((group_valid >> g) & 1) sum += partial[pidx(mt, root_of(p, g), g, col)];
    return kaleido::wrap_signed(sum, sw);
  };

  dut.rst_ni = 0;
  dut.gather_en_i = 0;
  set_bits(dut.gather_valid_i, 0, gws, 0);
  set_bits(dut.tap_valid_i, 0, segs * cols, 0);
  set_bits(dut.group_valid_i, 0, G, group_valid);
  clock.settle();
  clock.edge();
  dut.rst_ni = 1;

  // The gather stages as the harness sees them: a, b, s, out (advanced by gather_en_i).
  std::optional<Beat> entering, stage_a, stage_b, stage_s, stage_out;
  int64_t compared_positions = 0, beats = 0, stall_cycles = 0;
  auto check_out = [&] {
    clock.settle();
    const std::string at = "cycle " + std::to_string(clock.cycle());
    const uint64_t mask = stage_out ? stage_out->mask : 0;
    chk.equal(static_cast<int64_t>(get_bits(dut.out_valid_o, 0, gws)), static_cast<int64_t>(mask), at + ": out_valid_o");
    if (!stage_out) return;
    const auto nch = static_cast<int64_t>(chunks.size());
    const int64_t mt = stage_out->step / nch;
    const auto& ch = chunks[static_cast<size_t>(stage_out->step % nch)];
    for (int j = 0; j < gws; ++j) {
      if (!((mask >> j) & 1)) continue;
      const int64_t p = ch.first + stage_out->first + j;
      for (int col = 0; col < cols; ++col)
        chk.equal(sign_extend(get_bits(dut.out_data_o, (j * cols + col) * aw, aw), aw), expected(mt, p, col),
                  at + ": position " + std::to_string(p) + " m-tile " + std::to_string(mt) + " lane " +
                      std::to_string(j) + " column " + std::to_string(col));
    }
  };
  // One cycle: drive the taps (and random data where none is valid), then the edge.
  struct Tap {
    int64_t slot;
    int g;
    int64_t value;
  };
  std::vector<std::deque<Tap>> pending(static_cast<size_t>(segs * cols));
  auto cycle = [&](bool en) {
    for (int s = 0; s < segs; ++s)
      for (int col = 0; col < cols; ++col) {
        const int tap = s * cols + col;
        auto& q = pending[static_cast<size_t>(tap)];
        const bool go = !q.empty() && rng.range(0, 2) != 0;
        uint64_t tag = rng.next() & ((uint64_t{1} << tagw) - 1);
        uint64_t value = rng.next();
        if (go) {
          const auto slot = static_cast<uint64_t>(q.front().slot);
          tag = (slot / static_cast<uint64_t>(gws)) << bw | slot % static_cast<uint64_t>(gws) |
                (ktw > 0 ? static_cast<uint64_t>(q.front().g / segs) << (rw + bw) : 0);
          value = static_cast<uint64_t>(q.front().value);
          q.pop_front();
        }
        set_bits(dut.tap_valid_i, tap, 1, go);
        set_bits(dut.tap_tag_i, tap * tagw, tagw, tag);
        set_bits(dut.tap_psum_i, tap * pw, pw, value);
      }
    dut.gather_en_i = en;
    check_out();
    clock.edge();
    if (en) {
      if (stage_out) compared_positions += __builtin_popcountll(stage_out->mask);  // compared in every cycle shown
      stage_out = stage_s;
      stage_s = stage_b;
      stage_b = stage_a;
      stage_a = entering;
    } else {
      ++stall_cycles;
    }
    entering.reset();
  };
  auto taps_left = [&] {
    for (const auto& q : pending)
      if (!q.empty()) return true;
    return false;
  };
  // Queues the taps of step e: every COMPUTE pair, each column on its own.
  auto queue_taps = [&](int64_t e) {
    const auto nch = static_cast<int64_t>(chunks.size());
    const int64_t mt = e / nch;
    const auto& ch = chunks[static_cast<size_t>(e % nch)];
    std::vector<std::pair<int64_t, int>> pairs;
    for (int64_t p = ch.first; p < ch.second; ++p)
      for (int g = 0; g < G; ++g)
        if (!pos[static_cast<size_t>(p)].pad && code[static_cast<size_t>(p * G + g)] == RingMergeBlock::kCompute)
          pairs.emplace_back(p, g);
    for (size_t i = pairs.size(); i > 1; --i) std::swap(pairs[i - 1], pairs[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1))]);
    for (const auto& [p, g] : pairs)
      for (int col = 0; col < cols; ++col)
        pending[static_cast<size_t>((g % segs) * cols + col)].push_back(
            {(base[static_cast<size_t>(e)] + (p - ch.first)) % depth, g, partial[pidx(mt, p, g, col)]});
  };

  for (int64_t e = 0; e <= steps; ++e) {
    if (e < steps) queue_taps(e);
    int64_t next = 0;  // next position of step e - 1 to gather
    const int64_t len = e > 0 ? chunks[static_cast<size_t>((e - 1) % static_cast<int64_t>(chunks.size()))].second -
                                    chunks[static_cast<size_t>((e - 1) % static_cast<int64_t>(chunks.size()))].first
                              : 0;
    while (taps_left() || next < len) {
      const bool en = rng.range(0, 4) != 0;
      const int lanes = static_cast<int>(std::min<int64_t>(gws, len - next));
      const auto& ch = chunks[static_cast<size_t>(e > 0 ? (e - 1) % static_cast<int64_t>(chunks.size()) : 0)];
      // Garbage codes and slots while no beat enters: gather_valid_i must keep them out.
      uint64_t row = rng.next() % static_cast<uint64_t>(rows), mask = 0;
      int64_t off_h = rng.range(1, rows - 1), off_t = rng.range(1, rows - 1);
      if (lanes > 0) {
        const int64_t p0 = ch.first + next;
        const int64_t slot = (base[static_cast<size_t>(e - 1)] + next) % depth;
        if (lanes != gws || slot % gws != 0) throw std::runtime_error("a beat that is not a whole row of the ring");
        row = static_cast<uint64_t>(slot / gws);
        const auto& d = tile_dims[static_cast<size_t>(pos[static_cast<size_t>(p0)].tile)];
        off_h = d[1] / gws;
        off_t = d[2] / gws;
        for (int j = 0; j < gws; ++j) mask |= static_cast<uint64_t>(!pos[static_cast<size_t>(p0 + j)].pad) << j;
      }
      set_bits(dut.gather_valid_i, 0, gws, mask);
      set_bits(dut.gather_row_i, 0, rw, row);
      set_bits(dut.ref_off_h_i, 0, rw, static_cast<uint64_t>(off_h));
      set_bits(dut.ref_off_t_i, 0, rw, static_cast<uint64_t>(off_t));
      for (int j = 0; j < gws; ++j)
        for (int g = 0; g < G; ++g) {
          uint64_t k = rng.next() & 3;
          if ((mask >> j) & 1) {
            const int64_t p = ch.first + next + j;
            k = code[static_cast<size_t>(p * G + g)];
            if (en && k == RingMergeBlock::kRefW) ++(j > 0 ? inbeat_refs : prev_beat_refs);
            // An h or t neighbour two rows back in the chunk: the copy into it may land at the
            // edge this beat's read does (the forward of the copy that read misses).
            if (en && (k == RingMergeBlock::kRefH || k == RingMergeBlock::kRefT) && dist(p, k) == 2 * gws &&
                p - dist(p, k) >= ch.first)
              ++two_back_refs;
          }
          set_bits(dut.gather_code_i, (j * G + g) * 2, 2, k);
        }
      if (en && lanes > 0) {
        entering = Beat{e - 1, next, mask};
        next += lanes;
        ++beats;
      }
      cycle(en);
    }
    // The gather of step e - 1 leaves the read stages before step e + 1's taps may land.
    set_bits(dut.gather_valid_i, 0, gws, 0);
    while (stage_a || stage_b) cycle(rng.range(0, 3) != 0);
  }
  while (stage_s || stage_out) cycle(true);
  check_out();
  if (compared_positions != real_positions * mtiles)
    chk.fail("positions compared " + std::to_string(compared_positions) + " != positions x m-tiles " +
             std::to_string(real_positions * mtiles));
  if (reuse_pairs == 0) chk.fail("no REUSE pair in the run");
  const bool wide_rows = std::any_of(tile_dims.begin(), tile_dims.end(), [&](const auto& d) { return d[1] > gws; });
  if (gws > 1 && tile_w > 1 && inbeat_refs == 0) chk.fail("no w reference inside a beat");
  if (wide_rows && prev_beat_refs == 0) chk.fail("no w reference to the beat before");
  const bool two_row_refs = chunk >= 3 * gws && std::any_of(tile_dims.begin(), tile_dims.end(), [&](const auto& d) {
    return (d[0] > 1 && d[1] == 2 * gws) || (c.max_t > 1 && d[2] == 2 * gws);
  });
  if (two_row_refs && two_back_refs == 0) chk.fail("no h or t reference two rows back inside a chunk");
  dut.final();
  return chk.finish("kld_ring_merge " + std::to_string(G) + " groups x " + std::to_string(cols) + " columns, GATHER_W " +
                    std::to_string(gws) + ", ring of " + std::to_string(depth) + " slots, tiles " +
                    std::to_string(tile_h) + "x" + std::to_string(tile_w) + ", chunks of " + std::to_string(chunk) +
                    ", " + std::to_string(real_positions) + " positions (" + std::to_string(P - real_positions) + " padding) x " + std::to_string(mtiles) + " m-tiles, " +
                    std::to_string(reuse_pairs) + " REUSE pairs, " + std::to_string(inbeat_refs) +
                    " w references inside a beat, " + std::to_string(prev_beat_refs) + " to the beat before, " + std::to_string(two_back_refs) + " h/t references two rows back, " + std::to_string(beats) + " beats, " + std::to_string(stall_cycles) +
                    " stalled cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
