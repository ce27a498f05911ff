// Shared by the harnesses of the ring's front end and issue (ring_front_tb, ring_issue_tb,
// ring_passes_tb): chunks of random decisions, their rows following one another round the code
// memory, the detector's side that writes them (each position's groups in batches of 1 to LANES
// on random lanes, idle cycles between; garbage on every lane and port not in use), and the
// issue's beats.
#pragma once

#include <algorithm>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

#include "golden/random.hpp"
#include "unit_common.hpp"

namespace kld_ring {

using kld_unit::set_bits;

struct Chunk {
  int n = 0, row = 0, words = 0;
  std::vector<int> codes;               // position p, group g at p*G + g: 0 COMPUTE, 1..3 REUSE
  std::vector<std::vector<int>> lists;  // per group: the COMPUTE positions in order
};

// One cycle of the detector's side: lane l decides group groups[l] (or nothing when negative).
struct DecisionCycle {
  std::vector<int> groups, codes;
  int lane = 0, row = 0;
  bool commit = false;
};

struct ChunkStats {
  int64_t partial_words = 0, wraps = 0;
};

// `count` chunks of 1 to `chunk` positions (every fifth whole) for G groups at LIST_W `list_w`,
// each group's COMPUTE share drawn from none, few, half, most, all or any. Their rows follow one
// another round a memory of `words` words; the first chunk is whole and starts at the memory's
// last row, so its rows go round it.
inline std::vector<Chunk> make_chunks(kaleido::Rng& rng, size_t count, int G, int chunk, int list_w, int words,
                                      ChunkStats& stats) {
  std::vector<Chunk> chunks(count);
  const int shares[] = {0, 5, 50, 95, 100, -1};
  for (size_t q = 0, row = static_cast<size_t>(words - 1); q < chunks.size(); ++q) {
    Chunk& k = chunks[q];
    k.n = static_cast<int>(rng.range(1, chunk));
    if (q % 5 == 0) k.n = chunk;
    k.words = (k.n + list_w - 1) / list_w;
    k.row = static_cast<int>(row);
    stats.partial_words += k.n % list_w != 0;
    stats.wraps += k.row + k.words > words;
    row = (row + static_cast<size_t>(k.words)) % static_cast<size_t>(words);
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

}  // namespace kld_ring
