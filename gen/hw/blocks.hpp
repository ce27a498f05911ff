// One generator per hardware block (docs/hardware.md). Each returns the
// block's Verilog module, built through the typed builder in gen/vlog; the
// bit-exact behaviour of the simple blocks lives next to their generators.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/hw_config.hpp"
#include "vlog/design.hpp"
#include "vlog/module.hpp"

namespace kaleido::hw {

// vec[idx * width +: width] for a genvar index, or vec itself when it holds a
// single element (Verilog cannot select bits of a scalar).
inline vlog::Expr element(const vlog::Expr& vec, const vlog::Expr& idx, int width = 1) {
  if (vec.width() == width) return vec;
  return width == 1 ? vec[idx] : vec.part(idx * width, width);
}

// Tile idx of `size` rows (or columns) is the last one below dim: idx*size + size >= dim,
// by multiplication only (no division in hardware).
inline vlog::Expr last_tile(const vlog::Expr& idx, int size, const vlog::Expr& dim) {
  return (vlog::zext(idx, dim.width()) * static_cast<int64_t>(size) + static_cast<int64_t>(size)) >= dim;
}

// q + inc (inc one bit) for an even-width counter, each half incremented apart: the high half by
// the low half's carry (inc and the low half all ones), found beside the low half's increment.
// The same sum as one add, without a carry chain across the whole width.
inline vlog::Expr split_increment(const vlog::Expr& q, const vlog::Expr& inc) {
  const int half = q.width() / 2;
  const vlog::Expr lo = q.slice(half - 1, 0), hi = q.slice(q.width() - 1, half);
  const vlog::Expr carry = inc && (lo == vlog::ones(half));
  return vlog::concat({hi + vlog::zext(carry, q.width() - half), lo + vlog::zext(inc, half)});
}

// Depth of the B memory: addressed by {row of B, m-tile}.
inline int b_memory_depth(const HwConfig& c) {
  return 1 << (vlog::clog2(c.max_kt() * c.rows) + vlog::clog2(c.max_mt()));
}
// Depth of the token-indexed memories (at least two words).
inline int token_memory_depth(const HwConfig& c) { return c.max_tokens() < 2 ? 2 : static_cast<int>(c.max_tokens()); }
// The partial memories hold two m-tiles when there can be more than one, so the
// gather of m-tile mt reads one bank while the passes of mt+1 write the other.
inline bool partials_banked(const HwConfig& c) { return c.max_mt() > 1; }
inline int partial_memory_depth(const HwConfig& c) {
  return (partials_banked(c) ? 2 : 1) * token_memory_depth(c);
}

// One cycle of kld_pe's inputs.
struct PeInputs {
  bool load = false, load_sel = false;  // shift w into buffer load_sel
  bool mac = false, sel = false;        // a valid activation, computed with buffer sel
  bool seg_start = false;
  int64_t a = 0, w = 0, psum = 0;
};

// kld_pe: weight-stationary signed MAC with two weight buffers (one loads
// while the other computes; the activation carries its buffer's select bit)
// and a segment-start bit that cuts the partial-sum chain.
struct PeBlock {
  static vlog::Module generate(const HwConfig& c);

  // Bit-exact behaviour, one clock edge at a time.
  struct Model {
    int data_w, psum_w, mul_pipe;  // psum_w: HwConfig::psum_w()
    int64_t w[2] = {0, 0}, a = 0, psum = 0, prod = 0;
    bool mac = false, sel = false, psum_valid = false, seg = false;
    void step(const PeInputs& in);
  };
};

// kld_array: ROWS x COLS PEs, per-segment input skew, weights from the top
// into the buffer load_sel_i, partial sums down, a tap (valid, tag, partial
// sum) at every segment end. The tag travels with the token: {bank, k-tile, token}
// (tag_width), so the passes of consecutive k-tiles, and of consecutive m-tiles, can overlap in
// the array; the bank (m-tile parity) only where the partials have two banks (kld_array).
struct ArrayBlock {
  static vlog::Module generate(const HwConfig& c, const vlog::Module& pe, const vlog::Module& load_reg, bool bank_tag,
                               const std::string& name);
  // kld_load_reg: one row's copy of the weight-load controls, a cycle after the loader.
  static vlog::Module generate_load_reg();
  // Bits of a tap tag: the bank (with `bank_tag`) above the k-tile (when there can be more than
  // one) above the token.
  static int tag_width(const HwConfig& c, bool bank_tag) {
    return c.token_w() + (c.max_kt() > 1 ? vlog::clog2(c.max_kt()) : 0) + (bank_tag ? 1 : 0);
  }
  // Cycles from issue to the tap of column c.
  static int latency(const HwConfig& c, int col) { return c.group_w + col + c.mul_pipe; }
};

// kld_sram_<depth>x<width>: behavioural memory, `writes` synchronous write ports and
// `reads` read ports, asynchronous or registered (_sync, a macro's read). Replaceable by a macro
// (see docs/hardware.md).
// An empty design of configuration `c` (validated): its file header names the generator and
// lists c's parameters, then `extra` (a block's own, e.g. RING_DEPTH).
vlog::Design empty_design(const HwConfig& c, const std::vector<std::pair<std::string, std::string>>& extra = {});

struct SramBlock {
  static std::string name(int depth, int width, int reads, int writes = 1, bool registered_read = false);
  static vlog::Module generate(const HwConfig& c, int depth, int width, int reads, int writes = 1,
                               bool registered_read = false);
  // The memory of this size in `d`, added the first time a block asks for it (a module per size).
  static const vlog::Module& add(vlog::Design& d, const HwConfig& c, int depth, int width, int reads, int writes = 1,
                                 bool registered_read = false);
};

}  // namespace kaleido::hw

