// Block test of kld_ring_front (kld_ring_codes and kld_ring_lists joined by the reader):
// `iterations` chunks of 1 to CHUNK positions with random codes (every group's COMPUTE share
// drawn from none, few, half, most, all or any), each chunk's words in the rows after the chunk
// before's, round the code memory (the first, whole, from its last row; tb/unit/ring_common.hpp
// makes the chunks and drives the detector's side). The detector's side
// writes the decisions (each position's groups in batches of 1 to LANES on random lanes, idle
// cycles between) up to two chunks ahead of the one read into the list builder; a chunk's build
// is asked for (at random cycles, held until taken) once its words are written and the buffer it
// goes to has been read out; a built chunk's lists are read, every entry of every group in a
// random order, with its lengths checked in every cycle, while the next chunk builds. `built_o`
// must rise exactly RingFrontBlock::built_edges edges after a build is taken, and at no other
// edge. Each build goes to walk-buffer slot (its number mod 4); once built, a chunk's words are
// read back from the walk buffer (WalkReader, at a pace drawn per chunk) while later chunks build,
// and a build is asked for only when its slot's chunk has been walked. The run fails without
// builds taken back to back, rows round the memory, a partial word, a word written while lists
// are read, a build that waits for its walk slot or a walk read while a build writes.
//
// The expectation does not use the block's structure: group g's list is the positions of the
// chunk whose decision for g is COMPUTE, in order.
#include <algorithm>
#include <deque>
#include <numeric>

