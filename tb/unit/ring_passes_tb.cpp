// Block test of kld_ring_passes (kld_ring_front and kld_ring_issue joined): `iterations` chunks
// of random decisions (tb/unit/ring_common.hpp), their code rows following one another round the
// memory. The detector's side writes them as far ahead of the chunks the block has taken as the
// memory holds (two chunks in a memory of three, more in a larger one: then builds wait for their
// list buffers); each chunk is asked for (at random cycles, held until taken) once written;
// the weight loader is ready again 0 to `weight_delay` (10 unless given) cycles after each pass
// begins. The run's groups are all of them (odd seeds) or one fewer (even seeds).
//
// The expectation does not use the blocks' structure: the chunks' beats, in the order asked, pass
// kt of a chunk having max(1, longest list of groups kt*SEGS + s) beats, beat i carrying for
// segment s entry i of its group's list (the chunk positions whose decision for the group is
// COMPUTE) when i is inside it. Every beat is compared, with its k-tile, weight buffer (pass
// parity) and last flags; a pass's beats come on consecutive edges; a pass begins only when the
// weights are ready. The run fails unless some chunk's first beat follows the chunk before's last
// at the next edge (its lists built while that chunk issued), and, where the writer can run more
// than two chunks ahead, unless some chunk waits for its buffer (the chunk two before issuing).
// With the weights always ready (`weight_delay` 0) the join's latency is checked too: a chunk's
// first beat comes at the edge after the chunk before's last beat, or RingFrontBlock::built_edges
// + 1 + RingIssueBlock::kIssueEdges edges after its build was taken, whichever is later. The
// gather's walk (WalkReader) reads each chunk's words back from the walk buffer, slot (its number
// mod 4), once its last beat is out, and raises walked_i with its last read; no chunk may be taken
// while four chunks taken are still to walk, and the run fails unless one waits for that.
#include <deque>

