// Block test of kld_ring_a_replay: `iterations` passes, each segment's list of 0 to CHUNK groups of
// random A (every sixth pass empty in every segment, every fifth a list of CHUNK in some segment),
// streamed in the pass's order: a beat carries the next group of any segments drawn at random
// (the others wait), the pass's last beat flagged (an empty pass: a beat of no lane), in stretches
// that offer a beat every cycle or one in four, with garbage while none is offered. An issue, in
// stretches that move every cycle, one in three or not at all, begins the passes in order, each
// once pass_ready_o shows it (a begin while none is ready must be ignored), and reads each
// segment's list of the pass in order, back to back or not; a segment whose FIFO is empty reads at random, which must be ignored. Every cycle checks
// in_ready_o (room in every FIFO and in the pass count) and pass_ready_o against the model, and
// every segment's rd_valid_o and rd_a_o read_edges edges after a read: the group streamed in that
// place of its list, or, while the segment does not read, its last read's.
#include <algorithm>
#include <deque>

#include "Vkld_ring_a_replay.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingAReplayBlock;
using namespace kld_unit;

struct Pass {
  std::vector<std::vector<uint64_t>> lists;  // per segment, in order
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int S = c.segs(), gbits = c.group_w * c.data_w, chunk = job.raw.at("chunk").get<int>();
  const int D = RingAReplayBlock::fifo_words(chunk), RE = RingAReplayBlock::read_edges(chunk);
  const int64_t pass_cap = (int64_t{1} << kaleido::clog2(D + 2)) - 1;
  const uint64_t gmask = gbits >= 64 ? ~0ull : (1ull << gbits) - 1;
  auto sz = [](int i) { return static_cast<size_t>(i); };
  Vkld_ring_a_replay dut;
  Clock<Vkld_ring_a_replay> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  dut.rst_ni = 0;
  dut.in_valid_i = 0;
  dut.pass_begin_i = 0;
  dut.rd_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  // The source: passes drawn as they are streamed; each segment's next group to send.
  int64_t made = 0, empty_passes = 0, full_lists = 0, full_waits = 0, stray_begins = 0, stray_reads = 0;
  int64_t reads_checked = 0;
  Pass sending;
  std::vector<size_t> sent(sz(S), 0);
  auto next_pass = [&] {
    sending = Pass();
    std::fill(sent.begin(), sent.end(), 0);
    if (made == job.iterations) return false;
    const bool empty = made % 6 == 5, full = made % 5 == 4;
    const int full_seg = static_cast<int>(rng.range(0, S - 1));
    for (int s = 0; s < S; ++s) {
      const int n = empty ? 0 : (full && s == full_seg) ? chunk : static_cast<int>(rng.range(0, chunk));
      full_lists += n == chunk;
      std::vector<uint64_t> list;
      for (int i = 0; i < n; ++i) list.push_back(rng.next() & gmask);
      sending.lists.push_back(list);
    }
    empty_passes += empty;
    ++made;
    return true;
  };
  bool streaming = next_pass();
  std::deque<Pass> complete;         // passes all in, not begun (the model's pass count)
  std::vector<std::deque<uint64_t>> fifo(sz(S));  // each segment's entries, in order
  // The issue: the pass begun and each segment's reads of it left.
  std::vector<int> to_read(sz(S), 0);
  int64_t passes_done = 0;
  std::deque<std::vector<std::pair<bool, uint64_t>>> in_flight;
  std::vector<uint64_t> shown(sz(S), 0);
  // Paces, switched at random after stretches of about 10 + 2 CHUNK cycles: the source fast or
  // slow; the issue fast, slow, or paused (so the FIFOs fill even at lists of 100).
  bool fast_source = true;
  int issue_pace = 0;  // 0 every cycle, 1 one in three, 2 paused

