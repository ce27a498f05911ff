// Block test of kld_ring_engine (kld_ring_detect, kld_ring_chunks, kld_ring_passes and
// kld_ring_walk joined): `iterations` runs, each on a random grid (W a multiple of GATHER_W; every
// third run the largest, with every m-tile), random scan tiles whose t distance fits the ring (every
// fourth run whole frames when they fit), 1 to MAX_M / COLS m-tiles, and a random detection (policy,
// axis list, RoPE split, thresholds, enables; detect_common.hpp) of a correlated A, which the
// harness streams in scan order (LANE_GROUPS beats a position), pausing 20 to 60 cycles before
// every third chunk's first beat: the decisions are the golden model's (run_reuse), made by the
// engine's detector; the weight loader is ready 0 to `weight_delay`
// cycles after a pass begins; a chunk's partials land (landed_i) 0 to `land_delay` cycles after
// its last beat is issued, in order; the merge advances at random (one cycle in four stalled, and
// one in `slow_pace` (16 unless given) advancing for every other run of six chunks, so that
// builds wait for the walk; every other run it holds until four chunks have begun issuing).
// start_i is raised at random until each run's last chunk has landed (to be ignored: busy_o).
//
// What is checked, against the model's cut of the scan (run_steps, from ScanOrder) and the
// golden decisions alone (codes_written_o, the detector's words written, marks when a chunk's
// words are in): the issue's beats are the run's chunks in order, once per m-tile, each pass as
// kld_ring_passes' test has them (append_issue_beats), each issuing segment's slot tag for the
// merge ({k-tile, ring row, bank}: its chunk's ring row + position / GATHER_W, wrapped, and
// position mod GATHER_W), a pass beginning only with its weights ready and no chunk's first beat
// before its words are written; the gather's beats are every
// chunk's in order, beat b of a chunk at ring row (its positions before in the run / GATHER_W + b)
// mod RING_DEPTH / GATHER_W with the decisions of its positions b*GATHER_W + j for every group, its
// tile's distances in rows and its last flag, and none before the chunk has landed; busy_o is high
// through the run and low once its last chunk's last word is read; window_error_o and
// codes_error_o stay low.
// Every third run has a random block mask (ring_common.hpp), read like a registered memory, and
// several m-tiles where it can: its dropped chunks are neither issued nor gathered past the first
// m-tile, the ring rows counting the chunks run only. With
// option `window_error`, a last run of whole frames whose t distance is past the ring must raise
// window_error_o and issue nothing. The run fails unless the engine caught up with the writer (a
// chunk's words written after the chunk before had begun issuing) and four chunks were issued and
// not yet gathered at once (every walk-buffer slot in use).
// The issue's A: every issue beat's A is on issue_a_o RingEngineBlock::a_edges edges after it,
// each issuing segment's group (beat_kt*SEGS + s) of its position exactly A's (and no A at other
// edges), with the beat's tags, weight buffer and chunk end (issue_*_o, the array's port); the first m-tile's beats are saved (save_*_o: the same groups, lanes and pass ends), and
// the harness plays the memory they go to: it streams each later m-tile's kept chunks' passes back
// from what was saved (replay_*_i, each pass's groups in random beats of some segments, with
// gaps), so a later m-tile's A is the saved A. The first m-tile runs every chunk, those of pairs
// the mask drops marked on their gather beats (gather_masked_o), so every chunk's A is saved. The
// run fails unless A's stream waited for the A buffers at times and some chunk ran masked.
#include <deque>
#include <map>

#include "Vkld_ring_engine.h"
#include "detect_common.hpp"
#include "golden/reuse.hpp"
#include "hw/blocks.hpp"
#include "ring_common.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingChunksBlock;
using kaleido::hw::RingListsBlock;
using namespace kld_unit;
using namespace kld_ring;
using namespace kld_detect;

// Chunk k's codes (scan positions p0 on) as the engine's detector writes them: the golden
// model's decision of each group below `groups` (0 COMPUTE, axis + 1 REUSE) and COMPUTE for the
// groups past the run's (never decided: a word is cleared when written); its lists from them.
void gold_codes(Chunk& k, const kaleido::IntReuse& gold, const kaleido::ScanOrder& scan, int64_t p0, int groups,
                int G) {
  k.codes.assign(static_cast<size_t>(k.n * G), 0);
  k.lists.assign(static_cast<size_t>(G), {});
  for (int p = 0; p < k.n; ++p)
    for (int g = 0; g < G; ++g) {
      int code = 0;
      if (g < groups) {
        const kaleido::PairDecision& e = gold.at(scan.token_at(p0 + p), g);
        if (e.kind == kaleido::PairKind::Reuse) code = static_cast<int>(e.axis) + 1;
      }
      k.codes[static_cast<size_t>(p * G + g)] = code;
      if (code == 0) k.lists[static_cast<size_t>(g)].push_back(p);
    }
}