#include "Vkld_ring_passes.h"
#include "hw/blocks.hpp"
#include "ring_common.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingListsBlock;
using namespace kld_unit;
using namespace kld_ring;

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), S = c.segs(), L = c.det_lanes();
  const int words = job.raw.at("words").get<int>(), chunk = job.raw.at("chunk").get<int>();
  const int LW = job.raw.at("list_w").get<int>(), ew = RingListsBlock::entry_w(chunk, LW);
  Vkld_ring_passes dut;
  Clock<Vkld_ring_passes> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  if (words < 3 * RingListsBlock::rows(chunk, LW)) {
    chk.fail("the harness writes up to two chunks ahead of the one built: it needs three chunks' words");
    return chk.finish("kld_ring_passes");
  }
  const int groups = job.seed % 2 == 1 || G == 1 ? G : G - 1;
  // Chunks the writer may be ahead of the latest taken: the rows of the one it writes must not be
  // those of a chunk not yet read into the list builder.
  const size_t ahead = static_cast<size_t>(words / RingListsBlock::rows(chunk, LW) - 1);
  const int64_t weight_delay = job.raw.value("weight_delay", 10);
  ChunkStats stats;
  const std::vector<Chunk> chunks = make_chunks(rng, static_cast<size_t>(job.iterations), G, chunk, LW, words, stats);
  const int64_t slots = kaleido::hw::RingFrontBlock::kWalkSlots;
  WalkReader walker = WalkReader::of_front(&chunks, G, chunk, LW);

  // Every beat of the run, in order.
  std::deque<IssueBeat> expected;
  int64_t pass = 0;
  for (size_t q = 0; q < chunks.size(); ++q)
    append_issue_beats(expected, chunks[q], groups, S, pass, static_cast<int64_t>(q));
  const size_t total_beats = expected.size();

  dut.rst_ni = 0;
  dut.dec_valid_i = 0;
  dut.dec_commit_i = 0;
  dut.chunk_valid_i = 0;
  dut.wt_ready_i = 0;
  dut.walked_i = 0;
  dut.groups_i = static_cast<uint32_t>(groups);
  clock.edge();
  dut.rst_ni = 1;

  const size_t nq = chunks.size();
  size_t written = 0, taken = 0;         // chunks whose decisions are written, chunks taken
  std::deque<DecisionCycle> writing;     // chunk `written`'s decisions still to give
  bool asking = false;
  int64_t wt_ready_from = rng.range(0, weight_delay);
  int64_t passes = 0, last_beat_edge = -10, back_to_back_chunks = 0, beats = 0, buffer_waits = 0, slot_waits = 0;
  size_t chunks_out = 0;                 // chunks whose last beat is out
  std::vector<int64_t> built_at(nq, 0);  // the edge after which chunk q's lists can be read
  bool in_pass = false, prev_chunk_last = false;

  while (!expected.empty() || walker.walked < static_cast<int64_t>(chunks.size())) {
    if (clock.cycle() > 400000) {
      chk.fail("the run did not end: " + std::to_string(total_beats - expected.size()) + " of " +
               std::to_string(total_beats) + " beats");
      break;
    }
    const int64_t now = clock.cycle();
    if (writing.empty() && written < nq && written < taken + ahead)
      writing = decisions(rng, chunks[written], G, L, LW, words);
    DecisionCycle d = idle_decisions(L);
    bool ends_chunk = false;
    if (!writing.empty()) {
      d = writing.front();
      writing.pop_front();
      ends_chunk = writing.empty();
    }
    drive_decisions(dut, rng, d, G, L, LW, words);
    if (!asking && taken < written && rng.range(0, 3) != 0) asking = true;
    const Chunk* next = taken < nq ? &chunks[taken] : nullptr;
    dut.chunk_valid_i = asking;
    dut.chunk_row_i = asking ? next->row : static_cast<int>(rng.next() % static_cast<uint64_t>(words));
    dut.chunk_words_i = asking ? next->words : static_cast<int>(rng.next() % static_cast<uint64_t>(next ? next->words + 1 : 2));
    const int last_n = asking ? next->n - (next->words - 1) * LW : 0;
    set_bits(dut.chunk_lanes_i, 0, LW, asking ? (last_n >= 64 ? ~0ull : (1ull << last_n) - 1) : rng.next());
    const bool wt_ready = now >= wt_ready_from;
    dut.wt_ready_i = wt_ready;
    const int64_t unwalked = static_cast<int64_t>(taken) - walker.walked;  // as the block counts them
    dut.walked_i = walker.drive(dut, rng);
    clock.settle();
    const bool take = asking && dut.chunk_ready_o;
    if (unwalked >= slots && dut.chunk_ready_o)
      chk.fail("a chunk taken while " + std::to_string(unwalked) + " taken are still to walk, in cycle " +
               std::to_string(now));
    slot_waits += asking && unwalked >= slots;
    if (asking && !take && taken >= 2 && chunks_out < taken - 1) ++buffer_waits;
    if (dut.pass_take_o && !wt_ready) chk.fail("a pass began without its weights in cycle " + std::to_string(now));
    const bool begin = dut.pass_take_o;

    clock.edge();
    const int64_t edge = clock.cycle();
    walker.check(dut, chk, edge);
    written += ends_chunk;
    if (take) {
      built_at[taken] = edge + kaleido::hw::RingFrontBlock::built_edges(chunks[taken].words, words);
      ++taken;
      asking = false;
    }
    if (begin) {
      ++passes;
      wt_ready_from = weight_delay == 0 || rng.range(0, 2) == 0 ? edge : edge + rng.range(1, weight_delay);
    }
    const bool present = dut.beat_valid_o != 0 || dut.beat_pass_last_o;
    if (in_pass && !present) chk.fail("a pass's beats broken off after edge " + std::to_string(edge));
    if (present && expected.empty()) {
      chk.fail("a beat after the run's last, after edge " + std::to_string(edge));
      break;
    }
    if (present) {
      const IssueBeat b = expected.front();
      expected.pop_front();
      check_beat(dut, chk, b, S, ew, edge);
      if (prev_chunk_last && last_beat_edge == edge - 1) ++back_to_back_chunks;
      const bool first_beat = beats == 0 || prev_chunk_last;
      if (weight_delay == 0 && first_beat)
        chk.equal(edge,
                  std::max(built_at[static_cast<size_t>(b.chunk)] + 1 + kaleido::hw::RingIssueBlock::kIssueEdges,
                           last_beat_edge + 1),
                  "chunk " + std::to_string(b.chunk) + ": the edge of its first beat");
      prev_chunk_last = b.chunk_last;
      chunks_out += b.chunk_last;
      if (b.chunk_last) walker.ready.push_back(b.chunk);
      last_beat_edge = edge;
      in_pass = !b.pass_last;
      ++beats;
    } else if (dut.beat_chunk_last_o) {
      chk.fail("beat_chunk_last_o without a beat after edge " + std::to_string(edge));
    }
  }
  if (passes != pass) chk.fail(std::to_string(passes) + " passes began for " + std::to_string(pass));
  if (stats.wraps == 0) chk.fail("no chunk whose rows go round the code memory");
  if (ahead > 2 && buffer_waits == 0) chk.fail("no chunk waited for its list buffer");
  if (job.iterations >= 12 && slot_waits == 0) chk.fail("no chunk waited for its walk-buffer slot");
  if (job.iterations >= 12 && back_to_back_chunks == 0)
    chk.fail("no chunk issued at the edge after the one before (its lists built meanwhile)");
  dut.final();
  return chk.finish("kld_ring_passes " + std::to_string(groups) + " of " + std::to_string(G) + " groups on " +
                    std::to_string(S) + " segments at " + std::to_string(L) + " lanes, " + std::to_string(words) +
                    " code words, chunks of up to " + std::to_string(chunk) + ", LIST_W " + std::to_string(LW) + ", " +
                    std::to_string(nq) + " chunks (" + std::to_string(stats.partial_words) + " with a partial word, " +
                    std::to_string(stats.wraps) + " round the memory, " + std::to_string(back_to_back_chunks) +
                    " issued back to back, " + std::to_string(buffer_waits) + " cycles waiting for a buffer, " +
                    std::to_string(slot_waits) + " for a walk slot), " + std::to_string(walker.words_checked) +
                    " words walked, " + std::to_string(passes) + " passes, " + std::to_string(beats) + " beats, " +
                    std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