namespace kaleido::hw {

// kld_detector_lane: the closed-loop reuse decisions of two groups in
// alternate cycles, with their windows of effective inputs and roots (golden
// model, DESIGN.md sec. 2). kld_detector: LANES lanes sharing the scan position.
// The detector's scan (kld_dispatcher's, kld_ring_detect's): the scan positions, tile by tile
// (tiles in raster order; inside a tile t, h, w), each with its token, window slot (position mod
// WIN_CAP) and references available in the tile and the window, and, a cycle ahead, the t and h
// references' window slots and whether they are at distance 1 or 2. Emitted into the module that
// holds it (its registers are that module's), so kld_dispatcher keeps its text.
struct ScanBlock {
  static int coord_w(const HwConfig& c);  // bits of a coordinate: origin + tile size
  struct Inputs {
    vlog::Expr clk, rst_n;
    vlog::Expr dim_t, dim_h, dim_w, tile_h, tile_w;  // ScanBlock::coord_w bits, held through a scan
    vlog::Expr win;                                  // window depth in positions (1..WIN_CAP)
    vlog::Expr clear;      // restart the scan at position 0 (only while it does not step)
    vlog::Expr step_next;  // move to the next position at the next cycle
    bool tokens = true;    // build the token index (Outputs::token, token_next; absent without)
  };
  struct Outputs {
    vlog::Expr token, token_next, slot, avail, ref_slot_next, ref_near_next, ref_two_next, last;
    vlog::Expr tile_last;  // the position is its tile's last (a step from it starts a tile)
  };
  static Outputs emit(vlog::Module& m, const HwConfig& c, const Inputs& in);
};

struct DetectorBlock {
  // kTop: kld_top's lanes (kld_detector, kld_detector_lane), whose window entries carry each Ahat's
  // root for the merge's root tables. kRing: kld_ring_detect's (kld_ring_detector,
  // kld_ring_detector_lane), without roots, since the ring resolves a REUSE pair through its codes;
  // with LANE_GROUPS 2 each lane keeps its own phase, so no net from the top reaches the window's
  // read address.
  enum class Variant { kTop, kRing };
  // A kld_detector instance's connections (kld_top's, kld_ring_detect's): the step and retire of
  // the next cycle, the presented position and its references from the scan (`scan`'s token, slot,
  // avail, ref_slot_next, ref_near_next; with LANE_GROUPS 2 `phase_next` instead of its
  // ref_two_next), the run's policy, the presented beat's lanes, and the decisions out.
  struct Instance {
    vlog::Expr clk, rst_n, step_next, retire_next;
    ScanBlock::Outputs scan;
    vlog::Expr phase_next;
    vlog::Expr policy, naxes, axes, lane_valid, enable, rope, tau, a;
    vlog::Expr reuse, axis, root, root_last;  // root, root_last: kTop only
    Variant variant = Variant::kTop;          // kRing: no token, roots or phase_next
    std::vector<vlog::Connection> connect(const HwConfig& c) const;
  };
  static int slot_w(const HwConfig& c);  // bits of a window slot index
  static int window_depth(const HwConfig& c);  // words of a lane's window: two groups' slots
  static int entry_w(const HwConfig& c, Variant v);  // bits of a window entry: Ahat (and root)
  static vlog::Module generate_lane(const HwConfig& c, const vlog::Module& window_sram, Variant v = Variant::kTop);
  static vlog::Module generate(const HwConfig& c, const vlog::Module& lane, Variant v = Variant::kTop);
};

// kld_dispatcher: scan-order and reference address generation for the
// detector, compute lists per group, and dense packing of COMPUTE work into
// the array segments.
struct DispatcherBlock {
  static vlog::Module generate(const HwConfig& c, const vlog::Module& list_sram);
};

// kld_merge: partial memories written from the array taps, root tables
// written by the detector, and the gather that forms each output word. With
// more than one m-tile the partial memories have two banks (m-tile parity):
// each tap writes the bank its tag carries while the gather reads bank rbank_i.
struct MergeBlock {
  static vlog::Module generate(const HwConfig& c, const vlog::Module& partial_sram, const vlog::Module& root_sram);
};

// The sum of `terms` (equal widths, wrapping) as a carry-save tree of 3:2 compressors on whole
// words (csa_<suffix>_<level>_<i>_sum/_carry: sum = a ^ b ^ c, carry = majority one place up)
// and one adder (sum_<suffix>): about log1.5(n/2) full-adder delays and one carry chain.
vlog::Expr carry_save_sum(vlog::Module& m, std::vector<vlog::Expr> terms, const std::string& suffix);
// The same tree without the adder: the one or two words whose sum it is (a pipeline may register
// them and add in the next step, with carry_save_add).
std::vector<vlog::Expr> carry_save_pair(vlog::Module& m, std::vector<vlog::Expr> terms, const std::string& suffix);
// The tree's adder (sum_<suffix>): the sum of carry_save_pair's one or two words.
vlog::Expr carry_save_add(vlog::Module& m, const std::vector<vlog::Expr>& words, const std::string& suffix);

// kld_ring_merge: the merge of the window-bounded ring (hw/ring_plan.hpp): per (group, column) a
// ring of `depth` partials written by the array taps at their slot; the gather resolves a REUSE
// pair by copying its reference's slot (a w, h or t neighbour, from its 2-bit decision code) into
// its own, and sums each position's G slots. Its banks read like macros (registered). Not yet
// instantiated by kld_top.
struct RingMergeBlock {
  // Decision codes: what a (position, group) pair does; a REUSE code is the detector's chosen axis
  // (kld_detector_lane axis_o: 0 t, 1 h, 2 w) plus one.
  enum Code : uint64_t { kCompute = 0, kRefT = 1, kRefH = 2, kRefW = 3 };
  // The ring is GATHER_W banks of RING_DEPTH / GATHER_W rows: slot = row * GATHER_W + bank.
  static int bank_rows(const HwConfig& c, int depth) { return std::max(2, depth / std::max(1, c.gather_w)); }
  static int row_w(const HwConfig& c, int depth) { return vlog::clog2(bank_rows(c, depth)); }
  static int bank_w(const HwConfig& c) { return c.gather_w > 1 ? vlog::clog2(c.gather_w) : 0; }
  // A lane's bank deeper than this is 2, 4, ... memories by the row's low bits, each read every
  // beat, the part folded into the take: in the SRAM model (sky130 hd) 768 rows read in 3.92 ns and
  // 384 in 3.55 ns, which leave no room in 4 ns for the take; 192 rows read in 3.24 ns.
  static constexpr int kMaxBankRows = 256;
  static int bank_parts(const HwConfig& c, int depth) {
    int parts = 1;
    while ((bank_rows(c, depth) + parts - 1) / parts > kMaxBankRows) parts *= 2;
    return parts;
  }
  // The banks lane `lane` may take a word from: its own and those of the lanes before it (its root
  // lane's), or its own alone with one bank.
  static int take_lanes(const HwConfig& c, int lane) { return c.gather_w > 1 ? lane + 1 : 1; }
  // Rows of each part (rounded up when the rows do not divide).
  static int part_rows(const HwConfig& c, int depth) {
    const int parts = bank_parts(c, depth);
    return (bank_rows(c, depth) + parts - 1) / parts;
  }
  // Bits of a tap tag: the k-tile (when there can be more than one) above the row, above the bank.
  static int tag_width(const HwConfig& c, int depth) {
    return row_w(c, depth) + bank_w(c) + (c.max_kt() > 1 ? vlog::clog2(c.max_kt()) : 0);
  }
  // kld_ring_take_<words>x<width>: a lane's partial, the OR of the bank words it takes and of a
  // word from registers. A module of its own so that synthesis, which sees no arrival times,
  // keeps the late bank words to one AND-OR level.
  static std::string take_name(int words, int width);
  static vlog::Module generate_take(int words, int width);
  // `takes[j]`: the take module of lane j (j + 1 words).
  static vlog::Module generate(const HwConfig& c, int depth, const vlog::Module& ring_sram,
                               const std::vector<const vlog::Module*>& takes);
  // The block with its ring memory (kld_ring_merge the only top), for its block test.
  static vlog::Design design(const HwConfig& c, int depth);
};

// kld_ring_lists: the list builder of the window-bounded ring (hw/ring_plan.hpp, lists(q)): from a
// chunk's decision codes, LIST_W positions a cycle, each group's compute list (the positions of
// the chunk whose code is COMPUTE, in scan order) into one of two buffers. Not yet instantiated by
// kld_top.
struct RingListsBlock {
  // A word's lanes: LIST_W a power of two; chunks of at least two positions and at least LIST_W.
  static void check(int chunk, int list_w);
  // Rows of one buffer in each of a group's LIST_W banks: ceil(C / LIST_W).
  static int rows(int chunk, int list_w) { return (chunk + list_w - 1) / list_w; }
  static int lane_bits(int list_w);             // log2(LIST_W)
  static int word_bits(int chunk, int list_w);  // bits of a word's index in its chunk (0 for one word)
  // An entry, a position in its chunk, is {word, lane}: ENTRY_W bits (clog2(C) when C is a
  // multiple of LIST_W).
  static int entry_w(int chunk, int list_w);
  static int len_w(int chunk);  // a list's length: 0..C
  // Edges from the one a word enters at (code_valid_i high) to the one its entries are written
  // and its lengths out at (the codes registered, then their ranks and counts, then the write):
  // a read presented after it returns them (registered, an edge later).
  static constexpr int kReadyEdges = 2;
  static vlog::Module generate(const HwConfig& c, int chunk, int list_w, const vlog::Module& bank_sram);
  // The block with its bank memory (kld_ring_lists the only top), for its block test.
  static vlog::Design design(const HwConfig& c, int chunk, int list_w);
};

// kld_ring_codes: the decision-code memory of the window-bounded ring (docs/hardware.md). The
// detector's decisions (LANES groups of one position a cycle) are assembled into a word of
// LIST_W positions x G groups of 2-bit codes, written whole at the edge its last decision enters
// (`dec_commit_i`); a row is read a word a cycle, registered like a macro, and holds the new word
// from the edge after its write (a read at the write's own edge gets the old one).
struct RingCodesBlock {
  // LIST_W a power of two; at least two words.
  static void check(int words, int list_w);
  // More words than kMaxPartRows are 2, 4, ... memories by the row's low bits, of part_rows rows
  // each (rounded up). A word is wide (LIST_W x 2G bits: 256 for 16 groups); in the SRAM model
  // (sky130 hd) 128 such rows read in 3.48 ns, 256 in 3.94 ns, so at a 4 ns clock one level of
  // AND-OR, over kPickParts parts, follows a part's read before a register, and the OR of those
  // registers comes a cycle later (docs/hardware.md, "The ring's decision codes").
  static constexpr int kMaxPartRows = 128;
  static constexpr int kPickParts = 2;
  static int parts(int words);
  static int part_rows(int words) { return (words + parts(words) - 1) / parts(words); }
  // The detector's side (dec_*_i), declared on `m`: kld_ring_codes takes it, kld_ring_front passes
  // it on; kld_ring_detect gives it (dec_*_o, `output`).
  struct DecisionPorts {
    vlog::Expr valid, group, reuse, axis, lane, row, commit;
    // Connections of the same ports of an instance (kld_ring_codes' in kld_ring_front,
    // kld_ring_front's in kld_ring_passes), after `first` and before `then`.
    std::vector<vlog::Connection> connect(std::vector<vlog::Connection> first,
                                          const std::vector<vlog::Connection>& then) const {
      const std::vector<vlog::Connection> decisions = {{"dec_valid_i", valid},  {"dec_group_i", group},
                                                       {"dec_reuse_i", reuse},  {"dec_axis_i", axis},
                                                       {"dec_lane_i", lane},    {"dec_row_i", row},
                                                       {"dec_commit_i", commit}};
      first.insert(first.end(), decisions.begin(), decisions.end());
      first.insert(first.end(), then.begin(), then.end());
      return first;
    }
  };
  static DecisionPorts decision_ports(vlog::Module& m, const HwConfig& c, int words, int list_w,
                                      bool output = false);
  // A chunk's code words as the ring's blocks hand it on (kld_ring_chunks offers it, kld_ring_passes
  // takes it, kld_ring_front builds from it): the row of its first word in a memory of `words`,
  // its word count (1 to ceil(chunk / LIST_W)) and its last word's lanes (lane l: bit l).
  struct ChunkWordPorts {
    vlog::Expr row, words, lanes;
    // Declares <prefix>_row, <prefix>_words and <prefix>_lanes of `m`, inputs (_i) or outputs (_o).
    static ChunkWordPorts declare(vlog::Module& m, const std::string& prefix, bool output, int words, int chunk,
                                  int list_w);
    // Connections of an instance's ports of the same kind, named with `prefix` and `suffix`.
    std::vector<vlog::Connection> connect(const std::string& prefix, const std::string& suffix) const {
      return {{prefix + "_row" + suffix, row}, {prefix + "_words" + suffix, words}, {prefix + "_lanes" + suffix, lanes}};
    }
  };
  // Edges from a read's row to its codes: the macro's read, then (more than one part) the pick.
  static int read_edges(int words) { return parts(words) > 1 ? 2 : 1; }
  static vlog::Module generate(const HwConfig& c, int words, int list_w, const vlog::Module& part_sram);
  // A memory of `words` words of wdata's width in `m`, as the code words are held: parts(words)
  // instances of `part_sram` (part_rows(words) rows each, registered reads) by the row's low bits,
  // and more than one part picked in two registered levels, so `rdata` is the word of `raddr`
  // read_edges(words) edges later. kld_ring_codes holds the code words in one, kld_ring_front
  // the walk buffer.
  struct WordMemoryNames {
    std::string instance;       // instances u_<instance> or u_<instance>_<part>
    std::string signal_prefix;  // of the part words, the one-hot part and the picks
    std::string what;           // what the words are, for the instances' comments
  };
  static void word_memory(vlog::Module& m, const vlog::Module& part_sram, int words, const WordMemoryNames& names,
                          const vlog::Expr& clk, const vlog::Expr& we, const vlog::Expr& waddr, const vlog::Expr& wdata,
                          const vlog::Expr& raddr, const vlog::Expr& rdata);
  // The block with its word memory (kld_ring_codes the only top), for its block test.
  static vlog::Design design(const HwConfig& c, int words, int list_w);
};

// kld_ring_front: the ring's front end (docs/hardware.md): kld_ring_codes and kld_ring_lists
// joined by a reader that, for each build asked for (a chunk's first row, words, last word's
// lanes and list buffer), reads the chunk's code words a word a cycle into the list builder. The
// decisions are stored once and a chunk's lists built again for every B tile. Not yet in kld_top.
struct RingFrontBlock {
  // As kld_ring_codes and kld_ring_lists (a plan's code memory may hold fewer words than a
  // chunk could: its workload is then shorter than a chunk).
  static void check(int words, int chunk, int list_w);
  // Edges from the one a build of `chunk_words` words is taken at to the one after which its
  // lists and lengths can be read (built_o high): its words read one an edge, each
  // RingCodesBlock::read_edges later into the list builder, then RingListsBlock::kReadyEdges.
  static int built_edges(int chunk_words, int words) {
    return chunk_words + RingCodesBlock::read_edges(words) + RingListsBlock::kReadyEdges;
  }
  // The walk buffer: the code words of the last kWalkSlots chunks built, kept as their builds
  // read them, for the gather's walk (the code memory's one read port is the builds'). The chunk
  // built into slot s (build_slot_i) has its words from row s * ceil(C / LIST_W) on; it is the
  // caller's to build into a slot only once the chunk before in it has been walked.
  static constexpr int kWalkSlots = 4;
  static int walk_words(int chunk, int list_w) { return kWalkSlots * RingListsBlock::rows(chunk, list_w); }
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, const vlog::Module& codes,
                               const vlog::Module& lists, const vlog::Module& walk_sram);
  // A plan's sizes as a design header names them: CODE_WORDS, CHUNK, LIST_W.
  static std::vector<std::pair<std::string, std::string>> plan_params(int words, int chunk, int list_w);
  // Adds the block with kld_ring_codes, kld_ring_lists and their memories to `d`.
  static void add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w);
  // The block with kld_ring_codes, kld_ring_lists and their memories, for its block test.
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w);
};

