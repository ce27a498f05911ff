// Shared by the harnesses of the ring's front end and issue (ring_front_tb, ring_issue_tb,
// ring_passes_tb): chunks of random decisions, their rows following one another round the code
// memory, the detector's side that writes them (each position's groups in batches of 1 to LANES
// on random lanes, idle cycles between; garbage on every lane and port not in use), the issue's
// beats and the gather's walk of the walk buffer.
#pragma once

#include <algorithm>
#include <deque>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "golden/config.hpp"
#include "golden/random.hpp"
#include "golden/scan.hpp"
#include "hw/blocks.hpp"
#include "hw/ring_plan.hpp"
#include "unit_common.hpp"

namespace kld_ring {

using kld_unit::set_bits;

struct Chunk {
  int n = 0, row = 0, words = 0;
  std::vector<int> codes;               // position p, group g at p*G + g: 0 COMPUTE, 1..3 REUSE
  std::vector<std::vector<int>> lists;  // per group: the COMPUTE positions in order
};

// A chunk of a run as the model cuts it (hw::ring_chunks, from golden/scan.hpp's ScanOrder, not
// from the RTL), with what kld_ring_chunks offers for it: its code row (the words of the m-tile's
// chunks before it, a chunk starting a word), words, last word's lanes, positions, ring row (the
// run's positions before it / GATHER_W, mod the ring's rows), its tile's h and t distances in rows
// (from the tile of its first position, checked against ScanOrder's references inside the chunk),
// its m-tile, whether it is the run's last (of the scan, kept or not) and whether it ends its tile;
// whether a block mask keeps it (the ring rows count kept chunks only).
struct Step {
  int64_t row, words, lanes, len, slot_row, off_h, off_t, mt;
  bool last, ends_tile;
  int64_t p0;        // its first scan position
  int block = 0;     // its tile's number in scan order (the mask's query block)
  size_t index = 0;  // its number among the m-tile's chunks
  bool kept = true;     // offered: its pair kept, or the first m-tile
  bool masked = false;  // offered although the mask drops its pair (the first m-tile's)
};

// A block mask as kld_ring_chunks reads it: key blocks of `kb_mts` m-tiles, keep[block * kbs + kb].
struct BlockMask {
  bool enabled = false;
  int kb_mts = 1, kbs = 1;
  std::vector<uint8_t> keep;
  bool keeps(int block, int64_t mt) const {
    return !enabled || keep[static_cast<size_t>(block * kbs) + static_cast<size_t>(mt / kb_mts)] != 0;
  }
};

// A random mask for `blocks` tiles and `mtiles` m-tiles: key blocks of 1 to `mtiles` m-tiles, each
// pair dropped one time in three, and the first tile dropped in every key block (a whole tile's
// chunks cut and not offered, or offered masked in the first m-tile).
inline BlockMask random_mask(kaleido::Rng& rng, int blocks, int mtiles) {
  BlockMask mask;
  mask.enabled = true;
  mask.kb_mts = static_cast<int>(rng.range(1, mtiles));
  mask.kbs = (mtiles + mask.kb_mts - 1) / mask.kb_mts;
  mask.keep.assign(static_cast<size_t>(blocks * mask.kbs), 1);
  for (size_t i = 0; i < mask.keep.size(); ++i)
    mask.keep[i] = i < static_cast<size_t>(mask.kbs) ? 0 : rng.range(0, 2) != 0;
  return mask;
}

// The mask memory's registered read: the keep bit of the pair kld_ring_chunks names (mask_tile_o,
// mask_kb_o) at an edge, for mask_keep_i in the cycle after; garbage outside the mask or without one.
inline uint64_t mask_read(const BlockMask& mask, kaleido::Rng& rng, uint64_t tile, uint64_t kb) {
  const size_t at = static_cast<size_t>(tile) * static_cast<size_t>(mask.kbs) + static_cast<size_t>(kb);
  if (!mask.enabled || kb >= static_cast<uint64_t>(mask.kbs) || at >= mask.keep.size()) return rng.next() & 1;
  return mask.keep[at];
}

// Drives a run's inputs of kld_ring_chunks (as kld_ring_engine passes them on): its grid, tiles,
// m-tiles and block mask (`kb_mts` the key blocks' m-tiles, garbage without a mask).
template <class Model>
void drive_run(Model& dut, const kaleido::ReuseConfig& cfg, int mtiles, const BlockMask& mask, uint64_t kb_mts) {
  dut.grid_t_i = static_cast<uint32_t>(cfg.grid.t);
  dut.grid_h_i = static_cast<uint32_t>(cfg.grid.h);
  dut.grid_w_i = static_cast<uint32_t>(cfg.grid.w);
  dut.tile_h_i = static_cast<uint32_t>(cfg.tile_h);
  dut.tile_w_i = static_cast<uint32_t>(cfg.tile_w);
  dut.mtiles_i = static_cast<uint32_t>(mtiles);
  dut.mask_en_i = mask.enabled;
  dut.kb_mts_i = static_cast<uint32_t>(mask.enabled ? static_cast<uint64_t>(mask.kb_mts) : kb_mts);
}

// The run's steps: every chunk of the scan of `cfg`, once per m-tile, at LIST_W `list_w`, GATHER_W
// `gather_w` and a ring of `rows` rows, each kept or dropped by `mask` (in the first m-tile kept
// and marked masked: its A is saved for the later m-tiles). Throws if the tile
// geometry disagrees with ScanOrder, a chunk does not start a ring row or an m-tile's words exceed
// `words`.
inline std::vector<Step> run_steps(const kaleido::ReuseConfig& cfg, int chunk, int list_w, int gather_w, int rows,
                                   int mtiles, int words, const BlockMask& mask = {}) {
  const kaleido::ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
  const int th = cfg.tile_h_eff(), tw = cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w;
  const std::vector<kaleido::hw::RingChunk> chunks = kaleido::hw::ring_chunks(cfg, chunk);
  std::vector<Step> steps;
  int64_t base = 0;
  for (int mt = 0; mt < mtiles; ++mt) {
    int64_t row = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      const kaleido::hw::RingChunk& ch = chunks[i];
      const int64_t n = ch.p1 - ch.p0, nw = (n + list_w - 1) / list_w, last_lanes = n - (nw - 1) * list_w;
      const kaleido::TokenCoord at = scan.coord(scan.token_at(ch.p0));
      const int h0 = at.h / th * th, w0 = at.w / tw * tw;
      const int tile_rows = std::min(th, cfg.grid.h - h0), tile_cols = std::min(tw, cfg.grid.w - w0);
      for (int64_t p = ch.p0; p < ch.p1; ++p) {
        const int32_t tok = scan.token_at(p);
        const int32_t h_ref = scan.reference(tok, kaleido::Axis::H), t_ref = scan.reference(tok, kaleido::Axis::T);
        if ((h_ref >= 0 && p - scan.pos_of(h_ref) != tile_cols) ||
            (t_ref >= 0 && p - scan.pos_of(t_ref) != tile_rows * tile_cols))
          throw std::runtime_error("the harness's tile geometry disagrees with ScanOrder at position " +
                                   std::to_string(p));
      }
      if (base % gather_w != 0) throw std::runtime_error("a chunk that does not start a ring row");
      const bool ends_tile = i + 1 == chunks.size() || chunks[i + 1].block != ch.block;
      const bool dropped = !mask.keeps(ch.block, mt), kept = !dropped || mt == 0;
      steps.push_back({row, nw, (int64_t{1} << last_lanes) - 1, n, base / gather_w % rows, tile_cols / gather_w,
                       tile_rows * tile_cols / gather_w, mt, false, ends_tile, ch.p0, ch.block, i, kept,
                       dropped && mt == 0});
      row += nw;
      if (kept) base += n;
    }
    if (row > words)
      throw std::runtime_error("the case's code memory (" + std::to_string(words) + " words) is smaller than a run's " +
                               std::to_string(row));
  }
  steps.back().last = true;
  return steps;
}