#include "Vkld_ring_front.h"
#include "hw/blocks.hpp"
#include "ring_common.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingFrontBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;
using namespace kld_ring;

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), L = c.det_lanes();
  const int words = job.raw.at("words").get<int>(), chunk = job.raw.at("chunk").get<int>();
  const int LW = job.raw.at("list_w").get<int>();
  const int ew = RingListsBlock::entry_w(chunk, LW), lw = RingListsBlock::len_w(chunk);
  const int nw = kaleido::clog2(RingListsBlock::rows(chunk, LW) + 1);
  Vkld_ring_front dut;
  Clock<Vkld_ring_front> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  if (words < 3 * RingListsBlock::rows(chunk, LW)) {
    chk.fail("the harness writes up to two chunks ahead of the one read: it needs three chunks' words");
    return chk.finish("kld_ring_front");
  }

  ChunkStats stats;
  const std::vector<Chunk> chunks = make_chunks(rng, static_cast<size_t>(job.iterations), G, chunk, LW, words, stats);
  const int64_t partial_words = stats.partial_words, wraps = stats.wraps;
  WalkReader walker = WalkReader::of_front(&chunks, G, chunk, LW);

  dut.rst_ni = 0;
  dut.dec_valid_i = 0;
  dut.dec_commit_i = 0;
  dut.build_valid_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  const auto nq = static_cast<int64_t>(chunks.size());
  int64_t written = 0, taken = 0, read_done = 0;  // chunks written, builds taken, chunks read out
  std::deque<DecisionCycle> writing;              // chunk `written`'s decisions still to give
  bool asking = false;                            // build_valid_i held for chunk `taken`
  std::deque<std::pair<int64_t, int64_t>> builds;  // chunk, the edge its built_o is due after
  std::deque<int64_t> built;                       // chunks built, not yet read
  int64_t reading = -1;                            // the chunk whose lists are read
  std::vector<std::vector<int>> to_read(static_cast<size_t>(G));
  int64_t last_take_edge = -100, last_take_words = 0, back_to_back = 0, entries_checked = 0;
  int64_t commits_while_reading = 0, slot_waits = 0, walks_while_building = 0;
  auto reads_left = [&] {
    return std::any_of(to_read.begin(), to_read.end(), [](const auto& t) { return !t.empty(); });
  };

  while (read_done < nq || walker.walked < nq) {
    if (clock.cycle() > 200000) {
      chk.fail("the run did not end: " + std::to_string(read_done) + " of " + std::to_string(nq) + " chunks read");
      break;
    }
    // The detector's side: up to two chunks ahead of the builds (the rows of the chunk being
    // read into the list builder, of the next and of the one written are distinct).
    if (writing.empty() && written < nq && written <= taken + 1) writing = decisions(rng, chunks[static_cast<size_t>(written)], G, L, LW, words);
    DecisionCycle d = idle_decisions(L);
    bool ends_chunk = false;  // the chunk's last decisions: it is written at this edge
    if (!writing.empty()) {
      d = writing.front();
      writing.pop_front();
      ends_chunk = writing.empty();
    }
    drive_decisions(dut, rng, d, G, L, LW, words);
    const bool commit_now = d.commit;

    // The build of chunk `taken`: asked for once its words are written and its buffer read out;
    // every fourth one waits for the next chunk's words too, so that build can follow at once.
    const bool next_written = taken + 1 < written || written == nq;
    const bool slot_free = taken < walker.walked + RingFrontBlock::kWalkSlots;
    if (!asking && taken < written && read_done >= taken - 1 && (taken % 4 != 2 || next_written)) {
      slot_waits += !slot_free;
      if (slot_free && rng.range(0, 3) != 0) asking = true;
    }
    const Chunk* next = taken < nq ? &chunks[static_cast<size_t>(taken)] : nullptr;
    dut.build_valid_i = asking;
    dut.build_row_i = asking ? next->row : static_cast<int>(rng.next() % words);
    dut.build_words_i = asking ? next->words : static_cast<int>(rng.next() % (1u << nw));
    const int last_n = asking ? next->n - (next->words - 1) * LW : 0;
    set_bits(dut.build_lanes_i, 0, LW, asking ? (last_n >= 64 ? ~0ull : (1ull << last_n) - 1) : rng.next());
    dut.build_buf_i = asking ? static_cast<int>(taken & 1) : static_cast<int>(rng.next() & 1);
    const int64_t slots = RingFrontBlock::kWalkSlots;
    dut.build_slot_i = static_cast<uint32_t>(asking ? taken % slots : static_cast<int64_t>(rng.next() % slots));
    const bool take = asking && dut.build_ready_o;
    const int64_t pending_before = static_cast<int64_t>(walker.pending.size());
    walker.drive(dut, rng);
    walks_while_building += static_cast<int64_t>(walker.pending.size()) > pending_before && !builds.empty();

    // The lists of chunk `reading`, entries in a random order.
    dut.rd_buf_i = reading >= 0 ? static_cast<int>(reading & 1) : static_cast<int>(rng.next() & 1);
    std::vector<int> issued(static_cast<size_t>(G), -1);
    for (int g = 0; g < G; ++g) {
      auto& todo = to_read[static_cast<size_t>(g)];
      uint64_t index = rng.next() % (1ull << ew);
      if (!todo.empty() && rng.range(0, 5) != 0) {
        issued[static_cast<size_t>(g)] = todo.back();
        index = static_cast<uint64_t>(todo.back());
        todo.pop_back();
      }
      set_bits(dut.rd_index_i, g * ew, ew, index);
    }

    clock.edge();
    const int64_t edge = clock.cycle();
    if (commit_now && reading >= 0) ++commits_while_reading;
    written += ends_chunk;
    if (take) {
      back_to_back += edge == last_take_edge + last_take_words;
      last_take_edge = edge;
      last_take_words = next->words;
      builds.emplace_back(taken, edge + RingFrontBlock::built_edges(next->words, words));
      ++taken;
      asking = false;
    }
    // built_o: high exactly at the edge a build is due.
    const bool due = !builds.empty() && builds.front().second == edge;
    chk.equal(dut.built_o, due, "built_o after edge " + std::to_string(edge));
    walker.check(dut, chk, edge);
    if (due) {
      walker.ready.push_back(builds.front().first);
      built.push_back(builds.front().first);
      builds.pop_front();
    }
    if (reading >= 0) {
      const Chunk& k = chunks[static_cast<size_t>(reading)];
      for (int g = 0; g < G; ++g) {
        const int i = issued[static_cast<size_t>(g)];
        if (i >= 0) {
          chk.equal(static_cast<int64_t>(get_bits(dut.rd_entry_o, g * ew, ew)),
                    k.lists[static_cast<size_t>(g)][static_cast<size_t>(i)],
                    "chunk " + std::to_string(reading) + " group " + std::to_string(g) + " entry " + std::to_string(i));
          ++entries_checked;
        }
        chk.equal(static_cast<int64_t>(get_bits(dut.len_o, (static_cast<int>(reading & 1) * G + g) * lw, lw)),
                  static_cast<int64_t>(k.lists[static_cast<size_t>(g)].size()),
                  "chunk " + std::to_string(reading) + " length of group " + std::to_string(g));
      }
      if (!reads_left()) {
        reading = -1;
        ++read_done;
      }
    }
    if (reading < 0 && !built.empty()) {
      reading = built.front();
      built.pop_front();
      for (int g = 0; g < G; ++g) {
        auto& todo = to_read[static_cast<size_t>(g)];
        todo.resize(chunks[static_cast<size_t>(reading)].lists[static_cast<size_t>(g)].size());
        std::iota(todo.begin(), todo.end(), 0);
        for (size_t i = todo.size(); i > 1; --i) std::swap(todo[i - 1], todo[rng.next() % i]);
      }
    }
  }
  if (LW > 1 && partial_words == 0) chk.fail("no partial word in the run");
  if (wraps == 0) chk.fail("no chunk whose rows go round the code memory");
  if (job.iterations >= 12 && back_to_back == 0) chk.fail("no build taken at the edge the one before read its last word");
  if (commits_while_reading == 0) chk.fail("no word written while lists were read");
  if (job.iterations >= 12 && slot_waits == 0) chk.fail("no build waited for its walk-buffer slot");
  if (walks_while_building == 0) chk.fail("no walk-buffer read while a build wrote it");
  dut.final();
  return chk.finish("kld_ring_front " + std::to_string(G) + " groups, " + std::to_string(L) + " lanes, " +
                    std::to_string(words) + " code words (reads of " +
                    std::to_string(kaleido::hw::RingCodesBlock::read_edges(words)) + " edge(s)), chunks of up to " +
                    std::to_string(chunk) + ", LIST_W " + std::to_string(LW) + ", " + std::to_string(nq) + " chunks (" +
                    std::to_string(partial_words) + " with a partial word, " + std::to_string(wraps) +
                    " round the memory, " + std::to_string(back_to_back) + " builds back to back, " +
                    std::to_string(slot_waits) + " cycles waiting for a walk slot), " +
                    std::to_string(entries_checked) + " entries read, " + std::to_string(walker.words_checked) +
                    " words walked, " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