// A group's A (GROUP_W values of DATA_W bits) in 32-bit words, least significant first.
using GroupBits = std::vector<uint64_t>;
GroupBits group_bits(const kaleido::IntMatrix& a, int32_t token, int g, int gw, int dw) {
  GroupBits out(static_cast<size_t>((gw * dw + 31) / 32), 0);
  for (int j = 0; j < gw; ++j) {
    const uint64_t v = static_cast<uint64_t>(a.at(token, g * gw + j)) & ((uint64_t{1} << dw) - 1);
    for (int b = 0; b < dw; ++b)
      if ((v >> b) & 1) out[static_cast<size_t>((j * dw + b) / 32)] |= uint64_t{1} << ((j * dw + b) % 32);
  }
  return out;
}

// The group at bit `lsb` of a port, as group_bits packs it.
template <class Port>
GroupBits port_group(const Port& port, int lsb, int gbits) {
  GroupBits out;
  for (int w = 0; w * 32 < gbits; ++w) out.push_back(get_bits(port, lsb + w * 32, std::min(32, gbits - w * 32)));
  return out;
}

// The A an issue beat's segments must see on issue_a_o, `due` the edge it lands at.
struct ExpectedA {
  int64_t due = 0;
  bool first_mt = false;  // the first m-tile's: saved too
  uint64_t valid = 0;
  std::vector<GroupBits> seg;
  bool pass_last = false;
  size_t chunk = 0;  // the m-tile's chunk number (Step::index)
  int wbuf = 0;                // the beat's weight buffer
  bool chunk_last = false;     // the beat ends its chunk
  std::vector<int64_t> tags;   // per segment its tap tag, -1 where it does not issue
};