// kld_ring_issue: the pass engine's issue from a built chunk's compute lists (docs/hardware.md,
// "The ring's issue"), lock-step k-tile passes: pass kt reads entry i of the lists of groups
// kt * SEGS + s (s the segment) in cycle i, for as many cycles as its longest list (one for a pass
// of empty lists). A pass begins at the edge after the one before ends, or later, when its weights
// are ready (`wt_ready_i`); a chunk is taken at the edge its predecessor's last pass ends. Each
// segment's beat (the chunk position it issues) comes kIssueEdges after its list read. Not yet in
// kld_top.
struct RingIssueBlock {
  // As kld_ring_lists, whose read port and lengths it drives and takes.
  static void check(int chunk, int list_w) { RingListsBlock::check(chunk, list_w); }
  // Edges from a list read (rd_index_o) to its beat: the list's registered read, the entries out
  // of its bank select registered, then the pass's groups taken from them into the beat registers.
  static constexpr int kIssueEdges = 3;
  // The issue's ports that kld_ring_passes passes on, declared on `m` in two runs: the pass side
  // (groups_i, wt_ready_i, pass_take_o) and the beat (beat_*_o).
  struct OuterPorts {
    vlog::Expr groups, wt_ready, pass_take;
    vlog::Expr beat_valid, beat_pos, beat_kt, beat_wbuf, beat_pass_last, beat_chunk_last;
    static OuterPorts declare_pass_side(vlog::Module& m, const HwConfig& c);
    void declare_beat(vlog::Module& m, const HwConfig& c, int chunk, int list_w);
    // Connections of the same ports of an instance.
    std::vector<vlog::Connection> pass_side() const {
      return {{"groups_i", groups}, {"wt_ready_i", wt_ready}, {"pass_take_o", pass_take}};
    }
    std::vector<vlog::Connection> beat() const {
      return {{"beat_valid_o", beat_valid},         {"beat_pos_o", beat_pos},
              {"beat_kt_o", beat_kt},               {"beat_wbuf_o", beat_wbuf},
              {"beat_pass_last_o", beat_pass_last}, {"beat_chunk_last_o", beat_chunk_last}};
    }
  };
  static vlog::Module generate(const HwConfig& c, int chunk, int list_w);
  // kld_ring_issue alone (its lists come from kld_ring_front in the ring's pass engine).
  static vlog::Design design(const HwConfig& c, int chunk, int list_w);
};

