// Block test of kld_ring_issue (the ring's pass engine issuing a built chunk's compute lists in
// lock-step k-tile passes): `iterations` chunks of 1 to CHUNK positions, each group's list drawn
// with a COMPUTE share of none, few, half, most, all or any (every seventh chunk all empty), in the
// two list buffers by turns. The harness plays the list memory (a registered read of the buffer
// and index the block drives; garbage past a list's end and for groups past the run's), the
// builder (a chunk offered at random cycles once its buffer's chunk before is issued, held until
// taken) and the weight loader (ready again 0 to 10 cycles after each pass begins). The run's
// groups are all of them (odd seeds) or one fewer (even seeds: the last k-tile is partial with
// several segments, and the last group's lengths are garbage in every cycle, to be ignored).
//
// What is checked, from the rule alone (docs/hardware.md, "The ring's issue"): a chunk's pass kt
// has max(1, longest list of groups kt*SEGS + s) reads, and segment s's beat in read i is entry i
// of its group's list when i is inside it; passes follow k-tile order and the chunks their order
// of offer. A pass begins at the first edge, from the one its predecessor's last read is at (or
// its chunk's take), at which the weights are ready (`pass_take_o` high then, and only then); a
// chunk is taken at the edge the last pass's last read is at (`chunk_done_o` high then, and only
// then), or any edge while nothing is issued (`chunk_ready_o`); a read's beat is out kIssueEdges
// edges later, and no beat otherwise.
// The run fails without chunks taken back to back, passes back to back, waits for weights or an
// empty pass.
#include <algorithm>
#include <deque>

#include "Vkld_ring_issue.h"
#include "hw/blocks.hpp"
#include "ring_common.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingIssueBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;

