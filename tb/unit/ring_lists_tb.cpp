// Block test of kld_ring_lists: `iterations` chunks of 1 to CHUNK positions with random codes
// (every group's COMPUTE share drawn from none, few, half, most, all or any), each streamed as
// words of LIST_W positions (the last one partial; garbage codes in its empty lanes and whenever
// code_valid_i is low) into the buffer the chunk before did not use, with random gaps and chunks
// back to back. While a chunk is built, the chunk before's lists are read from the other buffer,
// every entry of every group in a random order, and its lengths checked in every cycle, from
// RingListsBlock::kReadyEdges edges after its last word; the build of the next chunk waits
// until that is done (every sixth chunk is all REUSE, so some chunks follow the one before
// with no cycle between: the harness fails a run without).
//
// The expectation does not use the block's structure: group g's list is the positions of the
// chunk whose code for g is COMPUTE, in order.
#include <algorithm>
#include <numeric>

#include "Vkld_ring_lists.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingListsBlock;
using namespace kld_unit;

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups();
  const int chunk = job.raw.at("chunk").get<int>(), LW = job.raw.at("list_w").get<int>();
  const int ew = RingListsBlock::entry_w(chunk, LW), lw = RingListsBlock::len_w(chunk);
  Vkld_ring_lists dut;
  Clock<Vkld_ring_lists> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  dut.rst_ni = 0;
  dut.code_valid_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  // The lists of the chunk last finished (buffer `prev_buf`) and the reads still to make of them.
  std::vector<std::vector<int>> prev(static_cast<size_t>(G));
  int prev_buf = -1;
  int64_t prev_ready = 0;  // the edge after which prev's lists can be read
  std::vector<std::vector<int>> to_read(static_cast<size_t>(G));
  int64_t entries_checked = 0, empty_lists = 0, full_lists = 0, partial_words = 0, back_to_back = 0;

  // One cycle: drive a word (or garbage) and reads, take an edge, then compare what came out.
  auto cycle = [&](bool valid, bool first, int buf, uint64_t lanes, const std::vector<int>& codes) {
    dut.code_valid_i = valid;
    dut.code_first_i = first;
    dut.code_buf_i = buf;
    set_bits(dut.code_lanes_i, 0, LW, lanes);
    for (int i = 0; i < LW; ++i)
      for (int g = 0; g < G; ++g)
        set_bits(dut.code_i, (i * G + g) * 2, 2,
                 ((lanes >> i) & 1) ? static_cast<uint64_t>(codes[static_cast<size_t>(i * G + g)]) : rng.next() & 3);
    const bool reading = prev_buf >= 0 && clock.cycle() >= prev_ready;
    dut.rd_buf_i = reading ? prev_buf : static_cast<int>(rng.next() & 1);
    std::vector<int> issued(static_cast<size_t>(G), -1);
    for (int g = 0; g < G; ++g) {
      auto& todo = to_read[static_cast<size_t>(g)];
      uint64_t index = rng.next() % (1ull << ew);
      if (reading && !todo.empty() && rng.range(0, 5) != 0) {
        issued[static_cast<size_t>(g)] = todo.back();
        index = static_cast<uint64_t>(todo.back());
        todo.pop_back();
      }
      set_bits(dut.rd_index_i, g * ew, ew, index);
    }
    clock.edge();  // the reads land in the banks' registers
    for (int g = 0; g < G; ++g) {
      const int k = issued[static_cast<size_t>(g)];
      if (k < 0) continue;
      chk.equal(static_cast<int64_t>(get_bits(dut.rd_entry_o, g * ew, ew)),
                prev[static_cast<size_t>(g)][static_cast<size_t>(k)],
                "cycle " + std::to_string(clock.cycle()) + " group " + std::to_string(g) + " entry " + std::to_string(k));
      ++entries_checked;
    }
    if (prev_buf >= 0 && clock.cycle() >= prev_ready)
      for (int g = 0; g < G; ++g)
        chk.equal(static_cast<int64_t>(get_bits(dut.len_o, (prev_buf * G + g) * lw, lw)),
                  static_cast<int64_t>(prev[static_cast<size_t>(g)].size()),
                  "cycle " + std::to_string(clock.cycle()) + " length of group " + std::to_string(g));
  };
  auto reads_left = [&] { return std::any_of(to_read.begin(), to_read.end(), [](const auto& t) { return !t.empty(); }); };

  const int shares[] = {0, 5, 50, 95, 100, -1};
  int64_t prev_last_edge = -1;  // the edge the chunk before's last word entered at
  for (int64_t q = 0; q < job.iterations; ++q) {
    const int buf = static_cast<int>(q & 1);
    int n = static_cast<int>(rng.range(1, chunk));
    if (q % 5 == 1) n = chunk;
    if (q % 7 == 3) n = static_cast<int>(rng.range(1, std::min(chunk, LW)));
    std::vector<int> share(static_cast<size_t>(G));
    for (int& s : share) {
      s = shares[rng.range(0, 5)];
      if (s < 0) s = static_cast<int>(rng.range(0, 100));
      if (q % 6 == 4) s = 0;  // an all-REUSE chunk: nothing to read, the next one can follow at once
    }
    std::vector<int> codes(static_cast<size_t>((n + LW - 1) / LW * LW * G), 0);
    std::vector<std::vector<int>> lists(static_cast<size_t>(G));
    for (int p = 0; p < n; ++p)
      for (int g = 0; g < G; ++g) {
        const bool compute = rng.range(0, 99) < share[static_cast<size_t>(g)];
        codes[static_cast<size_t>(p * G + g)] = compute ? 0 : static_cast<int>(rng.range(1, 3));
        if (compute) lists[static_cast<size_t>(g)].push_back(p);
      }
    const int words = (n + LW - 1) / LW;
    int64_t last_edge = 0;
    for (int w = 0; w < words;) {
      if (rng.range(0, 3) == 0) {
        cycle(false, rng.range(0, 1) != 0, static_cast<int>(rng.next() & 1), rng.next(), codes);
        continue;
      }
      const int in_word = std::min(LW, n - w * LW);
      if (in_word < LW) ++partial_words;
      if (w == 0 && clock.cycle() == prev_last_edge) ++back_to_back;
      const std::vector<int> word(codes.begin() + static_cast<std::ptrdiff_t>(w) * LW * G,
                                  codes.begin() + static_cast<std::ptrdiff_t>(w + 1) * LW * G);
      cycle(true, w == 0, buf, (in_word >= 64 ? ~0ull : (1ull << in_word) - 1), word);
      ++w;
      last_edge = clock.cycle();
    }
    // The chunk before's lists must all be read before this buffer's neighbour is rebuilt.
    while (reads_left()) cycle(false, false, 0, 0, codes);
    for (const auto& l : lists) {
      empty_lists += l.empty();
      full_lists += static_cast<int>(l.size()) == n;
    }
    prev = lists;
    prev_buf = buf;
    prev_ready = last_edge + RingListsBlock::kReadyEdges;
    for (int g = 0; g < G; ++g) {
      auto& todo = to_read[static_cast<size_t>(g)];
      todo.resize(prev[static_cast<size_t>(g)].size());
      std::iota(todo.begin(), todo.end(), 0);
      for (size_t i = todo.size(); i > 1; --i) std::swap(todo[i - 1], todo[rng.next() % i]);
    }
    prev_last_edge = last_edge;
  }
  while (reads_left()) cycle(false, false, 0, 0, {});
  if (empty_lists == 0) chk.fail("no empty list in the run");
  if (full_lists == 0) chk.fail("no list of every position of its chunk in the run");
  if (LW > 1 && partial_words == 0) chk.fail("no partial word in the run");
  if (job.iterations >= 12 && back_to_back == 0) chk.fail("no chunk whose first word followed the last of the one before");
  dut.final();
  return chk.finish("kld_ring_lists " + std::to_string(G) + " groups, chunks of up to " + std::to_string(chunk) +
                    ", LIST_W " + std::to_string(LW) + ", " + std::to_string(job.iterations) + " chunks, " +
                    std::to_string(entries_checked) + " entries read, " + std::to_string(empty_lists) +
                    " empty and " + std::to_string(full_lists) + " full lists, " + std::to_string(partial_words) +
                    " partial words, " + std::to_string(back_to_back) + " chunks back to back, " +
                    std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