// One cycle of the detector's side: lane l decides group groups[l] (or nothing when negative).
struct DecisionCycle {
  std::vector<int> groups, codes;
  int lane = 0, row = 0;
  bool commit = false;
};

struct ChunkStats {
  int64_t partial_words = 0, wraps = 0;
};

// Random decisions for the k.n positions of `k` and G groups, each group's COMPUTE share drawn
// from none, few, half, most, all or any; its lists from them.
inline void random_codes(kaleido::Rng& rng, Chunk& k, int G) {
  const int shares[] = {0, 5, 50, 95, 100, -1};
  k.codes.assign(static_cast<size_t>(k.n * G), 0);
  k.lists.assign(static_cast<size_t>(G), {});
  for (int g = 0; g < G; ++g) {
    int share = shares[rng.range(0, 5)];
    if (share < 0) share = static_cast<int>(rng.range(0, 100));
    for (int p = 0; p < k.n; ++p) {
      const bool compute = rng.range(0, 99) < share;
      k.codes[static_cast<size_t>(p * G + g)] = compute ? 0 : static_cast<int>(rng.range(1, 3));
      if (compute) k.lists[static_cast<size_t>(g)].push_back(p);
    }
  }
}

// `count` chunks of 1 to `chunk` positions (every fifth whole) for G groups at LIST_W `list_w`,
// each group's COMPUTE share drawn from none, few, half, most, all or any. Their rows follow one
// another round a memory of `words` words; the first chunk is whole and starts at the memory's
// last row, so its rows go round it.
inline std::vector<Chunk> make_chunks(kaleido::Rng& rng, size_t count, int G, int chunk, int list_w, int words,
                                      ChunkStats& stats) {
  std::vector<Chunk> chunks(count);
  for (size_t q = 0, row = static_cast<size_t>(words - 1); q < chunks.size(); ++q) {
    Chunk& k = chunks[q];
    k.n = static_cast<int>(rng.range(1, chunk));
    if (q % 5 == 0) k.n = chunk;
    k.words = (k.n + list_w - 1) / list_w;
    k.row = static_cast<int>(row);
    stats.partial_words += k.n % list_w != 0;
    stats.wraps += k.row + k.words > words;
    row = (row + static_cast<size_t>(k.words)) % static_cast<size_t>(words);
    random_codes(rng, k, G);
  }
  return chunks;
}

