// Block test of kld_ring_detect against the golden model (kaleido::run_reuse) and the ring's chunk
// cut (hw::ring_chunks, the model's). Each run draws a runtime configuration that fits the
// hardware (grid, K, tiling, window, policy, RoPE split, thresholds, enables; detect_common.hpp)
// and a correlated A, starts the block and streams A in scan order: per position LANE_GROUPS beats,
// beat p holding groups p*LANES + l on lane l (garbage on lanes past G), offered with random gaps
// (none in every third run) and held until taken. Every cycle it checks the decisions handed on:
// a valid lane's group is one the lane decides and exists, its word row is the word being
// assembled (rows in order), its lane names a position of that word in the model's cut (a chunk,
// at most CHUNK positions of one tile, starts a word of LIST_W), and its code is the golden
// model's (COMPUTE, or REUSE of the t/h/w neighbour). A commit comes exactly when the word's last
// pair is out, every (position, group) of the word once; codes_written_o counts the commits whose
// edge has passed (from the edge after the start on). A run of more words than the memory holds
// must hand on its first CODE_WORDS words only and raise codes_error_o. Also: no beat is taken
// in the start's cycle (the block takes the run's grid then) but one is in the next, none
// past the run's last, start_i is ignored while busy (stray pulses), and in a run without gaps
// each word is written RingDetectBlock::kDecideEdges edges after its last beat's take. The beat
// taken at an edge is presented in the cycle after it (a_beat_valid_o, a_beat_o as a_i held it,
// a_beat_chunk_last_o on the last beat of a chunk's last position), and no beat at other times.
#include <algorithm>
#include <map>
#include <set>

#include "Vkld_ring_detect.h"
#include "detect_common.hpp"
#include "hw/blocks.hpp"
#include "hw/ring_plan.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingDetectBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;
using namespace kld_detect;

