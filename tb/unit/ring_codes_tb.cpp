// Block test of kld_ring_codes: `iterations` chunks of 1 to `chunk` positions, each position's G
// decisions (COMPUTE share per chunk drawn from none, few, half, most, all or any; REUSE axes at
// random) fed in batches of 1 to LANES groups on random lanes, the other lanes invalid with
// garbage, with random idle cycles between; a chunk's words take the next rows, round the memory
// (so rows are overwritten, and a partial word must not keep an older word's codes); a memory of
// more than 16 words, round 12 rows drawn over all of it (its parts). Every cycle
// reads a random row already written, the one being written among them (a read at its write's
// edge returns the old word), and checks the codes read_edges(words) edges later. The expectation does not use the block's structure: a row holds its
// word's codes, lane i group g at (i*G + g)*2, code 0 for COMPUTE and axis + 1 for REUSE, and 0 in
// the lanes after a chunk's last position.
#include <algorithm>
#include <deque>
#include <numeric>

#include "Vkld_ring_codes.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingCodesBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), L = c.det_lanes(), gb = kaleido::clog2(G);
  const int words = job.raw.at("words").get<int>(), LW = job.raw.at("list_w").get<int>();
  const int chunk = job.raw.at("chunk").get<int>(), lg = RingListsBlock::lane_bits(LW);
  const int rw = kaleido::clog2(words), read_edges = RingCodesBlock::read_edges(words);
  Vkld_ring_codes dut;
  Clock<Vkld_ring_codes> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  auto slot = [&](int i, int g) { return static_cast<size_t>(i * G + g); };

  dut.rst_ni = 0;
  dut.dec_valid_i = 0;
  dut.dec_commit_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  std::vector<std::vector<int>> mem(static_cast<size_t>(words));  // empty: never written
  int64_t reads_checked = 0, partial_words = 0, overwrites = 0, same_edge_reads = 0, words_written = 0;

  // Reads in flight: the row and the codes it held at its read's edge (none: not yet written).
  std::deque<std::pair<int, std::vector<int>>> in_flight;

  // One cycle: the lanes' decisions (lane l deciding group groups[l] of the position at `lane`,
  // or garbage when groups[l] < 0), a read, the edge, then the comparison of the read
  // read_edges edges old.
  auto cycle = [&](const std::vector<int>& groups, const std::vector<int>& codes, int lane, int row, bool commit,
                   const std::vector<int>& word) {
    uint64_t valid = 0;
    for (int l = 0; l < L; ++l) {
      const bool v = groups[static_cast<size_t>(l)] >= 0;
      const int code = v ? codes[static_cast<size_t>(l)] : static_cast<int>(rng.next() & 3);
      valid |= static_cast<uint64_t>(v) << l;
      set_bits(dut.dec_group_i, l * gb, gb, v ? static_cast<uint64_t>(groups[static_cast<size_t>(l)]) : rng.next());
      set_bits(dut.dec_reuse_i, l, 1, code != 0 ? 1 : (v ? 0 : rng.next() & 1));
      set_bits(dut.dec_axis_i, 2 * l, 2, code != 0 ? static_cast<uint64_t>(code - 1) : rng.next() & 3);
    }
    set_bits(dut.dec_valid_i, 0, L, valid);
    dut.dec_lane_i = lg > 0 ? static_cast<uint64_t>(lane >= 0 ? lane : static_cast<int>(rng.next() % LW)) : 0;
    dut.dec_row_i = row >= 0 ? row : static_cast<int>(rng.next() % words);
    dut.dec_commit_i = commit;
    std::vector<int> written;
    for (int r = 0; r < words; ++r)
      if (!mem[static_cast<size_t>(r)].empty()) written.push_back(r);
    int rd = static_cast<int>(rng.next() % (1ull << rw));
    if (!written.empty()) {
      rd = commit && row >= 0 && !mem[static_cast<size_t>(row)].empty() && rng.range(0, 3) == 0
               ? row
               : written[rng.next() % written.size()];
      if (commit && rd == row) ++same_edge_reads;
    }
    dut.rd_row_i = rd;
    in_flight.emplace_back(rd, rd < words ? mem[static_cast<size_t>(rd)] : std::vector<int>());
    clock.edge();
    if (commit) {
      overwrites += !mem[static_cast<size_t>(row)].empty();
      mem[static_cast<size_t>(row)] = word;
      ++words_written;
    }
    if (static_cast<int>(in_flight.size()) < read_edges) return;
    const auto [read_row, want] = in_flight.front();
    in_flight.pop_front();
    if (want.empty()) return;
    for (int i = 0; i < LW; ++i)
      for (int g = 0; g < G; ++g) {
        chk.equal(static_cast<int64_t>(get_bits(dut.rd_code_o, static_cast<int>(slot(i, g)) * 2, 2)),
                  want[slot(i, g)],
                  "cycle " + std::to_string(clock.cycle()) + " row " + std::to_string(read_row) + " lane " +
                      std::to_string(i) + " group " + std::to_string(g));
        ++reads_checked;
      }
  };
  auto idle = [&] { cycle(std::vector<int>(static_cast<size_t>(L), -1), {}, -1, -1, false, {}); };

  // The rows the words take in turn.
  std::vector<int> rows(static_cast<size_t>(std::min(words, 16)));
  if (words <= 16) {
    std::iota(rows.begin(), rows.end(), 0);
  } else {
    std::vector<int> all(static_cast<size_t>(words));
    std::iota(all.begin(), all.end(), 0);
    for (size_t k = all.size(); k > 1; --k) std::swap(all[k - 1], all[rng.next() % k]);
    rows.assign(all.begin(), all.begin() + 12);
  }
  const int shares[] = {0, 5, 50, 95, 100, -1};
  size_t next_row = 0;
  for (int64_t q = 0; q < job.iterations; ++q) {
    int n = static_cast<int>(rng.range(1, chunk));
    if (q % 5 == 1) n = chunk;
    int share = shares[rng.range(0, 5)];
    if (share < 0) share = static_cast<int>(rng.range(0, 100));
    for (int w0 = 0; w0 < n; w0 += LW) {
      const int in_word = std::min(LW, n - w0), row = rows[next_row];
      next_row = (next_row + 1) % rows.size();
      if (in_word < LW) ++partial_words;
      std::vector<int> word(static_cast<size_t>(LW * G), 0);
      for (int i = 0; i < in_word; ++i) {
        for (int g = 0; g < G; ++g)
          word[slot(i, g)] = rng.range(0, 99) < share ? 0 : static_cast<int>(rng.range(1, 3));
        // The position's groups in a random order, in batches of 1 to LANES on distinct random lanes.
        std::vector<int> order(static_cast<size_t>(G));
        std::iota(order.begin(), order.end(), 0);
        for (size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[rng.next() % k]);
        for (size_t k = 0; k < order.size();) {
          if (rng.range(0, 3) == 0) idle();
          const size_t batch = std::min(order.size() - k, static_cast<size_t>(rng.range(1, L)));
          std::vector<int> lanes(static_cast<size_t>(L));
          std::iota(lanes.begin(), lanes.end(), 0);
          for (size_t j = lanes.size(); j > 1; --j) std::swap(lanes[j - 1], lanes[rng.next() % j]);
          std::vector<int> groups(static_cast<size_t>(L), -1), codes(static_cast<size_t>(L), 0);
          for (size_t b = 0; b < batch; ++b) {
            const auto l = static_cast<size_t>(lanes[b]);
            groups[l] = order[k + b];
            codes[l] = word[slot(i, order[k + b])];
          }
          k += batch;
          const bool last = i == in_word - 1 && k == order.size();
          cycle(groups, codes, i, row, last, word);
        }
      }
    }
  }
  for (int k = 0; k < 4; ++k) idle();
  if (LW > 1 && partial_words == 0) chk.fail("no partial word in the run");
  if (overwrites == 0) chk.fail("no row written twice in the run");
  if (same_edge_reads == 0) chk.fail("no read of a row at the edge it was written");
  dut.final();
  return chk.finish("kld_ring_codes " + std::to_string(G) + " groups, " + std::to_string(L) + " lanes, " +
                    std::to_string(words) + " words of LIST_W " + std::to_string(LW) + " (" +
                    std::to_string(RingCodesBlock::parts(words)) + " part(s), reads of " +
                    std::to_string(read_edges) + " edge(s)), " +
                    std::to_string(job.iterations) + " chunks of up to " + std::to_string(chunk) + ", " +
                    std::to_string(words_written) + " words written (" + std::to_string(partial_words) +
                    " partial, " + std::to_string(overwrites) + " over an older one), " +
                    std::to_string(reads_checked) + " codes read, " + std::to_string(same_edge_reads) +
                    " reads at their row's write, " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