// kld_ring_passes: the ring's pass engine so far (docs/hardware.md): kld_ring_front and
// kld_ring_issue joined. Chunks whose decisions are written are asked for in order (their first
// code row, words and last word's lanes); each is built into the list buffer of its parity once
// the chunk two before has made its last read, and issued once built, the next chunk's build
// running while a chunk issues. Not yet in kld_top.
struct RingPassesBlock {
  static void check(int words, int chunk, int list_w) { RingFrontBlock::check(words, chunk, list_w); }
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, const vlog::Module& front,
                               const vlog::Module& issue);
  // Adds the block with kld_ring_front (its blocks and memories) and kld_ring_issue to `d`.
  static void add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w);
  // The same in a design of its own, for its block test.
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w);
};

// kld_ring_chunks: the ring's chunk sequencer (docs/hardware.md, "The ring's chunks"): a run's
// scan positions, tile by tile (ScanOrder: every frame of a tile, rows of the tile's width), cut
// into chunks of at most CHUNK positions that never cross a tile (hw::ring_chunks), offered in
// order once per m-tile with their code words (first row, count, last word's lanes), positions,
// the ring row of their first position and their tile's h and t distances in ring rows. The
// run's grid, tiles and m-tiles are inputs held through the run (kld_top's registers). A block
// mask (query blocks the tiles, key blocks of kb_mts_i m-tiles), read a bit per tile like a
// registered memory, drops pairs: their chunks are cut but not offered, and the ring rows count
// the offered chunks only; the first m-tile offers every chunk, a dropped pair's marked
// (chunk_masked_o), because the A its issue reads is saved for the later m-tiles. Not yet in kld_top.
struct RingChunksBlock {
  // GATHER_W a power of two; CHUNK and RING_DEPTH multiples of it, RING_DEPTH at least 2 CHUNK;
  // chunks as kld_ring_lists takes them; at least two code words.
  // MAX_W at least GATHER_W.
  static void check(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // Edges from the one a run or a tile's last chunk is taken at to the one after which the next
  // tile's first chunk is offered: the tile's rows and columns, its area, its positions, its first
  // chunk's cut (length, words, lanes), each registered; and from a take inside a tile: the cut.
  // The run's inputs (kld_top's registers, held through a run) and the block mask's read, declared
  // on `m`: kld_ring_chunks takes them, kld_ring_engine passes them on.
  struct RunPorts {
    vlog::Expr grid_t, grid_h, grid_w, tile_h, tile_w, mtiles, mask_en, kb_mts, mask_tile, mask_kb, mask_keep;
    static RunPorts declare(vlog::Module& m, const HwConfig& c);
    std::vector<vlog::Connection> connect() const;
  };
  static constexpr int kTileEdges = 4;
  static constexpr int kChunkEdges = 1;
  // Scan tiles a frame may have, the mask's query blocks: tiles of one row of GATHER_W columns.
  static int max_tiles(const HwConfig& c) { return c.max_h * ((c.max_w + c.gather_w - 1) / c.gather_w); }
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // kld_ring_chunks alone.
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // A design of `top` alone whose header names the plan's CODE_WORDS, CHUNK, LIST_W and RING_DEPTH
  // (kld_ring_chunks', kld_ring_walk's).
  static vlog::Design plan_design(const HwConfig& c, int words, int chunk, int list_w, int depth, vlog::Module top);
};

// kld_ring_walk: the gather's walk of the ring (docs/hardware.md, "The ring's walk"): each chunk
// taken (its partials in the ring) is walked in scan order a beat (a ring row of GATHER_W
// positions) a cycle; each beat's codes are read from the code memory (a word of LIST_W positions
// serves LIST_W / GATHER_W beats) and queued with its ring row and its tile's distances for
// kld_ring_merge, which takes the head at each edge its gather advances (gather_en_i). Not yet in
// kld_top.
struct RingWalkBlock {
  // As kld_ring_chunks, whose chunks it walks; GATHER_W at most LIST_W (a beat's codes in one word).
  static void check(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // Edges from a code row's read to its codes in the walk's register (the memory's read edges, then
  // the register every SRAM read lands in before logic).
  static int code_edges(int words) { return RingCodesBlock::read_edges(words) + 1; }
  // Entries of the beat queue: a beat is read only when an entry will be free as its codes arrive
  // (queued + in flight < the depth), and code edges + 2 entries keep a beat a cycle flowing while
  // the merge advances.
  static int fifo_depth(int words) { return code_edges(words) + 2; }
  // Edges from an idle walk's take of a chunk to the one its first beat enters the merge at: the
  // read, its codes' register, the queue's entry.
  static int first_beat_edges(int words) { return code_edges(words) + 2; }
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // kld_ring_walk alone.
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w, int depth);
};

// kld_ring_engine: the ring's engine (docs/hardware.md, "The ring's engine"): kld_ring_detect,
// kld_ring_chunks, kld_ring_passes, kld_ring_walk and the A blocks joined. The detector decides
// the run's positions from A's stream into the code words; the run's chunks go to the passes once
// their words are written; chunk n is built with its words kept in walk-buffer slot n mod 4, issued,
// and once its partials have landed in the ring (landed_i, from kld_top) walked from that slot,
// the walk's last read freeing it. The weight loader is told each next pass's B tile (wt_*_o:
// its chunk's m-tile and its k-tile). The issue's A (issue_a_*_o, a_edges after its beat, with the
// beat's weight buffer, tags and chunk end delayed to meet it: the array's issue port) comes
// from kld_ring_a_buffers, written from the detector's taken beats, in the first m-tile, whose
// reads are saved (save_*_o), and from kld_ring_a_replay, fed the save back (replay_*_i), in the
// later ones. Not yet in kld_top.
struct RingEngineBlock {
  // As kld_ring_detect, kld_ring_chunks, kld_ring_passes and the A blocks; the walk's as
  // kld_ring_walk over the walk buffer.
  static void check(const HwConfig& c, int words, int chunk, int list_w, int depth);
  // Edges from an issue beat (beat_*_o) to its A on issue_a_o: the A buffers' read.
  static int a_edges(const HwConfig& c, int chunk);
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, int depth,
                               const vlog::Module& detect, const vlog::Module& chunks, const vlog::Module& passes,
                               const vlog::Module& walk, const vlog::Module& a_buffers, const vlog::Module& a_replay);
  // The block with its blocks and memories; its header names the plan's CODE_WORDS, CHUNK, LIST_W
  // and RING_DEPTH. kld_ring_walk in it walks the walk buffer (RingFrontBlock::walk_words).
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w, int depth);
};

