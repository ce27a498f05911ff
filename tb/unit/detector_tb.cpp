// Block test of kld_detector against the golden model (kaleido::run_reuse).
//
// Each trial draws a runtime configuration that fits the hardware (grid,
// K, tiling, window depth, policy and axis list, RoPE band split,
// thresholds, enables) and a correlated A with extreme values mixed in. The
// harness drives the scan inputs as kld_dispatcher does, computed here from
// kaleido::ScanOrder: for each detector round and scan position the token,
// its window slot, and per axis whether the reference exists in the tile and
// lies within the window, and, a cycle ahead, the t and h references' slots
// and whether they are at distance 1 or 2 (LANE_GROUPS 1) or the phase
// (LANE_GROUPS 2). Lane l of round r decides group r*LANES + l; the rounds
// come in sets of LANE_GROUPS that take turns at each scan position. A
// position is decided in two stages: it steps in (step_next_i, a cycle ahead)
// and is decided in the next cycle that advances (retire_next_i, a cycle
// ahead), while the next position steps in.
// Every (token, group) decision (REUSE or COMPUTE, the axis, the root) must
// equal the golden model's.
//
// Things the detector must ignore are randomised: the slots of unavailable
// references, the axis list outside the fixed policy, the inputs of lanes
// without a group, and every input in held cycles without a step or a retire (a decision waits; the position is presented with garbage and must
// not write the window).
#include <algorithm>

#include "Vkld_detector.h"
#include "golden/reuse.hpp"
#include "golden/scan.hpp"
#include "hw/blocks.hpp"
#include "detect_common.hpp"
#include "unit_common.hpp"

