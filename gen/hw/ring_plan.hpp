// The window-bounded architecture of issue 10 (items 1 and 2), modelled before it is built:
// partial sums in a ring of slots per (group, column) instead of N-deep memories, the scan
// positions taken in chunks, decisions kept as 2-bit codes. Written from docs/hardware.md ("The
// window-bounded ring: a model before the RTL"), not from any RTL: it states what the RTL must do,
// sizes its memories and predicts its cycles on real decisions, so the RTL can later be held to it.
//
// Schedule, per m-tile mt and chunk c of at most C consecutive scan positions (a chunk never
// crosses a scan tile), in order (steps q; a block mask drops some):
//   passes(q):  k-tiles kt = 0..KT-1; segment s issues the chunk's COMPUTE positions of group
//               kt * SEGS + s (or as GroupPairing says); weights double-buffered (a pass's
//               ROWS-cycle load runs during the pass before it); an all-REUSE k-tile is skipped
//               with its load
//   gather(q):  once passes(q)'s partials have landed (LAT cycles after its last issue), GATHER_W
//               positions per cycle in scan order: a REUSE pair copies its reference's slot into its
//               own, then each position sums its G slots (ACC_W wrap-around) into an output word
//   detect(q):  first m-tile only, ceil(G / LANES) cycles per position; passes(q) wait for it
//   lists(q):   later m-tiles: the compute lists rebuilt from the codes, LIST_W positions a cycle,
//               into one of two list buffers (none for a chunk whose summary bit says it has no
//               COMPUTE pair); passes(q) wait for it
// The ring holds positions [start(q) - W, end(q + L)) while gather(q) overlaps passes(q + 1) ..
// passes(q + L) (L the lead, at least 1), so passes(q + L + 1) wait for gather(q) to end and a ring
// of W + (L + 1) C slots is never read after it was overwritten (W the reference window in scan
// positions). A longer lead lets compute-heavy chunks borrow from reuse-heavy ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "golden/config.hpp"
#include "golden/gemm.hpp"
#include "golden/reuse.hpp"
#include "hw/hw_config.hpp"
#include "hw/sram_budget.hpp"

namespace kaleido::hw {

// The reference window in scan positions that `cfg` applies (its window depth, or what its scan
// order needs).
int64_t ring_window(const ReuseConfig& cfg);
// How the scan positions are cut: C positions per chunk, passes at most L chunks ahead of the gather;
// the list builder of later m-tiles reads LIST_W positions' codes a cycle (one word of the codes
// memory; a compaction of LIST_W bits per group, far cheaper than a gather beat).
struct RingShape {
  int chunk = 0;
  int lead = 1;
  int list_w = 8;
};

// The chunks in scan order: runs of at most `chunk` consecutive scan positions [p0, p1) that never
// cross a scan tile (a query block of the mask); `block` numbers the tiles in scan order.
struct RingChunk {
  int64_t p0 = 0, p1 = 0;
  int block = 0;
};
std::vector<RingChunk> ring_chunks(const ReuseConfig& cfg, int chunk);

// The fewest slots per (group, column): W + (L + 1) C.
int64_t ring_depth(const ReuseConfig& cfg, const RingShape& shape);

// Words of the decision-code memory (kld_ring_codes): every chunk starts a word of LIST_W
// positions, so a chunk of n positions takes ceil(n / LIST_W) (N / LIST_W in all when the chunks
// are multiples of LIST_W).
int64_t ring_code_words(const ReuseConfig& cfg, const RingShape& shape);

// Why the built merge (kld_ring_merge, its ring banked by gather lane) cannot take this plan, or ""
// when it can: a beat is a whole row of GATHER_W slots, so the scan tiles' widths (the edge tiles'
// too) and the chunk must be multiples of GATHER_W. (The model prices no row padding, so a plan
// that would need it is refused rather than built.)
std::string ring_rtl_misfit(const ReuseConfig& cfg, const RingShape& shape, int gather_w);

// The memories of the ring architecture for workload `cfg` on array `hw` (ROWS, COLS, GROUP_W,
// DATA_W; the MAX_* fields are not used: the memories are sized for cfg), as SramRole rows whose
// formulas name N, K, G, W and C.
std::vector<SramRole> ring_storage(const HwConfig& hw, const ReuseConfig& cfg, const RingShape& shape);

// Block-sparse attention on the ring (issue 10 item 6): query blocks are the scan tiles (every
// frame of one spatial tile: contiguous in scan order, and no reference leaves its tile, so reuse
// stays inside a kept block; the whole frame is one block without tiles), key blocks `key_block`
// output columns (a whole number of m-tiles). A dropped (query block, key block) is neither issued
// nor gathered, and its outputs are 0.
struct RingMask {
  int key_block = 0;
  std::vector<uint8_t> keep;  // [query block * ring_key_blocks + key block]: 1 computed, 0 dropped
};
int ring_query_blocks(const ReuseConfig& cfg);
int ring_key_blocks(const ReuseConfig& cfg, const RingMask& mask);

struct RingCycles {
  int64_t total = 0;          // first cycle to the last output word
  int64_t issue = 0;          // cycles of pass issue (the longest segment of each pass)
  int64_t weight_wait = 0;    // pass-engine cycles waiting for a pass's weights (passes shorter than ROWS)
  int64_t detect_wait = 0;    // pass-engine cycles waiting for the detector (first m-tile)
  int64_t list_wait = 0;      // ... for the list builder (later m-tiles: lists rebuilt from the codes)
  int64_t ring_wait = 0;      // pass-engine cycles waiting for the gather to free ring slots
  int64_t gather_beats = 0;   // gather cycles (output beats)
  int64_t tail = 0;           // after the last pass: its landing and the last chunk's gather
  int64_t chunks = 0;         // chunks per m-tile (C positions at most, never across a scan tile)
  int64_t steps = 0;          // (m-tile, chunk) pairs executed: all of them but those a mask drops
};

// How the chunk's groups meet the array's SEGS segments. KTile and ByCount run the segments in
// lock-step passes of SEGS groups (a pass lasts as long as its longest list, the next pass's ROWS
// rows of weights load meanwhile): the k-tile's own groups (channels kt*ROWS .. kt*ROWS + ROWS - 1),
// or the groups sorted by their COMPUTE count, so that long lists share passes with long ones (the
// least sum of the passes' maxima). Independent: each segment loads its own GROUP_W rows of weights
// and runs the groups it is given back to back, longest list first to the segment free first, so a
// segment does not idle while another's group computes (RingCycles::weight_wait then counts the
// chunk's cycles beyond its busiest segment's issue: weight loads and what the assignment leaves).
enum class GroupPairing { KTile, ByCount, Independent };

// Dense mode (`decisions` == nullptr: every pair computes, no detection) or reuse mode with the
// golden model's decisions (token-major, as run_reuse gives them).
RingCycles ring_cycles(const HwConfig& hw, const ReuseConfig& cfg, const std::vector<PairDecision>* decisions,
                       const RingShape& shape, GroupPairing pairing = GroupPairing::KTile,
                       const RingMask* mask = nullptr);

// The output as the ring forms it: every slot PARTIAL_W bits, a REUSE pair resolved by copying its
// reference's slot (never its root's: the root may have left the ring). Throws InternalError when a
// slot is read after another position overwrote it (a ring shallower than ring_depth() can).
WideMatrix ring_output(const HwConfig& hw, const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b,
                       const IntReuse& reuse, const RingShape& shape, int64_t depth,
                       const RingMask* mask = nullptr);

}  // namespace kaleido::hw