// kld_ring_detect: the ring's detector (docs/hardware.md, "The ring's detector"): the run's scan
// positions (ScanBlock), their A streamed in scan order, LANE_GROUPS beats of LANES groups a
// position, decided by kld_detector, every group of a position before the next, and handed to the
// code memory (kld_ring_codes' dec_* ports) as words of LIST_W positions, a chunk (hw::ring_chunks)
// starting a word. It counts the words written (codes_written_o), which kld_ring_engine, holding
// it, offers its chunks by. Not yet in kld_top.
struct RingDetectBlock {
  // As kld_ring_codes and kld_ring_lists; LANES x LANE_GROUPS at least G (one set of rounds).
  static void check(const HwConfig& c, int words, int chunk, int list_w);
  // Edges from the take of a word's last A beat to the one the word is written at (its commit
  // out), when the next beat follows at once: the beat presented, its decision (the lanes' second
  // stage), the decisions' registers. The stages wait together for A, so a gap delays it.
  static constexpr int kDecideEdges = 3;
  // The run's detection (window, policy, axis list, each group's enable, RoPE axes and threshold)
  // and A's stream, declared on `m`: kld_ring_detect takes them, kld_ring_engine passes them on.
  struct DetectPorts {
    vlog::Expr win, policy, naxes, axes, enable, rope, tau, a_valid, a_ready, a;
    static DetectPorts declare(vlog::Module& m, const HwConfig& c);
    std::vector<vlog::Connection> connect() const {
      return {{"win_i", win},         {"policy_i", policy},   {"naxes_i", naxes},   {"axes_i", axes},
              {"enable_i", enable},   {"rope_i", rope},       {"tau_i", tau},       {"a_valid_i", a_valid},
              {"a_ready_o", a_ready}, {"a_i", a}};
    }
  };
  static vlog::Module generate(const HwConfig& c, int words, int chunk, int list_w, const vlog::Module& detector);
  // Adds the block with kld_detector, its lanes and their window memory to `d`.
  static void add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w);
  // The same in a design of its own, for its block test.
  static vlog::Design design(const HwConfig& c, int words, int chunk, int list_w);
};