struct Beat {
  int64_t due = 0;  // the edge after which it is out
  kld_ring::IssueBeat beat;
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), S = c.segs();
  const int chunk = job.raw.at("chunk").get<int>(), LW = job.raw.at("list_w").get<int>();
  const int ew = RingListsBlock::entry_w(chunk, LW), lw = RingListsBlock::len_w(chunk);
  Vkld_ring_issue dut;
  Clock<Vkld_ring_issue> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  const int groups = job.seed % 2 == 1 || G == 1 ? G : G - 1;
  const int kts = (groups + S - 1) / S;

  // The chunks' lists: group g's COMPUTE positions in order.
  const auto nq = static_cast<size_t>(job.iterations);
  std::vector<std::vector<std::vector<int>>> lists(nq);
  const int shares[] = {0, 5, 50, 95, 100, -1};
  for (size_t q = 0; q < nq; ++q) {
    const int n = q % 5 == 0 ? chunk : static_cast<int>(rng.range(1, chunk));
    lists[q].assign(static_cast<size_t>(G), {});
    for (int g = 0; g < G; ++g) {
      int share = q % 7 == 3 ? 0 : shares[rng.range(0, 5)];
      if (share < 0) share = static_cast<int>(rng.range(0, 100));
      for (int p = 0; p < n; ++p)
        if (rng.range(0, 99) < share) lists[q][static_cast<size_t>(g)].push_back(p);
    }
  }
  auto list = [&](size_t q, int g) -> const std::vector<int>& { return lists[q][static_cast<size_t>(g)]; };
  // Reads of pass kt of chunk q: its longest list of the run's groups, at least one.
  auto reads = [&](size_t q, int kt) {
    size_t n = 1;
    for (int s = 0; s < S && kt * S + s < groups; ++s) n = std::max(n, list(q, kt * S + s).size());
    return static_cast<int>(n);
  };

  dut.rst_ni = 0;
  dut.chunk_valid_i = 0;
  dut.wt_ready_i = 0;
  dut.groups_i = static_cast<uint32_t>(groups);
  clock.edge();
  dut.rst_ni = 1;

  // The harness's side.
  int64_t in_buf[2] = {-1, -1};    // the chunk each list buffer holds
  size_t offered = 0;              // the next chunk to offer
  bool offering = false;
  int64_t wt_ready_from = static_cast<int64_t>(rng.range(0, 10));  // the loader's next pass ready from this cycle
  std::vector<uint64_t> entry_q(static_cast<size_t>(G), 0);        // the list memory's read register
  // The rule's state: the chunk issued, its pass, reads left in it, whether a pass waits to begin.
  int64_t cur = -1;
  int kt = 0, reads_left = 0, passes_begun = 0;
  bool waiting = false;
  std::deque<Beat> due;
  int64_t issued_chunks = 0, beats_checked = 0;
  int64_t back_to_back_chunks = 0, back_to_back_passes = 0, weight_waits = 0, empty_passes = 0;

  while (issued_chunks < static_cast<int64_t>(nq) || !due.empty()) {
    if (clock.cycle() > 400000) {
      chk.fail("the run did not end: " + std::to_string(issued_chunks) + " of " + std::to_string(nq) + " chunks issued");
      break;
    }
    const int64_t now = clock.cycle();
    // Offer the next chunk once its buffer's chunk before has been issued.
    const int b = static_cast<int>(offered & 1);
    if (!offering && offered < nq && (in_buf[b] < 0 || in_buf[b] < issued_chunks) && rng.range(0, 2) == 0) {
      offering = true;
      in_buf[b] = static_cast<int64_t>(offered);
    }
    dut.chunk_valid_i = offering;
    dut.chunk_buf_i = offering ? b : static_cast<int>(rng.next() & 1);
    // Lengths: the chunk in each buffer, garbage for groups past the run's (and empty buffers).
    for (int bb = 0; bb < 2; ++bb)
      for (int g = 0; g < G; ++g) {
        const bool real = in_buf[bb] >= 0 && g < groups;
        set_bits(dut.len_i, (bb * G + g) * lw, lw,
                 real ? static_cast<uint64_t>(list(static_cast<size_t>(in_buf[bb]), g).size())
                      : static_cast<uint64_t>(rng.range(0, chunk)));
      }
    const bool wt_ready = now >= wt_ready_from;
    dut.wt_ready_i = wt_ready;
    for (int g = 0; g < G; ++g) set_bits(dut.rd_entry_i, g * ew, ew, entry_q[static_cast<size_t>(g)]);
    clock.settle();

    // What the rule says of this cycle.
    const bool reading = cur >= 0 && reads_left > 0;
    const bool pass_ends = reading && reads_left == 1;
    const bool chunk_ends = pass_ends && kt == kts - 1;
    const bool ready = cur < 0 || chunk_ends;
    const bool take = offering && ready;
    const bool setup = take || (pass_ends && kt < kts - 1);
    const bool begin = (setup || waiting) && wt_ready;
    chk.equal(dut.chunk_ready_o, ready, "chunk_ready_o in cycle " + std::to_string(now));
    chk.equal(dut.pass_take_o, begin, "pass_take_o in cycle " + std::to_string(now));
    chk.equal(dut.chunk_done_o, chunk_ends, "chunk_done_o in cycle " + std::to_string(now));
    if ((setup || waiting) && !wt_ready) ++weight_waits;
    if (reading) {
      const int i = reads(static_cast<size_t>(cur), kt) - reads_left;
      Beat due_beat{now + RingIssueBlock::kIssueEdges,
                    {0, std::vector<int>(static_cast<size_t>(S), -1), kt, (passes_begun - 1) & 1, pass_ends,
                     chunk_ends, cur}};
      kld_ring::IssueBeat& bt = due_beat.beat;
      for (int s = 0; s < S && kt * S + s < groups; ++s) {
        const auto& l = list(static_cast<size_t>(cur), kt * S + s);
        if (static_cast<size_t>(i) < l.size()) {
          bt.valid |= 1ull << s;
          bt.pos[static_cast<size_t>(s)] = l[static_cast<size_t>(i)];
        }
      }
      if (i == 0 && bt.valid == 0) ++empty_passes;
      due.push_back(due_beat);
    }
    // The list memory reads what the block addresses (garbage past a list's end).
    const auto rd_buf = static_cast<int>(dut.rd_buf_o);
    for (int g = 0; g < G; ++g) {
      const auto idx = static_cast<size_t>(get_bits(dut.rd_index_o, g * ew, ew));
      const int64_t q = in_buf[rd_buf];
      const bool inside = q >= 0 && idx < list(static_cast<size_t>(q), g).size();
      entry_q[static_cast<size_t>(g)] =
          inside ? static_cast<uint64_t>(list(static_cast<size_t>(q), g)[idx]) : rng.next() & ((1ull << ew) - 1);
    }

    clock.edge();
    const int64_t edge = clock.cycle();
    // The rule's state after the edge.
    if (reading) --reads_left;
    if (chunk_ends) {
      ++issued_chunks;
      cur = -1;
    }
    if (pass_ends && !chunk_ends) {
      ++kt;
      waiting = true;
    }
    if (take) {
      back_to_back_chunks += chunk_ends;
      cur = static_cast<int64_t>(offered);
      ++offered;
      offering = false;
      kt = 0;
      waiting = true;
    }
    if (begin) {
      back_to_back_passes += pass_ends;
      waiting = false;
      reads_left = reads(static_cast<size_t>(cur), kt);
      ++passes_begun;
      wt_ready_from = rng.range(0, 2) == 0 ? edge : edge + static_cast<int64_t>(rng.range(1, 10));
    }

    // The beat due after this edge, or none.
    if (!due.empty() && due.front().due == edge) {
      kld_ring::check_beat(dut, chk, due.front().beat, S, ew, edge);
      due.pop_front();
      ++beats_checked;
    } else {
      const bool none = dut.beat_valid_o == 0 && !dut.beat_pass_last_o && !dut.beat_chunk_last_o;
      chk.equal(none, true, "no beat after edge " + std::to_string(edge));
    }
  }
  if (job.iterations >= 12 && back_to_back_chunks == 0) chk.fail("no chunk taken at the edge the one before ended");
  if (back_to_back_passes == 0 && kts > 1) chk.fail("no pass begun at the edge the one before ended");
  if (weight_waits == 0) chk.fail("no pass waited for its weights");
  if (empty_passes == 0) chk.fail("no pass of empty lists");
  dut.final();
  return chk.finish("kld_ring_issue " + std::to_string(groups) + " of " + std::to_string(G) + " groups on " +
                    std::to_string(S) + " segments (" + std::to_string(kts) + " k-tiles), chunks of up to " +
                    std::to_string(chunk) + ", LIST_W " + std::to_string(LW) + ", " + std::to_string(nq) + " chunks (" +
                    std::to_string(back_to_back_chunks) + " back to back), " + std::to_string(passes_begun) +
                    " passes (" + std::to_string(back_to_back_passes) + " back to back, " +
                    std::to_string(empty_passes) + " empty), " + std::to_string(weight_waits) + " cycles waiting for "
                    "weights, " + std::to_string(beats_checked) + " beats, " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