  auto reads_left = [&] { return std::any_of(to_read.begin(), to_read.end(), [](int n) { return n > 0; }); };
  int drain = RE + 2;  // idle cycles at the end, for the last reads
  for (int64_t guard = 0; streaming || !complete.empty() || reads_left() || drain-- > 0; ++guard) {
    if (guard > 200 * (job.iterations + 1) * (chunk + 2)) {
      chk.fail("the run did not end: " + std::to_string(passes_done) + " of " + std::to_string(made) + " passes");
      break;
    }
    if (rng.range(0, 9 + 2 * chunk) == 0) fast_source = !fast_source;
    if (rng.range(0, 9 + 2 * chunk) == 0) issue_pace = static_cast<int>(rng.range(0, 2));
    const bool issue_moves = issue_pace == 0 || (issue_pace == 1 && rng.range(0, 2) == 0);
    // The source's beat: the next group of a random set of the segments that have one left.
    const bool offer = streaming && (fast_source || rng.range(0, 3) == 0);
    uint64_t lanes = 0;
    bool pass_last = false;
    if (offer) {
      std::vector<int> left;
      for (int s = 0; s < S; ++s)
        if (sent[sz(s)] < sending.lists[sz(s)].size()) left.push_back(s);
      for (int s : left)
        if (rng.range(0, 2) != 0) lanes |= uint64_t{1} << s;
      if (lanes == 0 && !left.empty()) lanes = uint64_t{1} << left[rng.next() % left.size()];
      pass_last = true;
      for (int s = 0; s < S; ++s)
        pass_last = pass_last && sent[sz(s)] + ((lanes >> s) & 1) == sending.lists[sz(s)].size();
    }
    dut.in_valid_i = offer;
    set_bits(dut.in_lanes_i, 0, S, offer ? lanes : rng.next());
    for (int s = 0; s < S; ++s)
      set_bits(dut.in_a_i, s * gbits, gbits,
               (lanes >> s) & 1 ? sending.lists[sz(s)][sent[sz(s)]] : rng.next());
    dut.in_pass_last_i = offer ? pass_last : (rng.next() & 1);
    // The issue: begin the next pass once the last one's reads are done, else read.
    const bool reading = reads_left();
    const bool begin = !reading && !complete.empty() && issue_moves;
    const bool stray_begin = !reading && complete.empty() && rng.range(0, 2) == 0;
    stray_begins += stray_begin;
    dut.pass_begin_i = begin || stray_begin;
    std::vector<std::pair<bool, uint64_t>> want(sz(S), {false, 0});
    uint64_t rd = 0;
    for (int s = 0; s < S; ++s) {
      if (to_read[sz(s)] > 0 && (issue_pace == 0 || (issue_pace == 1 && rng.range(0, 2) == 0))) {
        rd |= uint64_t{1} << s;
        want[sz(s)] = {true, fifo[sz(s)].front()};
      } else if (fifo[sz(s)].empty() && rng.range(0, 5) == 0) {
        rd |= uint64_t{1} << s;  // a read of an empty FIFO: ignored
        ++stray_reads;
      }
    }
    set_bits(dut.rd_i, 0, S, rd);
    in_flight.push_back(want);
    clock.settle();
    const std::string at = "cycle " + std::to_string(clock.cycle());
    bool room = static_cast<int64_t>(complete.size()) < pass_cap;
    for (int s = 0; s < S; ++s) room = room && static_cast<int>(fifo[sz(s)].size()) < D;
    chk.equal(dut.in_ready_o, room, at + " in_ready_o");
    chk.equal(dut.pass_ready_o, !complete.empty(), at + " pass_ready_o");
    clock.edge();

    // The model at the edge: the reads, the begin, the beat taken.
    for (int s = 0; s < S; ++s)
      if (want[sz(s)].first) {
        fifo[sz(s)].pop_front();
        --to_read[sz(s)];
      }
    if (begin) {
      for (int s = 0; s < S; ++s) to_read[sz(s)] = static_cast<int>(complete.front().lists[sz(s)].size());
      complete.pop_front();
      ++passes_done;
    }
    full_waits += offer && !room;
    if (offer && room) {
      for (int s = 0; s < S; ++s)
        if ((lanes >> s) & 1) fifo[sz(s)].push_back(sending.lists[sz(s)][sent[sz(s)]++]);
      if (pass_last) {
        complete.push_back(sending);
        streaming = next_pass();
      }
    }
    if (static_cast<int>(in_flight.size()) == RE) {
      const std::vector<std::pair<bool, uint64_t>> got = in_flight.front();
      in_flight.pop_front();
      for (int s = 0; s < S; ++s) {
        const std::string what = "cycle " + std::to_string(clock.cycle()) + " segment " + std::to_string(s);
        chk.equal(get_bits(dut.rd_valid_o, s, 1), got[sz(s)].first, what + " rd_valid_o");
        if (got[sz(s)].first) {
          shown[sz(s)] = got[sz(s)].second;
          ++reads_checked;
        }
        chk.equal(static_cast<int64_t>(get_bits(dut.rd_a_o, s * gbits, gbits)), static_cast<int64_t>(shown[sz(s)]),
                  what + " rd_a_o");
      }
    }
  }
  for (const auto& [n, what] : {std::pair<int64_t, const char*>{full_waits, "no beat waited for room"},
                                {empty_passes, "no empty pass"},
                                {full_lists, "no list of CHUNK groups"},
                                {stray_begins, "no begin while no pass was ready"},
                                {stray_reads, "no read of an empty FIFO"}})
    if (n == 0) chk.fail(what);
  dut.final();
  return chk.finish("kld_ring_a_replay " + std::to_string(S) + " segment(s), CHUNK " + std::to_string(chunk) +
                    ", FIFOs of " + std::to_string(D) + ", reads of " + std::to_string(RE) + " edges: " +
                    std::to_string(made) + " passes (" + std::to_string(empty_passes) + " empty, " +
                    std::to_string(full_lists) + " lists of CHUNK), " + std::to_string(full_waits) +
                    " beats waiting for room, " + std::to_string(stray_begins) + " stray begins, " +
                    std::to_string(stray_reads) + " stray reads, " + std::to_string(reads_checked) +
                    " groups read, " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