// A chunk's decisions as the detector's side gives them, LANES lanes, into a memory of `words`.
inline std::deque<DecisionCycle> decisions(kaleido::Rng& rng, const Chunk& k, int G, int lanes, int list_w,
                                           int words) {
  std::deque<DecisionCycle> out;
  const auto L = static_cast<size_t>(lanes);
  for (int p = 0; p < k.n; ++p) {
    std::vector<int> order(static_cast<size_t>(G));
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next() % i]);
    for (size_t i = 0; i < order.size();) {
      if (rng.range(0, 3) == 0) out.push_back({std::vector<int>(L, -1), {}, 0, 0, false});
      DecisionCycle d{std::vector<int>(L, -1), std::vector<int>(L, 0), p % list_w, (k.row + p / list_w) % words, false};
      std::vector<int> lane_order(L);
      std::iota(lane_order.begin(), lane_order.end(), 0);
      for (size_t j = lane_order.size(); j > 1; --j) std::swap(lane_order[j - 1], lane_order[rng.next() % j]);
      const size_t batch = std::min(order.size() - i, static_cast<size_t>(rng.range(1, lanes)));
      for (size_t b = 0; b < batch; ++b, ++i) {
        const auto l = static_cast<size_t>(lane_order[b]);
        d.groups[l] = order[i];
        d.codes[l] = k.codes[static_cast<size_t>(p * G + order[i])];
      }
      d.commit = i == order.size() && (p % list_w == list_w - 1 || p == k.n - 1);
      out.push_back(d);
    }
  }
  return out;
}

// A cycle of no decisions.
inline DecisionCycle idle_decisions(int lanes) {
  return {std::vector<int>(static_cast<size_t>(lanes), -1), {}, 0, 0, false};
}