namespace {

using namespace kld_unit;
using namespace kld_detect;
using kaleido::Axis;
using kaleido::Policy;

// The ports of one lane kind only: the distance-2 flags (LANE_GROUPS 1), the phase (LANE_GROUPS 2).
template <class Dut>
auto set_ref_two_next(Dut& d, uint64_t v, int) -> decltype(d.ref_two_next_i = 0, void()) {
  set_bits(d.ref_two_next_i, 0, 2, v);
}
template <class Dut>
void set_ref_two_next(Dut&, uint64_t, long) {}
template <class Dut>
auto set_phase_next(Dut& d, int v, int) -> decltype(d.phase_next_i = 0, void()) {
  d.phase_next_i = static_cast<uint8_t>(v);
}
template <class Dut>
void set_phase_next(Dut&, int, long) {}

int run(const Job& job) {
  const kaleido::hw::HwConfig& hw = job.hw;
  const int lanes = hw.det_lanes(), gw = hw.group_w, dw = hw.data_w, tw = hw.token_w(), tauw = hw.tau_w();
  const int sw = kaleido::hw::DetectorBlock::slot_w(hw);
  const int64_t cap = hw.window_cap();
  Vkld_detector dut;
  Clock<Vkld_detector> clock(dut);
  Checker chk(job);
  dut.step_next_i = 0;
  dut.retire_next_i = 0;
  dut.rst_ni = 0;
  clock.settle();
  dut.rst_ni = 1;
  kaleido::Rng rng(job.seed);
  std::vector<Policy> policies;
  for (int p = 0; p < 3; ++p)
    if (hw.policies & (1u << p)) policies.push_back(static_cast<Policy>(p));

  int64_t pairs = 0, reused = 0, stalls = 0, rounds_total = 0;
  int64_t by_axis[3] = {0, 0, 0};
  for (int64_t trial = 0; trial < job.iterations; ++trial) {
    const Policy policy = policies[static_cast<size_t>(trial % static_cast<int64_t>(policies.size()))];
    kaleido::ReuseConfig cfg = random_config(hw, rng, policy);
    const kaleido::IntMatrix a = correlated_a(cfg, rng);
    random_thresholds(cfg, a, rng);
    const kaleido::IntReuse gold = kaleido::run_reuse(cfg, a);
    const kaleido::ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
    const int64_t win = gold.window_depth;
    if (win > cap) throw std::runtime_error("test bug: window depth above WIN_CAP");
    const int G = cfg.groups();
    const int P = hw.lane_groups;
    const int rounds = kaleido::hw::detection_rounds(G, lanes, P);
    const std::string trial_name = "trial " + std::to_string(trial) + " (grid " + std::to_string(cfg.grid.t) + "x" +
                                   std::to_string(cfg.grid.h) + "x" + std::to_string(cfg.grid.w) + ", K " +
                                   std::to_string(cfg.channels) + ", tile " + std::to_string(cfg.tile_h) + "x" +
                                   std::to_string(cfg.tile_w) + ", window " + std::to_string(win) + ", policy " +
                                   kaleido::policy_name(policy) + ")";

    dut.policy_i = static_cast<uint8_t>(policy);
    if (policy == Policy::Fixed) {
      dut.naxes_i = static_cast<uint8_t>(cfg.fixed_axes.size());
      uint32_t axes = 0;
      for (size_t k = 0; k < cfg.fixed_axes.size(); ++k) axes |= static_cast<uint32_t>(cfg.fixed_axes[k]) << (2 * k);
      dut.axes_i = static_cast<uint8_t>(axes);
    } else {
      dut.naxes_i = static_cast<uint8_t>(rng.range(0, 3));
      dut.axes_i = static_cast<uint8_t>(rng.range(0, 63));
    }
    // The sets of rounds follow each other without a gap, as in kld_top: set q+1's first position
    // steps in while set q's last is decided. Slots are relative, so each set takes its own origin.
    std::vector<int64_t> base(static_cast<size_t>(rounds / P));
    for (int64_t& b : base) b = rng.range(0, cap - 1);
    auto slot_of = [&](int r, int64_t pos) {
      return static_cast<uint64_t>((base[static_cast<size_t>(r / P)] + pos) % cap);
    };
    // Whether position p's reference along `ax` is available, and its distance in positions.
    auto ref_of = [&](int64_t p, int ax, int64_t& dist) {
      const int32_t ref = scan.reference(scan.token_at(p), static_cast<Axis>(ax));
      dist = ref >= 0 ? p - scan.pos_of(ref) : 0;
      return ref >= 0 && dist <= win;
    };
    // The t and h window slots of round r's position p and whether they are at distance 1 or 2
    // (garbage where there is no reference), and its phase, as kld_dispatcher and kld_top give
    // them in the cycle before p is presented.
    auto set_next_refs = [&](int r, int64_t p) {
      uint64_t two = 0;
      for (int ax = 0; ax < 2; ++ax) {
        int64_t dist = 0;
        const bool ok = r < rounds && p < scan.size() && ref_of(p, ax, dist);
        set_bits(dut.ref_slot_next_i, ax * sw, sw, ok ? slot_of(r, p - dist) : rng.next());
        set_bits(dut.ref_near_next_i, ax, 1, ok ? dist == 1 : rng.range(0, 1) != 0);
        two |= static_cast<uint64_t>(ok ? dist == 2 : rng.range(0, 1) != 0) << ax;
      }
      set_ref_two_next(dut, two, 0);
      set_phase_next(dut, r % P, 0);
    };
    auto garbage_position = [&] {
      set_bits(dut.token_i, 0, tw, rng.next());
      set_bits(dut.slot_i, 0, sw, rng.next());
      set_bits(dut.ref_avail_i, 0, 3, rng.next());
      set_bits(dut.lane_valid_i, 0, lanes, rng.next());
      set_bits(dut.enable_i, 0, lanes, rng.next());
      for (int l = 0; l < lanes; ++l) {
        set_bits(dut.tau_i, l * tauw, tauw, rng.next());
        set_bits(dut.a_i, l * gw * dw, gw * dw, rng.next());
      }
    };
    // The second stage's position: its round and token, or round -1 when empty.
    int held_round = -1;
    int32_t held_tok = 0;
    // Compares the lanes' outputs with the golden decisions of the held position (retiring now).
    auto check_held = [&] {
      for (int l = 0; l < lanes; ++l) {
        const int g = held_round * lanes + l;
        const bool got_reuse = get_bits(dut.reuse_o, l, 1) != 0;
        const std::string at = trial_name + " token " + std::to_string(held_tok) + " group " + std::to_string(g);
        if (g >= G) {
          chk.equal(got_reuse, 0, at + " (lane without a group): reuse_o");
          continue;
        }
        const kaleido::PairDecision& e = gold.at(held_tok, g);
        const bool want_reuse = e.kind == kaleido::PairKind::Reuse;
        ++pairs;
        chk.equal(got_reuse, want_reuse, at + ": reuse_o");
        if (want_reuse) {
          ++reused;
          ++by_axis[static_cast<int>(e.axis)];
          chk.equal(static_cast<int64_t>(get_bits(dut.axis_o, 2 * l, 2)), static_cast<int>(e.axis), at + ": axis_o");
        }
        chk.equal(static_cast<int64_t>(get_bits(dut.root_o, l * tw, tw)), e.root, at + ": root_o");
      }
    };
    // The cycles of the trial, planned first: step_next_i and retire_next_i are driven a cycle
    // ahead of the cycle they act in (the lanes register them). A position is presented in an
    // advancing cycle; before each one, while a decision waits in the second stage, sometimes
    // held cycles: garbage inputs, no step or retire, the outputs stable; the last one reads the
    // references of the position presented next a cycle ahead. Past the last round, one advancing
    // cycle that only decides.
    struct Cycle {
      bool advance;  // else held
      int r;
      int64_t p;
      bool last_held;  // the held cycle before the advance
    };
    std::vector<Cycle> plan;
    auto add = [&](int r, int64_t p) {
      int64_t stalls_here = 0;
      while (!plan.empty() && rng.range(0, 5) == 0) ++stalls_here;
      for (int64_t k = 0; k < stalls_here; ++k) plan.push_back({false, r, p, k + 1 == stalls_here});
      plan.push_back({true, r, p, false});
    };
    for (int first = 0; first < rounds; first += P)
      for (int64_t p = 0; p < scan.size(); ++p)
        for (int phase = 0; phase < P; ++phase) add(first + phase, p);
    add(rounds, 0);
    // A held decision retires in the next advancing cycle; every advance but the first has one.
    auto step_at = [&](size_t i) { return i < plan.size() && plan[i].advance && plan[i].r < rounds; };
    auto retire_at = [&](size_t i) { return i < plan.size() && plan[i].advance && i > 0; };
    // One cycle before the plan: its first step is registered, round 0's first position's
    // references read.
    garbage_position();
    set_next_refs(0, 0);
    dut.step_next_i = step_at(0);
    dut.retire_next_i = 0;
    clock.edge();
    for (size_t i = 0; i < plan.size(); ++i) {
      const Cycle& cy = plan[i];
      const int r = cy.r;
      const int64_t p = cy.p;
      dut.step_next_i = step_at(i + 1);
      dut.retire_next_i = retire_at(i + 1);
      if (!cy.advance) {
        ++stalls;
        garbage_position();
        if (cy.last_held) {
          set_next_refs(r, p);
        } else {
          set_bits(dut.ref_slot_next_i, 0, 2 * sw, rng.next());
          set_bits(dut.ref_near_next_i, 0, 2, rng.next());
          set_ref_two_next(dut, rng.next(), 0);
          set_phase_next(dut, static_cast<int>(rng.range(0, 1)), 0);
        }
        clock.edge();
        continue;
      }
      const bool present = r < rounds;
      if (present && p == 0) ++rounds_total;
      const int32_t tok = present ? scan.token_at(p) : 0;
      if (present) {
        set_bits(dut.token_i, 0, tw, static_cast<uint64_t>(tok));
        set_bits(dut.slot_i, 0, sw, slot_of(r, p));
        uint64_t avail = 0;
        for (int ax = 0; ax < 3; ++ax) {
          int64_t dist = 0;
          avail |= static_cast<uint64_t>(ref_of(p, ax, dist)) << ax;
        }
        set_bits(dut.ref_avail_i, 0, 3, avail);
        // Read a cycle ahead, for the position presented next: the set's next round at the same
        // position, or its first round at the next position (the next set's first after the last).
        if (r % P < P - 1)
          set_next_refs(r + 1, p);
        else if (p + 1 < scan.size())
          set_next_refs(r - (P - 1), p + 1);
        else
          set_next_refs(r + 1, 0);
        for (int l = 0; l < lanes; ++l) {
          const int g = r * lanes + l;
          const bool valid = g < G;
          set_bits(dut.lane_valid_i, l, 1, valid);
          set_bits(dut.enable_i, l, 1, valid ? cfg.group_enabled(g) : rng.range(0, 1));
          set_bits(dut.rope_i, l * 3, 3, valid ? cfg.rope_mask(g) : rng.next());
          set_bits(dut.tau_i, l * tauw, tauw, valid ? cfg.tau_of(g) : rng.next());
          for (int j = 0; j < gw; ++j)
            set_bits(dut.a_i, (l * gw + j) * dw, dw, valid ? static_cast<uint64_t>(a.at(tok, g * gw + j)) : rng.next());
        }
      } else {
        garbage_position();
      }
      clock.settle();
      if (held_round >= 0) check_held();
      clock.edge();
      held_round = present ? r : -1;
      held_tok = tok;
    }
  }
  // The random mix must have exercised both outcomes and every axis.
  if (reused == 0 || reused == pairs) chk.fail("decisions were all REUSE or all COMPUTE: the test is too weak");
  const int extent[3] = {hw.max_t, hw.max_h, hw.max_w};  // an axis of extent 1 has no references
  for (int ax = 0; ax < 3; ++ax)
    if (by_axis[ax] == 0 && extent[ax] > 1)
      chk.fail(std::string("no reuse along axis ") + kaleido::axis_name(static_cast<Axis>(ax)));
  dut.final();
  return chk.finish("kld_detector LANES " + std::to_string(lanes) + " GROUP_W " + std::to_string(gw) + " WIN_CAP " +
                    std::to_string(cap) + ", " + std::to_string(job.iterations) + " trials, " +
                    std::to_string(rounds_total) + " rounds, " + std::to_string(pairs) + " pairs (" +
                    std::to_string(reused) + " reused: t " + std::to_string(by_axis[0]) + ", h " +
                    std::to_string(by_axis[1]) + ", w " + std::to_string(by_axis[2]) + "), " +
                    std::to_string(stalls) + " stalled cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
