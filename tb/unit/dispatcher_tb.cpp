// Block test of kld_dispatcher.
//
// Scan: after scan_clear_i the scan outputs must follow kaleido::ScanOrder
// position by position (token, and the next cycle's token on scan_token_next_o; slot = steps
// since the clear, modulo WIN_CAP
// (2 when WIN_CAP is 1), counting on across rounds, since the detector only
// needs slots relative to each other; reference availability within the tile
// and the window depth; the next cycle's t and h reference slots and whether
// they are at distance 1 or 2; last position), hold still in cycles without
// a step (scan_step_next_i, driven a cycle ahead), and wrap to position 0 after the last one (the
// detector rounds).
//
// Compute lists: at random scan positions random groups push the scan token
// (as the detector does for COMPUTE pairs). Then every k-tile pass rewinds
// (pass_start_i) and issues with ready_i random per segment: segment s must
// offer the list of group kt*SEGS + s exactly, in order, one token per cycle
// whenever it has work left (seg_valid_o never drops while work remains: no
// bubbles), advancing only on ready. pass_pending_o, pass_nonempty_o and
// pass_last_o must say what is left. Dense mode: every segment whose group
// exists issues tokens 0..N-1.
#include <algorithm>

#include "Vkld_dispatcher.h"
#include "golden/scan.hpp"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using namespace kld_unit;
using kaleido::Axis;