// Drives the dec_* ports of `dut` (kld_ring_codes' as kld_ring_front and kld_ring_passes pass
// them on) with one cycle's decisions; lanes and ports not in use carry garbage.
template <class Model>
void drive_decisions(Model& dut, kaleido::Rng& rng, const DecisionCycle& d, int G, int lanes, int list_w, int words) {
  const int gb = kaleido::clog2(G);
  uint64_t valid = 0;
  for (int l = 0; l < lanes; ++l) {
    const bool v = d.groups[static_cast<size_t>(l)] >= 0;
    const int code = v ? d.codes[static_cast<size_t>(l)] : static_cast<int>(rng.next() & 3);
    valid |= static_cast<uint64_t>(v) << l;
    set_bits(dut.dec_group_i, l * gb, gb, v ? static_cast<uint64_t>(d.groups[static_cast<size_t>(l)]) : rng.next());
    set_bits(dut.dec_reuse_i, l, 1, code != 0 ? 1 : (v ? 0 : rng.next() & 1));
    set_bits(dut.dec_axis_i, 2 * l, 2, code != 0 ? static_cast<uint64_t>(code - 1) : rng.next() & 3);
  }
  set_bits(dut.dec_valid_i, 0, lanes, valid);
  dut.dec_lane_i = list_w > 1 ? static_cast<uint64_t>(valid != 0 ? d.lane : static_cast<int>(rng.next() % list_w)) : 0;
  dut.dec_row_i = valid != 0 ? d.row : static_cast<int>(rng.next() % words);
  dut.dec_commit_i = d.commit;
}

// A beat of the ring's issue (kld_ring_issue, kld_ring_passes) as their harnesses expect it.
struct IssueBeat {
  uint64_t valid = 0;    // segments that issue
  std::vector<int> pos;  // per segment: the chunk position, -1 where none
  int kt = 0, wbuf = 0;  // the pass's k-tile and weight buffer
  bool pass_last = false, chunk_last = false;
  int64_t chunk = 0;
};

// Appends the issue's beats of chunk `k` (number `index` in the run) for the run's first `groups`
// groups on `segs` segments: pass kt has max(1, longest list of groups kt*segs + s) beats, beat i
// carrying for segment s entry i of its group's list when i is inside it. `pass` counts the passes
// of the run before (a pass's weight buffer is its parity).
inline void append_issue_beats(std::deque<IssueBeat>& out, const Chunk& k, int groups, int segs, int64_t& pass,
                               int64_t index) {
  const int kts = (groups + segs - 1) / segs;
  for (int kt = 0; kt < kts; ++kt, ++pass) {
    size_t reads = 1;
    for (int s = 0; s < segs && kt * segs + s < groups; ++s)
      reads = std::max(reads, k.lists[static_cast<size_t>(kt * segs + s)].size());
    for (size_t i = 0; i < reads; ++i) {
      IssueBeat b{0,         std::vector<int>(static_cast<size_t>(segs), -1), kt, static_cast<int>(pass & 1),
                  i + 1 == reads, i + 1 == reads && kt == kts - 1,           index};
      for (int s = 0; s < segs && kt * segs + s < groups; ++s) {
        const auto& l = k.lists[static_cast<size_t>(kt * segs + s)];
        if (i < l.size()) {
          b.valid |= 1ull << s;
          b.pos[static_cast<size_t>(s)] = l[i];
        }
      }
      out.push_back(b);
    }
  }
}

// Compares the beat out after `edge` with `want` (positions only where a segment issues).
template <class Model>
void check_beat(const Model& dut, kld_unit::Checker& chk, const IssueBeat& want, int segs, int entry_w, int64_t edge) {
  const std::string at = "chunk " + std::to_string(want.chunk) + " k-tile " + std::to_string(want.kt) + " at edge " +
                         std::to_string(edge) + ": ";
  chk.equal(static_cast<int64_t>(dut.beat_valid_o), static_cast<int64_t>(want.valid), at + "beat_valid_o");
  for (int s = 0; s < segs; ++s)
    if (want.pos[static_cast<size_t>(s)] >= 0)
      chk.equal(static_cast<int64_t>(kld_unit::get_bits(dut.beat_pos_o, s * entry_w, entry_w)),
                want.pos[static_cast<size_t>(s)], at + "segment " + std::to_string(s) + " position");
  chk.equal(dut.beat_kt_o, want.kt, at + "beat_kt_o");
  chk.equal(dut.beat_wbuf_o, want.wbuf, at + "beat_wbuf_o (the pass's parity)");
  chk.equal(dut.beat_pass_last_o, want.pass_last, at + "beat_pass_last_o");
  chk.equal(dut.beat_chunk_last_o, want.chunk_last, at + "beat_chunk_last_o");
}