// kld_ring_a_buffers: the A chunk buffers of the window-bounded ring (docs/hardware.md, "The ring's
// A chunk buffers"): the A of two chunks, the one the issue reads and the next, written from A's
// stream as it is taken (LANE_GROUPS beats a position, beat p lane l holding group p*LANES + l) and
// read by the issue's beats (segment s, its position, group k-tile*SEGS + s). A chunk is read once
// all of it is written, and its buffer is written again once the reader frees it; the stream waits
// while both are held. One memory (bank) per segment, a word holding the LANES / SEGS groups of a
// beat that are the segment's. Not yet in kld_top.
struct RingABuffersBlock {
  // CHUNK at least 2; LANES a multiple of SEGS, LANES / SEGS a power of two; LANE_GROUPS 1 or 2 and
  // LANES x LANE_GROUPS at least G (every group of a position streamed).
  static void check(const HwConfig& c, int chunk);
  // Groups of a word: a beat's groups of one segment.
  static int word_groups(const HwConfig& c) { return c.det_lanes() / c.segs(); }
  // Words of a bank: both buffers' positions, LANE_GROUPS words a position.
  static int bank_words(const HwConfig& c, int chunk) { return 2 * chunk * c.lane_groups; }
  // Edges from a read's address (rd_*_i) to its A on rd_a_o: the bank's read
  // (RingCodesBlock::read_edges of its words), then the segment's group picked into a register.
  static int read_edges(const HwConfig& c, int chunk) { return RingCodesBlock::read_edges(bank_words(c, chunk)) + 1; }
  static vlog::Module generate(const HwConfig& c, int chunk, const vlog::Module& part_sram);
  // The read side of both A blocks (this one and kld_ring_a_replay): `valid` (a bit per segment)
  // and `pick` (the group of a word to take, none for words of one group) travel the memories'
  // `memory_edges`; then segment s's group of `words[s]` lands in a register enabled by its read,
  // on `valid_out` and `a_out`.
  static void registered_reads(vlog::Module& m, const vlog::Expr& clk, const vlog::Expr& rst_n, int memory_edges,
                               const vlog::Expr& valid, const vlog::Expr& pick, const std::vector<vlog::Expr>& words,
                               int gbits, const vlog::Expr& valid_out, const vlog::Expr& a_out);
  // Adds the block with its memories to `d`.
  static void add(vlog::Design& d, const HwConfig& c, int chunk);
  // The block alone; its header names CHUNK.
  static vlog::Design design(const HwConfig& c, int chunk);
};