int run(const Job& job) {
  const kaleido::hw::HwConfig& hw = job.hw;
  const int tw = hw.token_w(), sw = kaleido::hw::DetectorBlock::slot_w(hw), segs = hw.segs();
  const int G = hw.max_groups(), rows = hw.rows;
  const int64_t cap = hw.window_cap();
  // Slots count modulo 2^SW: WIN_CAP, or 2 when WIN_CAP is 1 (a slot index has at least one bit).
  const uint64_t slots = uint64_t{1} << sw;
  Vkld_dispatcher dut;
  Clock<Vkld_dispatcher> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  auto quiet = [&]() {
    dut.scan_clear_i = 0;
    dut.scan_step_next_i = 0;
    dut.list_clear_i = 0;
    set_bits(dut.push_i, 0, G, 0);
    dut.pass_start_i = 0;
    dut.issue_en_i = 0;
    set_bits(dut.ready_i, 0, segs, 0);
    set_bits(dut.final_i, 0, segs, segs >= 64 ? ~uint64_t{0} : (uint64_t{1} << segs) - 1);  // lists complete
  };
  quiet();
  dut.rst_ni = 0;
  clock.settle();
  dut.rst_ni = 1;

  int64_t positions = 0, pushes = 0, issues = 0, passes = 0, not_ready = 0;
  for (int64_t trial = 0; trial < job.iterations; ++trial) {
    const kaleido::Grid grid{static_cast<int>(rng.range(1, hw.max_t)), static_cast<int>(rng.range(1, hw.max_h)),
                             static_cast<int>(rng.range(1, hw.max_w))};
    const int tile_h = static_cast<int>(rng.range(1, grid.h)), tile_w = static_cast<int>(rng.range(1, grid.w));
    const int64_t win = rng.range(0, 5) == 0 ? rng.range(0, 1) : rng.range(1, cap);
    const int groups = static_cast<int>(rng.range(1, G));
    const kaleido::ScanOrder scan(grid, tile_h, tile_w);
    const int64_t N = scan.size();
    const std::string trial_name = "trial " + std::to_string(trial) + " (grid " + std::to_string(grid.t) + "x" +
                                   std::to_string(grid.h) + "x" + std::to_string(grid.w) + ", tile " +
                                   std::to_string(tile_h) + "x" + std::to_string(tile_w) + ", window " +
                                   std::to_string(win) + ", groups " + std::to_string(groups) + ")";
    quiet();
    set_bits(dut.dim_t_i, 0, 16, static_cast<uint64_t>(grid.t));
    set_bits(dut.dim_h_i, 0, 16, static_cast<uint64_t>(grid.h));
    set_bits(dut.dim_w_i, 0, 16, static_cast<uint64_t>(grid.w));
    set_bits(dut.tile_h_i, 0, 16, static_cast<uint64_t>(tile_h));
    set_bits(dut.tile_w_i, 0, 16, static_cast<uint64_t>(tile_w));
    set_bits(dut.win_i, 0, 32, static_cast<uint64_t>(win));
    set_bits(dut.n_i, 0, tw + 1, static_cast<uint64_t>(N));
    set_bits(dut.groups_i, 0, 16, static_cast<uint64_t>(groups));
    dut.dense_i = 0;
    dut.scan_clear_i = 1;
    dut.list_clear_i = 1;
    // The step is decided a cycle ahead (scan_step_next_i): the first position's, at the clear.
    bool step_next = rng.range(0, 4) != 0;
    dut.scan_step_next_i = step_next;
    clock.edge();
    quiet();

    // ---- scan rounds with pushes ----
    std::vector<std::vector<int64_t>> lists(static_cast<size_t>(G));
    const int rounds = static_cast<int>(rng.range(1, 3));
    std::vector<int64_t> push_percent(static_cast<size_t>(G));
    for (auto& p : push_percent) p = std::vector<int64_t>{0, 30, 80, 100}[static_cast<size_t>(rng.range(0, 3))];
    int64_t steps = 0;
    for (int r = 0; r < rounds; ++r)
      for (int64_t p = 0; p < N; ++p) {
        const bool step = step_next;
        const bool scan_over = step && r == rounds - 1 && p == N - 1;
        step_next = !scan_over && rng.range(0, 4) != 0;
        const int32_t tok = scan.token_at(p);
        dut.scan_step_next_i = step_next;
        uint64_t push = 0;
        if (step)
          for (int g = r; g < groups; g += rounds)  // round r decides groups r, r+rounds, ...
            if (rng.range(0, 99) < push_percent[static_cast<size_t>(g)]) {
              push |= uint64_t{1} << g;
              lists[static_cast<size_t>(g)].push_back(tok);
              ++pushes;
            }
        set_bits(dut.push_i, 0, G, push);
        set_bits(dut.push_token_i, 0, tw, static_cast<uint64_t>(tok));
        clock.settle();
        const std::string at = trial_name + " round " + std::to_string(r) + " position " + std::to_string(p);
        const uint64_t slot = static_cast<uint64_t>(steps) % slots;
        chk.equal(static_cast<int64_t>(dut.scan_token_o), tok, at + ": scan_token_o");
        // The token of the next cycle's position (the detector's A read a cycle ahead).
        const int64_t next_tok = step ? scan.token_at(p + 1 == N ? 0 : p + 1) : tok;
        chk.equal(static_cast<int64_t>(dut.scan_token_next_o), next_tok, at + ": scan_token_next_o");
        chk.equal(static_cast<int64_t>(get_bits(dut.scan_slot_o, 0, sw)), static_cast<int64_t>(slot), at + ": scan_slot_o");
        chk.equal(dut.scan_last_o, p == N - 1, at + ": scan_last_o");
        // The next cycle's position (p again when not stepping) and its slot count.
        const int64_t next_p = step ? (p + 1 == N ? 0 : p + 1) : p, next_steps = steps + (step ? 1 : 0);
        for (int ax = 0; ax < 3; ++ax) {
          const int32_t ref = scan.reference(tok, static_cast<Axis>(ax));
          const int64_t dist = ref >= 0 ? p - scan.pos_of(ref) : 0;
          const bool avail = ref >= 0 && dist <= win;
          const std::string an = std::string(" axis ") + kaleido::axis_name(static_cast<Axis>(ax));
          chk.equal(static_cast<int64_t>(get_bits(dut.scan_avail_o, ax, 1)), avail, at + an + ": scan_avail_o");
          if (ax == 2) continue;  // the w reference is always the previous position: no slot, no flag
          const int32_t next_ref = scan.reference(scan.token_at(next_p), static_cast<Axis>(ax));
          const int64_t next_dist = next_ref >= 0 ? next_p - scan.pos_of(next_ref) : 0;
          if (next_ref >= 0 && next_dist <= win) {
            chk.equal(static_cast<int64_t>(get_bits(dut.scan_ref_slot_next_o, ax * sw, sw)),
                      static_cast<int64_t>(static_cast<uint64_t>(next_steps - next_dist) % slots),
                      at + an + ": scan_ref_slot_next_o (the next position's reference)");
            chk.equal(static_cast<int64_t>(get_bits(dut.scan_ref_near_next_o, ax, 1)), next_dist == 1,
                      at + an + ": scan_ref_near_next_o");
            chk.equal(static_cast<int64_t>(get_bits(dut.scan_ref_two_next_o, ax, 1)), next_dist == 2,
                      at + an + ": scan_ref_two_next_o");
          }
        }
        clock.edge();
        ++positions;
        if (step) ++steps;
        else --p;  // the same position again
      }
    set_bits(dut.push_i, 0, G, 0);
    dut.scan_step_next_i = 0;

    // ---- passes: reuse mode, then dense mode ----
    const int k = groups * hw.group_w;
    const int kt_count = (k + rows - 1) / rows;
    for (int dense = 0; dense < 2; ++dense) {
      dut.dense_i = dense;
      for (int kt = 0; kt < kt_count; ++kt) {
        ++passes;
        set_bits(dut.kt_i, 0, 16, static_cast<uint64_t>(kt));
        dut.pass_start_i = 1;
        clock.edge();
        dut.pass_start_i = 0;
        for (int64_t idle = rng.range(0, 2); idle > 0; --idle) clock.edge();  // LOADW: no issue

        std::vector<std::vector<int64_t>> work(static_cast<size_t>(segs));
        for (int s = 0; s < segs; ++s) {
          const int g = kt * segs + s;
          if (g >= groups) continue;
          if (dense)
            for (int64_t t = 0; t < N; ++t) work[static_cast<size_t>(s)].push_back(t);
          else
            work[static_cast<size_t>(s)] = lists[static_cast<size_t>(g)];
        }
        std::vector<size_t> ptr(static_cast<size_t>(segs), 0);
        std::vector<int64_t> ready_percent(static_cast<size_t>(segs));
        for (auto& p : ready_percent) p = std::vector<int64_t>{15, 50, 100}[static_cast<size_t>(rng.range(0, 2))];
        bool any_work = false;
        for (const auto& w : work) any_work = any_work || !w.empty();
        dut.issue_en_i = 1;
        const std::string pass_name = trial_name + (dense ? " dense" : " reuse") + " pass kt " + std::to_string(kt);
        for (int64_t cyc = 0;; ++cyc) {
          uint64_t ready = 0;
          for (int s = 0; s < segs; ++s)
            if (rng.range(0, 99) < ready_percent[static_cast<size_t>(s)]) ready |= uint64_t{1} << s;
          set_bits(dut.ready_i, 0, segs, ready);
          clock.settle();
          const std::string at = pass_name + " cycle " + std::to_string(cyc);
          bool pending = false, last = true;
          for (int s = 0; s < segs; ++s) {
            const auto& w = work[static_cast<size_t>(s)];
            size_t& q = ptr[static_cast<size_t>(s)];
            const bool left = q < w.size();
            const bool rdy = (ready >> s) & 1u;
            pending = pending || left;
            last = last && (!left || (rdy && q + 1 == w.size()));
            const std::string sat = at + " segment " + std::to_string(s);
            chk.equal(static_cast<int64_t>(get_bits(dut.seg_valid_o, s, 1)), left, sat + ": seg_valid_o");
            if (left) {
              chk.equal(static_cast<int64_t>(get_bits(dut.seg_token_o, s * tw, tw)), w[q],
                        sat + ": seg_token_o (entry " + std::to_string(q) + ")");
              if (rdy) {
                ++q;
                ++issues;
              } else {
                ++not_ready;
              }
            }
          }
          chk.equal(dut.pass_pending_o, pending, at + ": pass_pending_o");
          chk.equal(dut.pass_nonempty_o, any_work, at + ": pass_nonempty_o");
          chk.equal(dut.pass_last_o, last, at + ": pass_last_o");
          clock.edge();
          if (last || cyc > 100 * (N + 10)) break;
        }
        for (int s = 0; s < segs; ++s)
          if (ptr[static_cast<size_t>(s)] != work[static_cast<size_t>(s)].size())
            chk.fail(pass_name + " segment " + std::to_string(s) + ": issued " + std::to_string(ptr[static_cast<size_t>(s)]) +
                     " of " + std::to_string(work[static_cast<size_t>(s)].size()) + " tokens when the pass ended");
        // After the last issue nothing more is offered, even with ISSUE still on.
        clock.settle();
        chk.equal(static_cast<int64_t>(get_bits(dut.seg_valid_o, 0, segs)), 0, pass_name + " after the pass: seg_valid_o");
        chk.equal(dut.pass_pending_o, 0, pass_name + " after the pass: pass_pending_o");
        dut.issue_en_i = 0;
      }
    }
  }
  if (not_ready == 0) chk.fail("ready_i was never low while a segment had work: the test is too weak");
  dut.final();
  return chk.finish("kld_dispatcher SEGS " + std::to_string(segs) + " MAX_G " + std::to_string(G) + " WIN_CAP " +
                    std::to_string(cap) + ", " + std::to_string(job.iterations) + " trials, " +
                    std::to_string(positions) + " scan cycles, " + std::to_string(pushes) + " pushes, " +
                    std::to_string(passes) + " passes, " + std::to_string(issues) + " issues, " +
                    std::to_string(not_ready) + " not-ready cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