int run(const Job& job) {
  const kaleido::hw::HwConfig& hw = job.hw;
  const int L = hw.det_lanes(), P = hw.lane_groups, gb = kaleido::clog2(hw.max_groups());
  const int words = job.raw.at("words").get<int>(), chunk = job.raw.at("chunk").get<int>();
  const int LW = job.raw.at("list_w").get<int>(), lb = RingListsBlock::lane_bits(LW);
  const bool want_overflow = job.raw.value("overflow", false);
  Vkld_ring_detect dut;
  Clock<Vkld_ring_detect> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  std::vector<Policy> policies;
  for (int p = 0; p < 3; ++p)
    if (hw.policies & (1u << p)) policies.push_back(static_cast<Policy>(p));

  dut.rst_ni = 0;
  dut.start_i = 0;
  dut.a_valid_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  int64_t pairs = 0, reused = 0, commits_total = 0, overflow_runs = 0, full_runs = 0, stray_starts = 0;
  int64_t steady_words = 0, by_axis[3] = {0, 0, 0};
  for (int64_t run = 0; run < job.iterations; ++run) {
    const Policy policy = policies[static_cast<size_t>(run % static_cast<int64_t>(policies.size()))];
    kaleido::ReuseConfig cfg = random_config(hw, rng, policy);
    const kaleido::IntMatrix a = correlated_a(cfg, rng);
    random_thresholds(cfg, a, rng);
    const kaleido::IntReuse gold = kaleido::run_reuse(cfg, a);
    const kaleido::ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
    const int G = cfg.groups();
    const bool steady = run % 3 == 2;
    const std::string name = "run " + std::to_string(run) + " (grid " + std::to_string(cfg.grid.t) + "x" +
                             std::to_string(cfg.grid.h) + "x" + std::to_string(cfg.grid.w) + ", tile " +
                             std::to_string(cfg.tile_h) + "x" + std::to_string(cfg.tile_w) + ", G " +
                             std::to_string(G) + ", window " + std::to_string(gold.window_depth) + ", " +
                             kaleido::policy_name(policy) + ")";
    // The model's words: the positions of each, in lane order.
    std::vector<std::vector<int64_t>> word_pos;
    for (const kaleido::hw::RingChunk& ch : kaleido::hw::ring_chunks(cfg, chunk))
      for (int64_t p = ch.p0; p < ch.p1; p += LW) {
        word_pos.emplace_back();
        for (int64_t q = p; q < std::min<int64_t>(p + LW, ch.p1); ++q) word_pos.back().push_back(q);
      }
    const int64_t run_words = static_cast<int64_t>(word_pos.size()), kept = std::min<int64_t>(run_words, words);
    (run_words > words ? overflow_runs : full_runs) += 1;

    dut.grid_t_i = static_cast<uint32_t>(cfg.grid.t);
    dut.grid_h_i = static_cast<uint32_t>(cfg.grid.h);
    dut.grid_w_i = static_cast<uint32_t>(cfg.grid.w);
    dut.tile_h_i = static_cast<uint32_t>(cfg.tile_h);
    dut.tile_w_i = static_cast<uint32_t>(cfg.tile_w);
    dut.groups_i = static_cast<uint32_t>(G);
    drive_detection(dut, hw, cfg, gold, rng);

    const int64_t beats = scan.size() * P;  // position p's beat b: groups b*LANES + l on lane l
    // The start: taken at the first edge (the block is idle between runs).
    if (dut.busy_o) chk.fail(name + ": busy_o before the start");
    dut.start_i = 1;
    const int64_t start_cycle = clock.cycle();
    int64_t next_beat = 0, commits = 0, beat_word = 0;
    bool offering = false;
    std::map<std::pair<int64_t, int>, int> delivered;  // (position, group) -> times handed on
    std::vector<int64_t> last_take(static_cast<size_t>(run_words), -1);  // cycle of a word's last beat's take
    std::set<int64_t> chunk_last;  // the last position of each chunk
    for (const kaleido::hw::RingChunk& ch : kaleido::hw::ring_chunks(cfg, chunk)) chunk_last.insert(ch.p1 - 1);
    const int beat_w = L * hw.group_w * hw.data_w;
    std::vector<uint64_t> taken_a;  // the beat taken at the last edge, 32 bits a word
    int64_t taken_beat = -1;        // ... its number, -1 for none
    while (true) {
      // The stream: a beat offered is held until taken; gaps at random (none in a steady run).
      if (!offering && next_beat < beats && (steady || rng.range(0, 3) != 0)) offering = true;
      if (offering)
        drive_beat(dut, a, scan, next_beat, hw, G, rng);
      else
        garbage_beat(dut, hw, rng);
      // Past the run's last beat, a garbage beat is offered at times: it must not be taken.
      const bool extra = !offering && next_beat == beats && rng.range(0, 2) == 0;
      dut.a_valid_i = offering || extra;
      if (clock.cycle() > start_cycle) {
        dut.start_i = rng.range(0, 15) == 0;
        stray_starts += dut.start_i;
      }
      clock.settle();
      if (clock.cycle() > start_cycle && !dut.busy_o) break;
      if (clock.cycle() - start_cycle > 4 * beats + 100) {
        chk.fail(name + ": the run did not end");
        break;
      }
      const std::string at = name + " cycle " + std::to_string(clock.cycle() - start_cycle);
      if (extra && dut.a_ready_o) chk.fail(at + ": a beat past the run's last would be taken");
      if (clock.cycle() == start_cycle && dut.a_ready_o) chk.fail(at + ": a beat would be taken with the start");
      if (clock.cycle() == start_cycle + 1 && !dut.a_ready_o) chk.fail(at + ": no beat taken after the start");
      if (clock.cycle() > start_cycle)  // the start's edge clears the last run's count
        chk.equal(static_cast<int64_t>(dut.codes_written_o), commits, at + ": codes_written_o");
      // The beat taken at the last edge is presented.
      chk.equal(dut.a_beat_valid_o, taken_beat >= 0, at + ": a_beat_valid_o");
      if (taken_beat >= 0) {
        for (int w = 0; w * 32 < beat_w; ++w)
          chk.equal(get_bits(dut.a_beat_o, w * 32, std::min(32, beat_w - w * 32)), taken_a[static_cast<size_t>(w)],
                    at + ": a_beat_o bits " + std::to_string(w * 32) + " up");
        chk.equal(dut.a_beat_chunk_last_o, taken_beat % P == P - 1 && chunk_last.count(taken_beat / P) == 1,
                  at + ": a_beat_chunk_last_o");
      }
      taken_beat = -1;
      // The decisions handed on: the word being assembled, a position of it, the golden code.
      const uint64_t valid = get_bits(dut.dec_valid_o, 0, L);
      const int64_t row = static_cast<int64_t>(dut.dec_row_o), lane = lb > 0 ? static_cast<int64_t>(dut.dec_lane_o) : 0;
      for (int l = 0; l < L; ++l) {
        if (!((valid >> l) & 1)) continue;
        const int g = static_cast<int>(get_bits(dut.dec_group_o, l * gb, gb));
        const std::string what = at + " lane " + std::to_string(l) + " group " + std::to_string(g) + " row " +
                                 std::to_string(row) + " lane " + std::to_string(lane);
        if (g % L != l || g >= G) {
          chk.fail(what + ": a group the lane does not decide, or past G");
          continue;
        }
        if (row != commits || row >= kept || lane >= static_cast<int64_t>(word_pos[static_cast<size_t>(row)].size())) {
          chk.fail(what + ": not a position of the word being assembled (row " + std::to_string(commits) + ")");
          continue;
        }
        const int64_t p = word_pos[static_cast<size_t>(row)][static_cast<size_t>(lane)];
        const kaleido::PairDecision& e = gold.at(scan.token_at(p), g);
        const bool want_reuse = e.kind == kaleido::PairKind::Reuse;
        chk.equal(get_bits(dut.dec_reuse_o, l, 1), want_reuse, what + ": reuse");
        if (want_reuse) {
          chk.equal(static_cast<int64_t>(get_bits(dut.dec_axis_o, 2 * l, 2)), static_cast<int>(e.axis),
                    what + ": axis");
          ++reused;
          ++by_axis[static_cast<int>(e.axis)];
        }
        ++pairs;
        ++delivered[{p, g}];
      }
      const bool commit = dut.dec_commit_o != 0;
      if (commit) {
        chk.equal(row, commits, at + ": the committed row");
        if (row < kept) {
          for (int64_t p : word_pos[static_cast<size_t>(row)])
            for (int g = 0; g < G; ++g)
              if (delivered[{p, g}] != 1)
                chk.fail(at + ": row " + std::to_string(row) + " committed with position " + std::to_string(p) +
                         " group " + std::to_string(g) + " handed on " + std::to_string(delivered[{p, g}]) +
                         " times");
          if (steady) {
            chk.equal(clock.cycle() - last_take[static_cast<size_t>(row)], RingDetectBlock::kDecideEdges,
                      at + ": edges from row " + std::to_string(row) + "'s last beat to its write");
            ++steady_words;
          }
        }
      }
      if (offering && dut.a_ready_o) {
        const int64_t p = next_beat / P;
        while (word_pos[static_cast<size_t>(beat_word)].back() < p) ++beat_word;
        if (p == word_pos[static_cast<size_t>(beat_word)].back() && next_beat % P == P - 1)
          last_take[static_cast<size_t>(beat_word)] = clock.cycle();
        taken_beat = next_beat;
        taken_a.clear();
        for (int w = 0; w * 32 < beat_w; ++w)
          taken_a.push_back(get_bits(dut.a_i, w * 32, std::min(32, beat_w - w * 32)));
        ++next_beat;
        offering = false;
      }
      clock.edge();
      commits += commit;
    }
    chk.equal(next_beat, beats, name + ": beats taken");
    chk.equal(commits, kept, name + ": words written");
    chk.equal(dut.codes_error_o, run_words > words, name + ": codes_error_o");
    commits_total += commits;
    // Idle: nothing is taken or handed on.
    dut.start_i = 0;
    for (int k = static_cast<int>(rng.range(1, 3)); k > 0; --k) {
      dut.a_valid_i = rng.range(0, 1);
      garbage_beat(dut, hw, rng);
      clock.settle();
      if (dut.a_ready_o || get_bits(dut.dec_valid_o, 0, L) || dut.dec_commit_o || dut.busy_o)
        chk.fail(name + ": active while idle");
      chk.equal(dut.codes_error_o, run_words > words, name + ": codes_error_o until the next start");
      clock.edge();
    }
  }
  if (want_overflow && overflow_runs == 0) chk.fail("no run past the code memory");
  if (full_runs == 0) chk.fail("no run inside the code memory");
  if (reused == 0 || reused == pairs) chk.fail("decisions were all REUSE or all COMPUTE: the test is too weak");
  for (int ax = 0; ax < 3; ++ax)
    if (by_axis[ax] == 0) chk.fail(std::string("no reuse along axis ") + kaleido::axis_name(static_cast<Axis>(ax)));
  if (steady_words == 0) chk.fail("no word written in a run without gaps");
  if (stray_starts == 0) chk.fail("no start_i while busy");
  dut.final();
  return chk.finish("kld_ring_detect LANES " + std::to_string(L) + " x LANE_GROUPS " + std::to_string(P) + ", " +
                    std::to_string(words) + " code words of LIST_W " + std::to_string(LW) + ", chunks of " +
                    std::to_string(chunk) + ", " + std::to_string(job.iterations) + " runs (" +
                    std::to_string(overflow_runs) + " past the memory), " + std::to_string(commits_total) +
                    " words written, " + std::to_string(pairs) + " pairs (" + std::to_string(reused) +
                    " reused: t " + std::to_string(by_axis[0]) + ", h " + std::to_string(by_axis[1]) + ", w " +
                    std::to_string(by_axis[2]) + "), " + std::to_string(stray_starts) + " stray starts, " +
                    std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
