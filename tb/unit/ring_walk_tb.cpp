// Block test of kld_ring_walk (the gather's walk of the ring's chunks): `iterations` chunks of
// GATHER_W to CHUNK positions (whole beats), at random code rows (every eighth chunk's words
// wrapping round the code memory), ring rows (wrapping inside a chunk) and neighbour distances,
// offered at random cycles and held until taken (garbage on the chunk's ports otherwise). The
// harness plays the code memory (random words, each read returned RingCodesBlock::read_edges edges
// after its row) and the merge (`gather_en_i` low at random, one cycle in four; with option
// `steady` always high and a chunk always offered).
//
// What is checked, from the rule alone (docs/hardware.md, "The ring's walk"): at every edge with
// `gather_en_i` high and a beat offered, the beat is the next of the chunks in order, beat b of a
// chunk being its ring row + b (mod RING_DEPTH / GATHER_W), the codes of lanes b*GATHER_W ..
// b*GATHER_W + GATHER_W - 1 of the chunk's positions (word chunk row + b*GATHER_W / LIST_W, mod
// the memory's words; code_row_o is never past them, idle or not), its chunk's distances and last
// flag; a beat is offered on every lane or none; `chunk_read_o` rises once per chunk, in order,
// after its take and before its last beat is gathered, with code_row_o at its last beat's word.
// In the steady case the first beat enters RingWalkBlock::first_beat_edges after the first
// chunk's take and every later one at the next edge: the walk never starves a merge that always
// advances.
#include <deque>

#include "Vkld_ring_walk.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingCodesBlock;
using kaleido::hw::RingWalkBlock;
using namespace kld_unit;