// The gather's walk of the walk buffer (kld_ring_front's walk_row_i / walk_code_o, passed on by
// kld_ring_passes), played on the chunks it is given in order: chunk n's words are read from rows
// (n mod kWalkSlots) * words_per_chunk + i, in a random order, at a pace drawn per chunk (a read
// every cycle, or one in 2, 8 or 32 on average; one in 32 for every other run of eight chunks, so
// that builds wait for their slots), and each read is checked `edges` edges later against the
// chunk's codes (lane i, group g at (i*G + g)*2; the empty lanes of a partial word read COMPUTE).
// Between reads the row is garbage.
struct WalkReader {
  const std::vector<Chunk>* chunks = nullptr;
  int G = 0, list_w = 0, words_per_chunk = 0, slots = 0, edges = 0, rows = 0;
  std::deque<int64_t> ready;  // chunks that may be walked, in order
  int64_t walking = -1;       // the chunk being walked
  int64_t walked = 0;         // chunks whose every word has been read
  int64_t words_checked = 0;
  int pace = 1;
  std::vector<int> todo;                                        // words of `walking` still to read
  std::deque<std::pair<int, std::pair<int64_t, int>>> pending;  // edges left, {chunk, word}

  // The walk of kld_ring_front's walk buffer, for chunks of up to `chunk` positions at `list_w`.
  static WalkReader of_front(const std::vector<Chunk>* chunks, int G, int chunk, int list_w) {
    using kaleido::hw::RingFrontBlock;
    const int rows = RingFrontBlock::walk_words(chunk, list_w);
    return {chunks,
            G,
            list_w,
            kaleido::hw::RingListsBlock::rows(chunk, list_w),
            RingFrontBlock::kWalkSlots,
            kaleido::hw::RingCodesBlock::read_edges(rows),
            rows};
  }

  // Drives walk_row_i for the coming edge; true when the read is its chunk's last (walked at
  // that edge).
  template <class Model>
  bool drive(Model& dut, kaleido::Rng& rng) {
    if (walking < 0 && !ready.empty()) {
      walking = ready.front();
      ready.pop_front();
      todo.resize(static_cast<size_t>((*chunks)[static_cast<size_t>(walking)].words));
      std::iota(todo.begin(), todo.end(), 0);
      for (size_t i = todo.size(); i > 1; --i) std::swap(todo[i - 1], todo[rng.next() % i]);
      // Chunks 8 to 15, 24 to 31, ... are walked slowly, so whatever the seed, builds catch up
      // with the walk and wait for their slots; the others at a random pace.
      const int paces[] = {1, 2, 8, 32};
      pace = (walking / 8) % 2 == 1 ? 32 : paces[rng.range(0, 3)];
    }
    if (walking < 0 || rng.range(0, pace - 1) != 0) {
      dut.walk_row_i = static_cast<uint32_t>(rng.next() % static_cast<uint64_t>(rows));
      return false;
    }
    const int word = todo.back();
    todo.pop_back();
    dut.walk_row_i = static_cast<uint32_t>((walking % slots) * words_per_chunk + word);
    pending.push_back({edges, {walking, word}});
    if (!todo.empty()) return false;
    walking = -1;
    ++walked;
    return true;
  }

  // After an edge: the reads due now, compared.
  template <class Model>
  void check(const Model& dut, kld_unit::Checker& chk, int64_t edge) {
    for (auto& p : pending) --p.first;
    while (!pending.empty() && pending.front().first == 0) {
      const auto [chunk, word] = pending.front().second;
      pending.pop_front();
      const Chunk& k = (*chunks)[static_cast<size_t>(chunk)];
      for (int i = 0; i < list_w; ++i) {
        const int p = word * list_w + i;
        for (int g = 0; g < G; ++g)
          chk.equal(static_cast<int64_t>(kld_unit::get_bits(dut.walk_code_o, (i * G + g) * 2, 2)),
                    p < k.n ? k.codes[static_cast<size_t>(p * G + g)] : 0,
                    "walk buffer: chunk " + std::to_string(chunk) + " word " + std::to_string(word) + " lane " +
                        std::to_string(i) + " group " + std::to_string(g) + " after edge " + std::to_string(edge));
      }
      ++words_checked;
    }
  }
};

}  // namespace kld_ring