// kld_ring_a_replay: the A of the later m-tiles (docs/hardware.md, "The ring's A in the later
// m-tiles"): the issue's order is the same in every m-tile, so the A the first m-tile's issue read
// from kld_ring_a_buffers, written out in that order, is streamed back: per pass, each segment's
// groups in its list's order, into a FIFO per segment. A pass may begin once all of its A is in;
// the issue's reads take each FIFO's head in order. Not yet in kld_top.
struct RingAReplayBlock {
  // CHUNK at least 2 (a pass's list of a segment is at most CHUNK entries).
  static void check(const HwConfig& c, int chunk);
  // Entries of a segment's FIFO: two passes' lists of CHUNK, the one issued and the next.
  static int fifo_words(int chunk) { return 2 * chunk; }
  // Edges from a read (rd_i) to its A on rd_a_o: the FIFO memory's read edges, then a register.
  static int read_edges(int chunk) { return RingCodesBlock::read_edges(fifo_words(chunk)) + 1; }
  static vlog::Module generate(const HwConfig& c, int chunk, const vlog::Module& part_sram);
  // Adds the block with its memories to `d`.
  static void add(vlog::Design& d, const HwConfig& c, int chunk);
  // The block alone with its memories; its header names CHUNK.
  static vlog::Design design(const HwConfig& c, int chunk);
};