struct Chunk {
  int64_t row, beats, slot_row, off_h, off_t;
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), GW = c.gather_w;
  const int chunk = job.raw.at("chunk").get<int>(), LW = job.raw.at("list_w").get<int>();
  const int words = job.raw.at("words").get<int>(), depth = job.raw.at("ring_depth").get<int>();
  const bool steady = job.raw.value("steady", false);
  const int rows = depth / GW, R = RingCodesBlock::read_edges(words), ww = LW * G * 2, bc = GW * G * 2;
  Vkld_ring_walk dut;
  Clock<Vkld_ring_walk> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  // The code memory: a random word per row, as 32-bit pieces.
  const int pieces = (ww + 31) / 32;
  std::vector<std::vector<uint32_t>> mem(static_cast<size_t>(words),
                                         std::vector<uint32_t>(static_cast<size_t>(pieces)));
  for (auto& w : mem)
    for (int p = 0; p < pieces; ++p)
      w[static_cast<size_t>(p)] =
          static_cast<uint32_t>(rng.next() & ((p + 1) * 32 <= ww ? 0xffffffffull : (1ull << (ww - p * 32)) - 1));
  auto code_bits = [&](int64_t row, int lsb, int width) {  // width <= 32
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) {
      const int b = lsb + i;
      v |= static_cast<uint64_t>((mem[static_cast<size_t>(row)][static_cast<size_t>(b / 32)] >> (b % 32)) & 1) << i;
    }
    return v;
  };

  std::vector<Chunk> chunks;
  for (int64_t q = 0; q < job.iterations; ++q) {
    const int64_t beats = q % 4 == 0 ? chunk / GW : rng.range(1, chunk / GW);
    const int64_t nwords = (beats * GW + LW - 1) / LW;
    // Every eighth chunk, a whole one (at least two words), starts in the memory's last rows and
    // wraps round it; the others lie inside it.
    const bool wrap = q % 8 == 4 && nwords >= 2;
    chunks.push_back({wrap ? words - 1 - rng.range(0, nwords - 2) : rng.range(0, words - nwords), beats,
                      q % 3 == 0 ? rows - 1 - rng.range(0, beats - 1) : rng.range(0, rows - 1), rng.range(0, rows - 1),
                      rng.range(0, rows - 1)});
  }

  dut.rst_ni = 0;
  dut.chunk_valid_i = 0;
  dut.gather_en_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  std::deque<int64_t> rows_read;  // code_row_o before each edge, newest last
  size_t offered = 0, taken_chunk = 0, reads_done = 0;
  int64_t next_beat = 0, beats_checked = 0, wraps = 0, code_wraps = 0, stalled_beats = 0;
  int64_t first_take_edge = -1, last_beat_edge = -1;
  bool offering = false;
  const int64_t limit = 200 + 40 * job.iterations * (chunk / GW + 8);
  while (taken_chunk < chunks.size() && clock.cycle() < limit) {
    // Inputs: a chunk (once offered, held until taken), the merge's advance, the codes read.
    if (!offering && offered < chunks.size() && (steady || rng.range(0, 2) == 0)) offering = true;
    dut.chunk_valid_i = offering;
    if (offering) {
      const Chunk& k = chunks[offered];
      dut.chunk_row_i = static_cast<uint32_t>(k.row);
      dut.chunk_beats_i = static_cast<uint32_t>(k.beats);
      dut.chunk_slot_row_i = static_cast<uint32_t>(k.slot_row);
      dut.chunk_off_h_i = static_cast<uint32_t>(k.off_h);
      dut.chunk_off_t_i = static_cast<uint32_t>(k.off_t);
    } else {
      dut.chunk_row_i = static_cast<uint32_t>(rng.range(0, words - 1));
      dut.chunk_beats_i = static_cast<uint32_t>(rng.range(0, chunk / GW));
      dut.chunk_slot_row_i = static_cast<uint32_t>(rng.range(0, rows - 1));
      dut.chunk_off_h_i = static_cast<uint32_t>(rng.range(0, rows - 1));
      dut.chunk_off_t_i = static_cast<uint32_t>(rng.range(0, rows - 1));
    }
    const bool en = steady || rng.range(0, 3) != 0;
    dut.gather_en_i = en;
    if (rows_read.size() >= static_cast<size_t>(R)) {
      const int64_t row = rows_read[rows_read.size() - static_cast<size_t>(R)];
      for (int p = 0; p < pieces; ++p)
        set_bits(dut.code_i, p * 32, std::min(32, ww - p * 32), mem[static_cast<size_t>(row)][static_cast<size_t>(p)]);
    } else {
      for (int p = 0; p < pieces; ++p) set_bits(dut.code_i, p * 32, std::min(32, ww - p * 32), rng.next());
    }
    clock.settle();
    const int64_t row_now = static_cast<int64_t>(dut.code_row_o);
    if (row_now >= words) chk.fail("code_row_o " + std::to_string(row_now) + " past the code memory");
    rows_read.push_back(row_now % words);
    // The walked chunk's last read: chunks in order, each once taken, at its last beat's word.
    if (dut.chunk_read_o) {
      if (reads_done >= offered) {
        chk.fail("chunk_read_o for a chunk not taken, edge " + std::to_string(clock.cycle() + 1));
      } else {
        const Chunk& k = chunks[reads_done];
        chk.equal(row_now, (k.row + (k.beats - 1) * GW / LW) % words,
                  "chunk " + std::to_string(reads_done) + ": code_row_o at its chunk_read_o");
      }
      ++reads_done;
    }
    const std::string at = "edge " + std::to_string(clock.cycle() + 1);
    const uint64_t valid = get_bits(dut.gather_valid_o, 0, GW);
    if (valid != 0 && valid != (uint64_t{1} << GW) - 1) chk.fail(at + ": a beat on some lanes only");
    const bool take_beat = en && valid != 0;
    if (take_beat) {
      if (taken_chunk >= chunks.size()) {
        chk.fail(at + ": a beat after the last chunk's");
      } else {
        const Chunk& k = chunks[taken_chunk];
        const std::string what = at + ", chunk " + std::to_string(taken_chunk) + " beat " + std::to_string(next_beat);
        const int64_t row = (k.slot_row + next_beat) % rows;
        if (k.slot_row + next_beat >= rows && next_beat > 0 && (k.slot_row + next_beat) % rows == 0) ++wraps;
        chk.equal(dut.gather_row_o, row, what + ": gather_row_o");
        const int64_t pos = next_beat * GW, word = (k.row + pos / LW) % words, lane0 = pos % LW;
        if (pos % LW == 0 && pos > 0 && word == 0) ++code_wraps;
        for (int j = 0; j < GW; ++j)
          for (int g = 0; g < G; ++g)
            chk.equal(static_cast<int64_t>(get_bits(dut.gather_code_o, (j * G + g) * 2, 2)),
                      static_cast<int64_t>(code_bits(word, static_cast<int>(((lane0 + j) * G + g) * 2), 2)),
                      what + ": lane " + std::to_string(j) + " group " + std::to_string(g) + " code");
        chk.equal(dut.ref_off_h_o, k.off_h, what + ": ref_off_h_o");
        chk.equal(dut.ref_off_t_o, k.off_t, what + ": ref_off_t_o");
        chk.equal(dut.beat_chunk_last_o, next_beat + 1 == k.beats, what + ": beat_chunk_last_o");
        if (steady) {
          const int64_t edge = clock.cycle() + 1;
          const int64_t due =
              last_beat_edge < 0 ? first_take_edge + RingWalkBlock::first_beat_edges(words) : last_beat_edge + 1;
          chk.equal(edge, due, what + ": the edge it enters at");
          last_beat_edge = edge;
        }
        ++beats_checked;
        if (next_beat + 1 == k.beats && reads_done <= taken_chunk)
          chk.fail(what + ": its chunk's last beat gathered before its chunk_read_o");
        if (++next_beat == k.beats) {
          ++taken_chunk;
          next_beat = 0;
        }
      }
    } else if (valid != 0) {
      ++stalled_beats;
    }
    const bool chunk_taken = offering && dut.chunk_ready_o;
    clock.edge();
    if (chunk_taken) {
      if (first_take_edge < 0) first_take_edge = clock.cycle();
      ++offered;
      offering = false;
    }
  }
  if (taken_chunk < chunks.size())
    chk.fail("only " + std::to_string(taken_chunk) + " of " + std::to_string(chunks.size()) + " chunks gathered in " +
             std::to_string(clock.cycle()) + " cycles");
  if (reads_done != chunks.size())
    chk.fail(std::to_string(reads_done) + " chunk_read_o for " + std::to_string(chunks.size()) + " chunks");
  if (wraps == 0) chk.fail("no chunk wrapped round the ring");
  if (code_wraps == 0) chk.fail("no chunk's words wrapped round the code memory");
  if (!steady && stalled_beats == 0) chk.fail("no beat held while the merge stalled");
  dut.final();
  return chk.finish("kld_ring_walk, " + std::to_string(G) + " groups, GATHER_W " + std::to_string(GW) + ", LIST_W " +
                    std::to_string(LW) + ", chunks of up to " + std::to_string(chunk) + ", " + std::to_string(words) +
                    " code words (reads of " + std::to_string(R) + " edges), ring of " + std::to_string(depth) +
                    " slots" + (steady ? ", merge always advancing" : "") + ": " + std::to_string(chunks.size()) +
                    " chunks, " + std::to_string(beats_checked) + " beats (" + std::to_string(wraps) +
                    " wrapping the ring, " + std::to_string(code_wraps) + " the code memory, " +
                    std::to_string(stalled_beats) + " beat-cycles held), " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