// A pass's saved A: per segment its groups in issue order.
struct SavedPass {
  std::vector<std::vector<GroupBits>> seg;
  bool done = false;
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int G = c.max_groups(), S = c.segs(), GW = c.gather_w, P = c.lane_groups;
  const int words = job.raw.at("words").get<int>(), chunk = job.raw.at("chunk").get<int>();
  const int LW = job.raw.at("list_w").get<int>(), depth = job.raw.at("ring_depth").get<int>();
  const int rows = depth / GW, ew = RingListsBlock::entry_w(chunk, LW);
  using kaleido::hw::RingMergeBlock;
  const int tag_w = RingMergeBlock::tag_width(c, depth), row_w = RingMergeBlock::row_w(c, depth);
  const int bank_w = RingMergeBlock::bank_w(c);
  const int64_t weight_delay = job.raw.value("weight_delay", 10), land_delay = job.raw.value("land_delay", 12);
  const bool window_error = job.raw.value("window_error", false);
  const int RA = kaleido::hw::RingEngineBlock::a_edges(c, chunk), gbits = c.group_w * c.data_w;
  const int64_t slow_pace = job.raw.value("slow_pace", 16);
  Vkld_ring_engine dut;
  Clock<Vkld_ring_engine> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);
  // Even seeds: fewer groups than the hardware's, a partial last k-tile and fewer k-tiles than
  // MAX_KT (the passes' k-tile wraps before its counter does).
  const int groups = job.seed % 2 == 1 || G <= S + 1 ? G : G - S - 1;

  dut.rst_ni = 0;
  dut.start_i = 0;
  dut.a_valid_i = 0;
  dut.wt_ready_i = 0;
  dut.landed_i = 0;
  dut.gather_en_i = 0;
  dut.replay_valid_i = 0;
  dut.groups_i = static_cast<uint32_t>(groups);
  clock.edge();
  dut.rst_ni = 1;

  BlockMask mask;  // the run's block mask

  int64_t pass = 0, passes_begun = 0, issue_beats = 0, gather_beats = 0, caught_up = 0, max_in_slots = 0;
  int64_t stalled_gathers = 0, ignored_starts = 0, chunks_total = 0, multi_mt = 0, whole_runs = 0;
  int64_t wt_ready_from = 0, chunks_gathered = 0;  // of the runs before
  int64_t slot_wraps = 0;                            // issued positions whose slot wraps the ring
  int64_t masked_runs = 0, dropped = 0, pairs = 0, reused = 0;
  int64_t masked_beats = 0, a_groups = 0, saved_beats = 0, replayed_beats = 0, a_waits = 0, replay_waits = 0;
  std::vector<Policy> policies;
  for (int p = 0; p < 3; ++p)
    if (c.policies & (1u << p)) policies.push_back(static_cast<Policy>(p));
  // The block mask's memory, a registered read (ring_common.hpp).
  auto tick = [&] {
    clock.settle();
    const uint64_t bit = mask_read(mask, rng, dut.mask_tile_o, dut.mask_kb_o);
    clock.edge();
    dut.mask_keep_i = bit;
  };
  for (int64_t run_index = 0; run_index < job.iterations; ++run_index) {
    // The run: tiles whose area (its t distance) is below the ring's rows x GATHER_W.
    // Every third run the largest grid and every m-tile (the most positions, so the ring wraps).
    const bool largest = run_index % 3 == 2;
    kaleido::ReuseConfig cfg;
    cfg.grid.t = largest ? c.max_t : static_cast<int>(rng.range(1, c.max_t));
    cfg.grid.h = largest ? c.max_h : static_cast<int>(rng.range(1, c.max_h));
    cfg.grid.w = (largest ? c.max_w / GW : static_cast<int>(rng.range(1, c.max_w / GW))) * GW;
    const bool whole = run_index % 4 == 0 && cfg.grid.h * cfg.grid.w / GW < rows;
    do {
      cfg.tile_h = whole ? 0 : static_cast<int>(rng.range(0, cfg.grid.h));
      cfg.tile_w = whole ? 0 : static_cast<int>(rng.range(0, cfg.grid.w / GW)) * GW;
    } while (cfg.tile_h_eff() * (cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w) / GW >= rows);
    const int64_t fewest_mt = run_index % 3 == 1 ? std::min(2, c.max_mt()) : 1;  // a masked run: several
    const int mtiles = largest ? c.max_mt() : static_cast<int>(rng.range(fewest_mt, c.max_mt()));
    whole_runs += cfg.tile_h == 0 && cfg.tile_w == 0;
    multi_mt += mtiles > 1;
    // Every third run a random block mask: its dropped chunks are neither issued nor gathered.
    mask = {};
    if (run_index % 3 == 1) {
      mask = random_mask(rng, kaleido::hw::ring_chunks(cfg, chunk).back().block + 1, mtiles);
      ++masked_runs;
    }
    // The run's detection: the golden model's decisions on a correlated A (over nine runs, each
    // policy on the largest grid, a masked run and another).
    const Policy policy =
        policies[static_cast<size_t>((run_index + run_index / 3) % static_cast<int64_t>(policies.size()))];
    cfg.group_w = c.group_w;
    cfg.channels = groups * c.group_w;
    cfg.out_cols = 1;
    cfg.data_w = c.data_w;
    cfg.acc_w = c.acc_w;
    random_detection(cfg, rng, policy);
    random_enables(cfg, rng);
    const kaleido::IntMatrix a = correlated_a(cfg, rng);
    random_thresholds(cfg, a, rng);
    const kaleido::IntReuse gold = kaleido::run_reuse(cfg, a);
    const kaleido::ScanOrder scan(cfg.grid, cfg.tile_h, cfg.tile_w);
    const std::vector<Step> all_steps = run_steps(cfg, chunk, LW, GW, rows, mtiles, words, mask);
    std::vector<Step> steps;  // the kept ones
    for (const Step& s : all_steps)
      if (s.kept) steps.push_back(s);
    dropped += static_cast<int64_t>(all_steps.size() - steps.size());
    // The decisions of the m-tile's chunks (every m-tile reads them again).
    std::vector<Chunk> ks;
    std::vector<int64_t> ks_p0;  // their first positions
    for (const Step& s : all_steps)
      if (s.mt == 0) {
        Chunk k;
        k.n = static_cast<int>(s.len);
        k.row = static_cast<int>(s.row);
        k.words = static_cast<int>(s.words);
        gold_codes(k, gold, scan, s.p0, groups, G);
        for (int p = 0; p < k.n; ++p)
          for (int g = 0; g < groups; ++g) reused += k.codes[static_cast<size_t>(p * G + g)] != 0;
        pairs += static_cast<int64_t>(k.n) * groups;
        ks.push_back(k);
        ks_p0.push_back(s.p0);
      }
    const size_t nk = ks.size(), ns = steps.size();
    chunks_total += static_cast<int64_t>(ns);
    std::deque<IssueBeat> expected;
    for (size_t s = 0; s < ns; ++s)
      append_issue_beats(expected, ks[steps[s].index], groups, S, pass, static_cast<int64_t>(s));
    // The run's passes in order, as the weight loader is asked for them: {m-tile, k-tile}.
    std::vector<std::pair<int64_t, int64_t>> run_passes;
    for (const Step& s : steps)
      for (int kt = 0; kt * S < groups; ++kt) run_passes.emplace_back(s.mt, kt);
    size_t run_passes_begun = 0;
    // The issue's A, due at its edges; the first m-tile's passes as saved, by chunk; the later
    // m-tiles' passes in order, streamed back from the save (chunk, k-tile).
    std::deque<ExpectedA> a_due;
    std::vector<std::vector<SavedPass>> saved(nk);
    std::vector<std::pair<size_t, int>> replay_passes;
    for (const Step& s : steps)
      if (s.mt > 0)
        for (int kt = 0; kt * S < groups; ++kt) replay_passes.emplace_back(s.index, kt);
    size_t replay_next = 0;
    std::vector<size_t> replay_at(static_cast<size_t>(S), 0);  // each segment's next group of the pass
    bool replaying = false, replay_last = false;
    uint64_t replay_lanes = 0;

    // Idle, then the run's registers and start_i.
    dut.start_i = 0;
    for (int64_t i = rng.range(0, 3); i > 0; --i) {
      clock.settle();
      chk.equal(dut.busy_o, 0, "busy_o between runs, cycle " + std::to_string(clock.cycle()));
      tick();
    }
    drive_run(dut, cfg, mtiles, mask, rng.range(0, c.max_mt()));
    drive_detection(dut, c, cfg, gold, rng);
    // A's beats, a pause of 20 to 60 cycles before every third chunk's first.
    const int64_t beats = scan.size() * P;
    std::map<int64_t, int64_t> pause_at;
    for (size_t i = 0; i < nk; i += 3) pause_at[ks_p0[i] * P] = rng.range(20, 60);
    int64_t next_beat = 0, pause_until = 0;
    bool offering = false;
    dut.start_i = 1;
    tick();

    size_t written = 0, landed = 0, gstep = 0;
    int64_t gbeat = 0;
    std::deque<int64_t> land_due;
    std::vector<int64_t> committed_at(nk, -1), first_beat_at(ns, -1), landed_at(ns, -1);
    size_t issued_first = 0;  // steps whose first beat is out
    bool in_pass = false;
    const int64_t limit = clock.cycle() + 2000 + static_cast<int64_t>(ns) * (chunk * (G + 40) + 200);
    // Until every chunk is issued and gathered and every beat of A taken (a mask's dropped chunks
    // are decided too: the detector does not know the mask).
    while ((!expected.empty() || gstep < ns || next_beat < beats || !a_due.empty() ||
            replay_next < replay_passes.size()) &&
           clock.cycle() < limit) {
      const int64_t now = clock.cycle();
      // A: a beat offered is held until taken.
      if (!offering && next_beat < beats) {
        const auto pause = pause_at.find(next_beat);
        if (pause != pause_at.end()) {
          pause_until = now + pause->second;
          pause_at.erase(pause);
        }
        offering = now >= pause_until;
      }
      if (offering)
        drive_beat(dut, a, scan, next_beat, c, groups, rng);
      else
        garbage_beat(dut, c, rng);
      dut.a_valid_i = offering;
      // The replay: the next saved pass once the save has it all, in beats of random segments.
      if (!replaying && replay_next < replay_passes.size() && rng.range(0, 3) != 0) {
        const auto& [k, kt] = replay_passes[replay_next];
        if (saved[k].size() > static_cast<size_t>(kt) && saved[k][static_cast<size_t>(kt)].done) {
          const SavedPass& sp = saved[k][static_cast<size_t>(kt)];
          std::vector<int> left;
          for (int sg = 0; sg < S; ++sg)
            if (replay_at[static_cast<size_t>(sg)] < sp.seg[static_cast<size_t>(sg)].size()) left.push_back(sg);
          replay_lanes = 0;
          for (int sg : left)
            if (rng.range(0, 1) == 0) replay_lanes |= uint64_t{1} << sg;
          if (replay_lanes == 0 && !left.empty())
            replay_lanes = uint64_t{1}
                           << left[static_cast<size_t>(rng.range(0, static_cast<int64_t>(left.size()) - 1))];
          replay_last = true;
          for (int sg : left)
            replay_last = replay_last && ((replay_lanes >> sg) & 1) &&
                          replay_at[static_cast<size_t>(sg)] + 1 == sp.seg[static_cast<size_t>(sg)].size();
          for (int sg = 0; sg < S; ++sg)
            for (int w = 0; w * 32 < gbits; ++w)
              set_bits(dut.replay_a_i, sg * gbits + w * 32, std::min(32, gbits - w * 32),
                       (replay_lanes >> sg) & 1 ? sp.seg[static_cast<size_t>(sg)][replay_at[static_cast<size_t>(sg)]]
                                                                                     [static_cast<size_t>(w)]
                                                : rng.next());
          replaying = true;
        }
      }
      dut.replay_valid_i = replaying;
      dut.replay_lanes_i = replaying ? replay_lanes : rng.next() & ((uint64_t{1} << S) - 1);
      dut.replay_pass_last_i = replaying ? replay_last : rng.range(0, 1);
      // Stray starts only while the run's last chunk has not landed (the walk cannot have read it).
      const bool stray_start = landed < ns && rng.range(0, 4) == 0;
      dut.start_i = stray_start;
      const bool wt_ready = now >= wt_ready_from;
      dut.wt_ready_i = wt_ready;
      const bool land = !land_due.empty() && land_due.front() <= now;
      dut.landed_i = land;
      const bool slow = ((chunks_gathered + static_cast<int64_t>(gstep)) / 6) % 2 == 1;
      // Every other run the merge holds until four chunks have begun issuing (or all have).
      const bool hold =
          run_index % 2 == 1 && issued_first < std::min<size_t>(ns, kaleido::hw::RingFrontBlock::kWalkSlots);
      const bool en = !hold && (slow ? rng.range(0, slow_pace - 1) == 0 : rng.range(0, 3) != 0);
      dut.gather_en_i = en;
      clock.settle();
      const std::string at = "run " + std::to_string(run_index) + ", edge " + std::to_string(now + 1);
      if (landed < ns) chk.equal(dut.busy_o, 1, at + ": busy_o");
      chk.equal(dut.window_error_o, 0, at + ": window_error_o");
      chk.equal(dut.codes_error_o, 0, at + ": codes_error_o");
      const bool took = offering && dut.a_ready_o;
      a_waits += offering && !dut.a_ready_o;
      const bool replay_took = replaying && dut.replay_ready_o;
      replay_waits += replaying && !dut.replay_ready_o;
      ignored_starts += stray_start;
      if (dut.pass_take_o && !wt_ready) chk.fail(at + ": a pass began without its weights");
      const bool begin = dut.pass_take_o;
      // The weights asked for are the next pass's (none past the run's last), and a pass begins
      // only with them asked for.
      if (dut.wt_valid_o || begin) {
        if (run_passes_begun >= run_passes.size()) {
          chk.fail(at + ": weights asked for, or a pass begun, past the run's last pass");
        } else {
          const auto& [want_mt, want_kt] = run_passes[run_passes_begun];
          const std::string what = at + ": pass " + std::to_string(run_passes_begun) + " ";
          chk.equal(dut.wt_valid_o, 1, what + "wt_valid_o");
          chk.equal(dut.wt_mt_o, want_mt, what + "wt_mt_o");
          chk.equal(dut.wt_kt_o, want_kt, what + "wt_kt_o");
        }
      }
      run_passes_begun += begin;
      const uint64_t valid = get_bits(dut.gather_valid_o, 0, GW);
      if (valid != 0 && valid != (uint64_t{1} << GW) - 1) chk.fail(at + ": a gather beat on some lanes only");
      if (valid != 0 && en) {
        if (gstep >= ns) {
          chk.fail(at + ": a gather beat after the run's last");
        } else {
          const Step& s = steps[gstep];
          const Chunk& k = ks[s.index];
          const std::string what = at + ", chunk " + std::to_string(gstep) + " gather beat " + std::to_string(gbeat);
          if (landed_at[gstep] < 0) chk.fail(what + ": before its chunk landed");
          chk.equal(dut.gather_row_o, (s.slot_row + gbeat) % rows, what + ": gather_row_o");
          for (int j = 0; j < GW; ++j)
            for (int g = 0; g < G; ++g)
              chk.equal(static_cast<int64_t>(get_bits(dut.gather_code_o, (j * G + g) * 2, 2)),
                        k.codes[static_cast<size_t>((gbeat * GW + j) * G + g)],
                        what + ": lane " + std::to_string(j) + " group " + std::to_string(g) + " code");
          chk.equal(dut.ref_off_h_o, s.off_h, what + ": ref_off_h_o");
          chk.equal(dut.ref_off_t_o, s.off_t, what + ": ref_off_t_o");
          chk.equal(dut.gather_last_o, gbeat + 1 == s.len / GW, what + ": gather_last_o");
          chk.equal(dut.gather_masked_o, s.masked, what + ": gather_masked_o");
          masked_beats += s.masked;
          ++gather_beats;
          if (++gbeat == s.len / GW) {
            ++gstep;
            gbeat = 0;
          }
        }
      } else if (valid != 0) {
        ++stalled_gathers;
      }

      tick();
      const int64_t edge = clock.cycle();
      if (took) {
        ++next_beat;
        offering = false;
      }
      if (replay_took) {
        for (int sg = 0; sg < S; ++sg) replay_at[static_cast<size_t>(sg)] += (replay_lanes >> sg) & 1;
        if (replay_last) {
          ++replay_next;
          std::fill(replay_at.begin(), replay_at.end(), 0);
        }
        replaying = false;
        ++replayed_beats;
      }
      // The issue's A due at this edge (none at others); the first m-tile's saved.
      if (!a_due.empty() && a_due.front().due == edge) {
        const ExpectedA e = a_due.front();
        a_due.pop_front();
        const std::string what = at + ": chunk " + std::to_string(e.chunk) + " A";
        chk.equal(static_cast<int64_t>(get_bits(dut.issue_a_valid_o, 0, S)), static_cast<int64_t>(e.valid),
                  what + ": issue_a_valid_o");
        chk.equal(dut.save_valid_o, e.first_mt, what + ": save_valid_o");
        chk.equal(dut.issue_chunk_last_o, e.chunk_last, what + ": issue_chunk_last_o");
        chk.equal(dut.issue_wbuf_o, e.wbuf, what + ": issue_wbuf_o");
        if (e.first_mt) {
          chk.equal(static_cast<int64_t>(get_bits(dut.save_lanes_o, 0, S)), static_cast<int64_t>(e.valid),
                    what + ": save_lanes_o");
          chk.equal(dut.save_pass_last_o, e.pass_last, what + ": save_pass_last_o");
          std::vector<SavedPass>& passes = saved[e.chunk];
          if (passes.empty() || passes.back().done) passes.push_back({std::vector<std::vector<GroupBits>>(S), false});
          passes.back().done = e.pass_last;
          ++saved_beats;
        }
        for (int sg = 0; sg < S; ++sg) {
          if (!((e.valid >> sg) & 1)) continue;
          const std::string seg = what + " segment " + std::to_string(sg);
          if (port_group(dut.issue_a_o, sg * gbits, gbits) != e.seg[static_cast<size_t>(sg)])
            chk.fail(seg + ": issue_a_o is not the position's group");
          chk.equal(static_cast<int64_t>(get_bits(dut.issue_tag_o, sg * tag_w, tag_w)), e.tags[static_cast<size_t>(sg)],
                    seg + ": issue_tag_o");
          ++a_groups;
          if (e.first_mt) {
            const GroupBits out = port_group(dut.save_a_o, sg * gbits, gbits);
            if (out != e.seg[static_cast<size_t>(sg)]) chk.fail(seg + ": save_a_o is not the position's group");
            saved[e.chunk].back().seg[static_cast<size_t>(sg)].push_back(out);
          }
        }
      } else {
        if (get_bits(dut.issue_a_valid_o, 0, S) != 0) chk.fail(at + ": issue_a_valid_o with no beat's A due");
        chk.equal(dut.issue_chunk_last_o, 0, at + ": issue_chunk_last_o with no beat due");
        chk.equal(dut.save_valid_o, 0, at + ": save_valid_o with no first m-tile beat's A due");
      }
      // The chunks whose words are written by this edge.
      while (written < nk && static_cast<int64_t>(dut.codes_written_o) >= ks[written].row + ks[written].words)
        committed_at[written++] = edge;
      if (land) {
        land_due.pop_front();
        landed_at[landed++] = edge;
      }
      if (begin) {
        ++passes_begun;
        wt_ready_from = weight_delay == 0 || rng.range(0, 2) == 0 ? edge : edge + rng.range(1, weight_delay);
      }
      const bool present = dut.beat_valid_o != 0 || dut.beat_pass_last_o;
      if (in_pass && !present) chk.fail(at + ": a pass's beats broken off");
      if (present && expected.empty()) {
        chk.fail(at + ": an issue beat after the run's last");
        break;
      }
      if (present) {
        const IssueBeat b = expected.front();
        expected.pop_front();
        check_beat(dut, chk, b, S, ew, edge);
        // Each issuing segment's slot, the merge's tap tag: {k-tile, ring row, bank}; its A; both
        // due again, with the beat's weight buffer and chunk end, RA edges on (the array's port).
        const Step& st = steps[static_cast<size_t>(b.chunk)];
        ExpectedA e{edge + RA, st.mt == 0, b.valid, std::vector<GroupBits>(static_cast<size_t>(S)), b.pass_last,
                    st.index};
        e.wbuf = b.wbuf;
        e.chunk_last = b.chunk_last;
        e.tags.assign(static_cast<size_t>(S), -1);
        for (int sg = 0; sg < S; ++sg) {
          const int p = b.pos[static_cast<size_t>(sg)];
          if (p < 0) continue;
          const int64_t row = (st.slot_row + p / GW) % rows;
          slot_wraps += st.slot_row + p / GW >= rows;
          const int64_t tag = ((static_cast<int64_t>(b.kt) << row_w) | row) << bank_w | (p % GW);
          chk.equal(static_cast<int64_t>(get_bits(dut.beat_tag_o, sg * tag_w, tag_w)), tag,
                    at + ": chunk " + std::to_string(b.chunk) + " segment " + std::to_string(sg) + " beat_tag_o");
          e.tags[static_cast<size_t>(sg)] = tag;
          e.seg[static_cast<size_t>(sg)] =
              group_bits(a, scan.token_at(ks_p0[st.index] + p), b.kt * S + sg, c.group_w, c.data_w);
        }
        a_due.push_back(e);
        const auto q = static_cast<size_t>(b.chunk);
        if (first_beat_at[q] < 0) {
          first_beat_at[q] = edge;
          ++issued_first;
          const int64_t committed = committed_at[steps[q].index];
          if (committed < 0 || committed >= edge)
            chk.fail(at + ": chunk " + std::to_string(q) + " issued before its words were written");
          if (q > 0 && steps[q].mt == 0 && committed > first_beat_at[q - 1]) ++caught_up;
        }
        if (b.chunk_last)
          land_due.push_back(std::max(land_due.empty() ? 0 : land_due.back(), edge + rng.range(0, land_delay)));
        in_pass = !b.pass_last;
        ++issue_beats;
      }
      max_in_slots = std::max(max_in_slots, static_cast<int64_t>(issued_first) - static_cast<int64_t>(gstep));
    }
    if (run_passes_begun != run_passes.size())
      chk.fail("run " + std::to_string(run_index) + ": " + std::to_string(run_passes_begun) + " passes of " +
               std::to_string(run_passes.size()) + " began");
    if (!expected.empty() || gstep < ns || next_beat < beats || !a_due.empty() ||
        replay_next < replay_passes.size()) {
      chk.fail("run " + std::to_string(run_index) + " did not end: " + std::to_string(gstep) + " of " +
               std::to_string(ns) + " chunks gathered, " + std::to_string(expected.size()) + " issue beats left, " +
               std::to_string(replay_next) + " of " + std::to_string(replay_passes.size()) + " passes replayed");
      break;
    }
    dut.replay_valid_i = 0;
    chunks_gathered += static_cast<int64_t>(ns);
    dut.a_valid_i = 0;  // the run's beats are all taken
    // busy_o falls once the last chunk's last word is read: by now, or within a few edges.
    dut.start_i = 0;
    dut.landed_i = 0;
    // (A mask's dropped chunks after the last kept one are cut, two edges each, then a tile's four.)
    for (size_t i = 0; i < 8 + 6 * all_steps.size() && (clock.settle(), dut.busy_o); ++i) tick();
    clock.settle();
    chk.equal(dut.busy_o, 0, "run " + std::to_string(run_index) + ": busy_o after its last gather beat");
  }

  if (window_error) {
    // Whole frames of the largest grid: a t distance of MAX_H x MAX_W / GATHER_W rows.
    kaleido::ReuseConfig cfg;
    cfg.grid = {c.max_t, c.max_h, c.max_w / GW * GW};
    cfg.tile_h = 0;
    cfg.tile_w = 0;
    mask = {};
    if (cfg.grid.h * cfg.grid.w / GW < rows) chk.fail("the case's whole frames fit its ring: no window error to see");
    drive_run(dut, cfg, 1, mask, 1);
    dut.a_valid_i = 0;  // no decisions: the sequencer stops at the tile before they matter
    dut.gather_en_i = 1;
    dut.start_i = 1;
    tick();
    dut.start_i = 0;
    const int64_t due = clock.cycle() + RingChunksBlock::kTileEdges;
    for (int i = 0; i < 40; ++i) {
      clock.settle();
      const std::string at = "window-error run, cycle " + std::to_string(clock.cycle());
      chk.equal(dut.window_error_o, clock.cycle() >= due, at + ": window_error_o");
      chk.equal(dut.busy_o, 1, at + ": busy_o");
      tick();
      if (dut.beat_valid_o != 0 || dut.beat_pass_last_o) chk.fail(at + ": an issue beat of a tile past the ring");
    }
  }
  if (passes_begun != pass) chk.fail(std::to_string(passes_begun) + " passes began for " + std::to_string(pass));
  if (job.iterations >= 4 && caught_up == 0) chk.fail("the engine never caught up with the decisions' writer");
  if (job.iterations >= 4 && max_in_slots < kaleido::hw::RingFrontBlock::kWalkSlots)
    chk.fail("never four chunks in the walk buffer");
  if (job.iterations >= 2 && dropped == 0) chk.fail("no chunk dropped by a block mask");
  if (multi_mt == 0) chk.fail("no run of several m-tiles");
  if (slot_wraps == 0) chk.fail("no issued position's slot wrapped round the ring");
  if (stalled_gathers == 0) chk.fail("no gather beat held while the merge stalled");
  if (reused == 0 || reused == pairs) chk.fail("decisions were all REUSE or all COMPUTE: the test is too weak");
  if (a_waits == 0) chk.fail("A's stream never waited (for the A buffers)");
  if (replayed_beats == 0) chk.fail("no A replayed");
  if (job.iterations >= 2 && masked_beats == 0) chk.fail("no gather beat of a chunk run masked");
  dut.final();
  return chk.finish("kld_ring_engine " + std::to_string(groups) + " of " + std::to_string(G) + " groups on " +
                    std::to_string(S) + " segments, GATHER_W " + std::to_string(GW) + ", LIST_W " + std::to_string(LW) +
                    ", chunks of up to " + std::to_string(chunk) + ", " + std::to_string(words) +
                    " code words, ring of " + std::to_string(depth) + " slots, LANES " +
                    std::to_string(c.det_lanes()) + " x LANE_GROUPS " + std::to_string(P) + ": " +
                    std::to_string(job.iterations) +
                    " runs (" + std::to_string(whole_runs) + " of whole frames, " + std::to_string(masked_runs) +
                    " masked, " +
                    std::to_string(multi_mt) +
                    " of several m-tiles), " + std::to_string(chunks_total) + " chunks (" + std::to_string(dropped) +
                    " more dropped, " + std::to_string(masked_beats) + " gather beats masked; " +
                    std::to_string(pairs) + " pairs decided, " + std::to_string(reused) +
                    " reused), " +
                    std::to_string(issue_beats) + " issue beats in " + std::to_string(passes_begun) + " passes, " +
                    std::to_string(gather_beats) + " gather beats (" + std::to_string(stalled_gathers) +
                    " held), " + std::to_string(slot_wraps) + " issued slots wrapping the ring, caught up with the " +
                    "writer " +
                    std::to_string(caught_up) + " times, up to " +
                    std::to_string(max_in_slots) + " chunks issued and not gathered, " +
                    std::to_string(ignored_starts) + " starts ignored, " + std::to_string(a_groups) +
                    " issued groups' A checked (" + std::to_string(saved_beats) + " beats saved, " +
                    std::to_string(replayed_beats) + " replayed, " + std::to_string(replay_waits) +
                    " replay beats held; A's stream held " + std::to_string(a_waits) + " cycles)" +
                    (window_error ? ", window error seen" : "") +
                    ", " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