// Registers between kld_top's issue and its array: the issued token (then the A read) and the A
// word. Neither the compute-list read nor the A read then shares a path with another memory or a PE.
constexpr int kIssueStages = 2;
// kld_plain_top's issue register: the A row, read at the issuing token, lands in a register with the
// issue's valid, tag and weight buffer, so no path runs from the run control through an A memory.
constexpr int kPlainIssueStages = 1;
// kld_plain_top's accumulators: a tap's read of its token's sum lands in a register and the sum is
// written back a cycle later, so no path holds a memory read, the add and the write.
constexpr int kPlainAccStages = 1;

// kld_weight_loader: B and the loader that shifts each pass's weights into the
// PE buffer of the pass's parity while the previous pass computes. Its module
// parameter Reach is the number of cycles from an activation's issue until it
// reaches the last row of its segment, plus one (kld_top: kIssueStages + GROUP_W,
// the default; kld_plain_top: kPlainIssueStages + ROWS): a buffer is reloaded once the last
// activation that used it has left. One module serves both tops.
struct WeightLoaderBlock {
  static constexpr const char* kReach = "Reach";
  static vlog::Module generate(const HwConfig& c, const vlog::Module& b_sram);
  static int default_reach(const HwConfig& c) { return kIssueStages + c.group_w; }
  // The parameter overrides of an instance with this reach (none for the default).
  static std::vector<vlog::ParamValue> overrides(const HwConfig& c, int reach);
  // Bits of the busy counters and of Reach: enough for the larger reach + COLS - 2.
  static int busy_width(const HwConfig& c);
};

// kld_top and kld_plain_top.
struct TopBlock {
  static vlog::Module generate(const HwConfig& c, const std::vector<const vlog::Module*>& parts);
};
struct PlainTopBlock {
  static vlog::Module generate(const HwConfig& c, const std::vector<const vlog::Module*>& parts);
};

}  // namespace kaleido::hw
