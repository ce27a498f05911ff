// `kaleido ring-plan`: the window-bounded ring architecture (hw/ring_plan.hpp; of its RTL only the
// merge is built, kld_ring_merge, which --rtl writes), sized and timed on the golden model's
// decisions for a workload, beside what today's kld_top would need for the same workload.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/hw_options.hpp"
#include "cli/workload_options.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "golden/gemm.hpp"
#include "golden/metrics.hpp"
#include "golden/random.hpp"
#include "golden/reuse.hpp"
#include "hw/blocks.hpp"
#include "hw/ring_plan.hpp"
#include "hw/sram_budget.hpp"

namespace kaleido::cli {

namespace {

// Above this many MACs --check would take minutes: it is refused, not silently skipped.
constexpr double kCheckMacLimit = 2e9;

std::vector<int> parse_chunks(const std::string& s, int rows) {
  std::vector<int> out;
  for (const long v : parse_list(s, ',', "chunks")) {
    if (v < 0) throw ConfigError("chunks", s, "scan positions per chunk, comma-separated (0: 8 x ROWS)");
    out.push_back(v == 0 ? 8 * rows : static_cast<int>(v));
  }
  if (out.empty()) throw ConfigError("chunks", s, "give at least one chunk size");
  return out;
}

// A block mask keeping round(keep x blocks) (query block, key block) pairs, at least one, chosen by
// a seeded shuffle: a stand-in for the study's SPADE / SpargeAttn / sliding-tile masks.
hw::RingMask random_mask(const ReuseConfig& cfg, int key_block, double keep, uint64_t seed) {
  if (!(keep > 0.0 && keep <= 1.0)) throw ConfigError("keep", std::to_string(keep), "a fraction in (0, 1]");
  hw::RingMask m;
  m.key_block = key_block;
  const size_t n = static_cast<size_t>(hw::ring_query_blocks(cfg)) * static_cast<size_t>(hw::ring_key_blocks(cfg, m));
  const auto kept = std::max<size_t>(1, static_cast<size_t>(std::llround(keep * static_cast<double>(n))));
  m.keep.assign(n, 0);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  Rng rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[static_cast<size_t>(rng.next() % i)]);
  for (size_t i = 0; i < kept; ++i) m.keep[order[i]] = 1;
  return m;
}

// The golden model's masked product: the reuse product with every dropped (query block, key block)
// entry 0. Query blocks from the tokens' coordinates (tiles in raster order), independently of the
// ring model's scan-order numbering.
void zero_dropped_blocks(const ReuseConfig& cfg, const hw::RingMask& mask, WideMatrix& out) {
  const int th = cfg.tile_h > 0 ? cfg.tile_h : cfg.grid.h, tw = cfg.tile_w > 0 ? cfg.tile_w : cfg.grid.w;
  const int tiles_w = (cfg.grid.w + tw - 1) / tw, kbs = hw::ring_key_blocks(cfg, mask);
  for (int t = 0; t < cfg.grid.t; ++t)
    for (int h = 0; h < cfg.grid.h; ++h)
      for (int w = 0; w < cfg.grid.w; ++w) {
        const int qb = (h / th) * tiles_w + w / tw;
        for (int64_t m = 0; m < out.cols; ++m)
          if (!mask.keep[static_cast<size_t>(qb * kbs + m / mask.key_block)]) out.at(cfg.grid.index(t, h, w), m) = 0;
      }
}

std::string bits_text(int64_t bits) { return fixed(static_cast<double>(bits) / (1024.0 * 1024.0), 3) + " Mib"; }

struct RingPlanCommand {
  CLI::App* sub = nullptr;
  HwOptions hw;
  WorkloadOptions w;
  WorkloadSource source{"synthetic"};
  std::string chunks = "0";
  int lead = 1;
  int list_w = 8;
  int key_block = 0;
  double keep = 1.0;
  bool check = false;
  bool json = false;
  std::string rtl;

  void progress(const std::string& s) const {
    if (!json) std::fprintf(stderr, "kaleido ring-plan: %s\n", s.c_str());
  }

  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string kind = source.resolve(*sub, hw);
    const hw::HwConfig hwc = hw.config_to_fit();
    WorkloadOptions wo = w;
    derive_algorithm_widths(*sub, hwc, wo.data_w, wo.acc_w, wo.group_w);
    if (wo.group_w != hwc.group_w)
      throw ConfigError("group-w", std::to_string(wo.group_w),
                        "must equal the array's GROUP_W (" + std::to_string(hwc.group_w) + ")");
    // Without a threshold option the thresholds are calibrated for the default output SNR, which
    // forms the product: refused where that is large (the qk kind calibrates on one key tile).
    const Grid grid = parse_grid(wo.grid);
    if (kind != "qk" && !threshold_option_given(*sub) &&
        static_cast<double>(grid.tokens()) * wo.channels * wo.out_cols > kCheckMacLimit)
      throw ConfigError("thresholds", "none",
                        "give --target-reuse R or --tau T: calibrating for an output SNR forms the product, more "
                        "than 2e9 MACs here");
    const std::vector<int> chunk_list = parse_chunks(chunks, hwc.rows);
    if (!rtl.empty() && chunk_list.size() != 1)
      throw ConfigError("rtl", rtl, "writes the merge of one ring: give a single --chunks value");

    progress("preparing the " + kind + " workload and its thresholds");
    const PreparedWorkload pw = source.prepare(*sub, wo, hwc, kind);
    const std::string tau_source = pw.description.value("thresholds", std::string());
    // The plan's product: qk plans the whole head (M = every key, N of them; the thresholds come
    // from its first key tile, as in `kaleido sim`), the other kinds the workload as given.
    ReuseConfig cfg = pw.cfg;
    if (kind == "qk") cfg.out_cols = static_cast<int>(cfg.grid.tokens());
    if (!rtl.empty()) {
      const std::string misfit = hw::ring_rtl_misfit(cfg, hw::RingShape{chunk_list.front(), lead, list_w}, hwc.gather_w);
      if (!misfit.empty()) throw ConfigError("rtl", rtl, misfit + " (--tile, --chunks, --gather-w)");
      hw::RingListsBlock::check(chunk_list.front(), list_w);
      hw::RingCodesBlock::check(static_cast<int>(hw::ring_code_words(cfg, {chunk_list.front(), lead, list_w})), list_w);
    }
    progress("deciding " + std::to_string(cfg.grid.tokens()) + " positions x " + std::to_string(cfg.groups()) +
             " groups");
    const IntReuse reuse = run_reuse(cfg, pw.a);
    const double skipped = reuse.counters.reuse_ratio();

    // The preset sized for the workload, as `kaleido sim` generates kld_top for it (and --rtl the
    // ring's merge).
    hw::HwConfig sized = hwc;
    sized.max_t = cfg.grid.t, sized.max_h = cfg.grid.h, sized.max_w = cfg.grid.w;
    sized.max_k = cfg.channels, sized.max_m = cfg.out_cols;
    const int64_t kld_top_sram_bits = hw::sram_bits_total(hw::sram_roles(sized, "kld_top"));

    const bool masked = key_block > 0;
    if (!masked && keep != 1.0) throw ConfigError("keep", std::to_string(keep), "a block mask needs --key-block");
    const hw::RingMask mask = masked ? random_mask(cfg, key_block, keep, wo.seed) : hw::RingMask{};
    const hw::RingMask* mp = masked ? &mask : nullptr;
    nlohmann::json rows = nlohmann::json::array();
    // --check forms the product through the ring for the operands at hand: with qk, its first key tile.
    const ReuseConfig& check_cfg = pw.cfg;
    if (check && kind == "qk" && masked)
      throw ConfigError("check", "on", "with --workload qk the check covers the first key tile, not a whole-head mask");
    if (check && static_cast<double>(check_cfg.grid.tokens()) * check_cfg.channels * check_cfg.out_cols > kCheckMacLimit)
      throw ConfigError("check", "on", "--check forms the product; this workload has more than 2e9 MACs");
    WideMatrix golden = check ? reuse_output(check_cfg, pw.a, pw.b, reuse) : WideMatrix{};
    // The decisions' quality on the checked operands: the reuse product against the exact one.
    const nlohmann::json quality = check ? quality_json(compare(golden, gemm_exact(pw.a, pw.b))) : nlohmann::json();
    if (check && masked) zero_dropped_blocks(check_cfg, mask, golden);
    for (const int chunk : chunk_list) {
      progress("chunk " + std::to_string(chunk) + ": cycles" + (check ? ", output through the ring" : ""));
      const hw::RingShape shape{chunk, lead, list_w};
      const auto roles = hw::ring_storage(hwc, cfg, shape);
      using hw::GroupPairing;
      const hw::RingCycles dense = hw::ring_cycles(hwc, cfg, nullptr, shape, GroupPairing::KTile, mp);
      const hw::RingCycles re = hw::ring_cycles(hwc, cfg, &reuse.decisions, shape, GroupPairing::KTile, mp);
      const hw::RingCycles paired = hw::ring_cycles(hwc, cfg, &reuse.decisions, shape, GroupPairing::ByCount, mp);
      const hw::RingCycles indep = hw::ring_cycles(hwc, cfg, &reuse.decisions, shape, GroupPairing::Independent, mp);
      const hw::RingCycles dense_indep = hw::ring_cycles(hwc, cfg, nullptr, shape, GroupPairing::Independent, mp);
      nlohmann::json row = {{"chunk", chunk},
                            {"lead", lead},
                            {"list_w", list_w},
                            {"ring_depth", hw::ring_depth(cfg, shape)},
                            {"sram_bits_total", hw::sram_bits_total(roles)},
                            {"dense_cycles", dense.total},
                            {"steps", re.steps},
                            {"dense_cycles_without_mask",
                             masked ? hw::ring_cycles(hwc, cfg, nullptr, shape).total : dense.total},
                            {"reuse_cycles", re.total},
                            {"speedup", static_cast<double>(dense.total) / static_cast<double>(re.total)},
                            {"ideal_speedup", 1.0 / (1.0 - skipped)},
                            {"achieved_over_ideal",
                             static_cast<double>(dense.total) * (1.0 - skipped) / static_cast<double>(re.total)},
                            {"reuse_cycles_paired_by_count", paired.total},
                            {"achieved_over_ideal_paired_by_count",
                             static_cast<double>(dense.total) * (1.0 - skipped) / static_cast<double>(paired.total)},
                            {"dense_cycles_independent_segments", dense_indep.total},
                            {"reuse_cycles_independent_segments", indep.total},
                            {"achieved_over_ideal_independent_segments",
                             static_cast<double>(dense_indep.total) * (1.0 - skipped) / static_cast<double>(indep.total)},
                            {"stalls",
                             {{"weight_load", re.weight_wait},
                              {"detector_starved", re.detect_wait},
                              {"list_builder", re.list_wait},
                              {"ring_full", re.ring_wait},
                              {"tail", re.tail}}},
                            {"dense_stalls", {{"weight_load", dense.weight_wait}, {"ring_full", dense.ring_wait}}}};
      nlohmann::json rj = nlohmann::json::array();
      for (const auto& r : roles)
        rj.push_back({{"role", r.role}, {"formula", r.formula}, {"banks", r.banks}, {"depth", r.depth},
                      {"width", r.width}, {"bits", r.bits()}});
      row["roles"] = rj;
      if (check) {
        const WideMatrix out =
            hw::ring_output(hwc, check_cfg, pw.a, pw.b, reuse, shape, hw::ring_depth(check_cfg, shape), mp);
        row["bit_exact"] = out.data == golden.data;
        if (out.data != golden.data)
          throw InternalError("the ring's output differs from the golden model's (chunk " + std::to_string(chunk) +
                              ")");
      }
      rows.push_back(row);
    }
    std::string rtl_note;
    if (!rtl.empty()) {
      // The ring's merge for this plan: kld_top's sizing for the workload, the plan's ring depth.
      const hw::RingShape shape{chunk_list.front(), lead, list_w};
      const int depth = static_cast<int>(hw::ring_depth(cfg, shape));
      const int code_words = static_cast<int>(hw::ring_code_words(cfg, shape));
      // The engine's detector windows the plan's window (a power of two), not kld_top's whole frame.
      hw::HwConfig det = sized;
      det.win_cap = 1;
      while (det.win_cap < hw::ring_window(cfg)) det.win_cap *= 2;
      // Both designs before either is written: a refused one leaves no folder behind.
      const vlog::Design merge = hw::RingMergeBlock::design(sized, depth);
      const vlog::Design engine = hw::RingEngineBlock::design(det, code_words, shape.chunk, list_w, depth);
      merge.write(rtl);
      engine.write(rtl);
      rtl_note = "wrote kld_ring_merge (RING_DEPTH " + std::to_string(depth) + ", " +
                 std::to_string(sized.max_groups()) + " groups x " + std::to_string(sized.cols) +
                 " columns, GATHER_W " + std::to_string(sized.gather_w) +
                 ") and kld_ring_engine: kld_ring_detect (the detector, " + std::to_string(det.det_lanes()) +
                 " lanes x " + std::to_string(det.lane_groups) + " groups, WIN_CAP " + std::to_string(det.win_cap) +
                 "), kld_ring_passes: kld_ring_front (kld_ring_codes, " + std::to_string(code_words) +
                 " words of " + std::to_string(list_w) + " positions, read into kld_ring_lists, chunks of " +
                 std::to_string(shape.chunk) + ", LIST_W " + std::to_string(list_w) + ") and kld_ring_issue (" +
                 std::to_string(sized.segs()) + " segments, " + std::to_string(sized.max_kt()) +
                 " k-tiles), kld_ring_chunks (the chunk sequencer), kld_ring_walk (the gather's walk), "
                 "kld_ring_a_buffers (A of two chunks, " +
                 std::to_string(hw::RingABuffersBlock::word_groups(det)) +
                 " groups a bank word) and kld_ring_a_replay (the later m-tiles' A, FIFOs of " +
                 std::to_string(hw::RingAReplayBlock::fifo_words(shape.chunk)) + " groups), into " + rtl;
      progress(rtl_note);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json j = {{"hw", hwc.name()},
                        {"rows", hwc.rows},
                        {"cols", hwc.cols},
                        {"group_w", hwc.group_w},
                        {"gather_w", hwc.gather_w},
                        {"lanes", hwc.det_lanes()},
                        {"config", cfg},
                        {"workload", pw.description},
                        {"workload_kind", kind},
                        {"thresholds", tau_source},
                        {"skipped_fraction", skipped},
                        {"quality", quality},
                        {"window", hw::ring_window(cfg)},
                        {"today_kld_top_sram_bits_total", kld_top_sram_bits},
                        {"mask", masked ? nlohmann::json{{"key_block", key_block},
                                                         {"query_blocks", hw::ring_query_blocks(cfg)},
                                                         {"key_blocks", hw::ring_key_blocks(cfg, mask)},
                                                         {"kept", std::count(mask.keep.begin(), mask.keep.end(), 1)},
                                                         {"seed", wo.seed}}
                                        : nlohmann::json(nullptr)},
                        {"chunks", rows},
                        {"rtl", rtl.empty() ? nlohmann::json(nullptr) : nlohmann::json(rtl)},
                        {"seconds", secs}};
    if (json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    print(j, cfg);
  }

  static void print(const nlohmann::json& j, const ReuseConfig& cfg) {
    std::printf("kaleido ring-plan: %dx%d array, GROUP_W %d, GATHER_W %d, %d detector lanes; grid %dx%dx%d "
                "(%lld positions), K=%d, M=%d, tile %dx%d, window %lld positions, lead %d chunk(s), LIST_W %d\n",
                j["rows"].get<int>(), j["cols"].get<int>(), j["group_w"].get<int>(), j["gather_w"].get<int>(),
                j["lanes"].get<int>(), cfg.grid.t, cfg.grid.h, cfg.grid.w,
                static_cast<long long>(cfg.grid.tokens()), cfg.channels, cfg.out_cols, cfg.tile_h, cfg.tile_w,
                static_cast<long long>(j["window"].get<int64_t>()), j["chunks"].front()["lead"].get<int>(),
                j["chunks"].front()["list_w"].get<int>());
    std::printf("  thresholds %s; skipped %.4f of the pairs, so at most %.2fx\n",
                j["thresholds"].get<std::string>().c_str(), j["skipped_fraction"].get<double>(),
                1.0 / (1.0 - j["skipped_fraction"].get<double>()));
    if (!j["mask"].is_null()) {
      const auto& m = j["mask"];
      const auto& r0 = j["chunks"].front();
      std::printf("  block mask (random, seed %llu): %lld of %d x %d (query block = scan tile, key block = %d "
                  "columns) kept, the first m-tile running every query block so that its A is saved; dense "
                  "cycles %lld with it, %lld without (chunk %d)\n",
                  static_cast<unsigned long long>(m["seed"].get<uint64_t>()),
                  static_cast<long long>(m["kept"].get<int64_t>()), m["query_blocks"].get<int>(),
                  m["key_blocks"].get<int>(), m["key_block"].get<int>(),
                  static_cast<long long>(r0["dense_cycles"].get<int64_t>()),
                  static_cast<long long>(r0["dense_cycles_without_mask"].get<int64_t>()), r0["chunk"].get<int>());
    }
    if (!j["quality"].is_null()) {
      const auto& q = j["quality"];
      // An exact product has no finite SNR (JSON null).
      auto num = [](const nlohmann::json& v, int d) { return v.is_number() ? fixed(v.get<double>(), d) : "inf"; };
      std::printf("  reuse product against the exact one on the checked operands: SNR %s dB, cosine %s\n",
                  num(q["snr_db"], 2).c_str(), num(q["cosine"], 6).c_str());
    }
    std::printf("  today's kld_top sized for this workload: %s of SRAM\n",
                bits_text(j["today_kld_top_sram_bits_total"].get<int64_t>()).c_str());
    std::printf("\n| chunk C | ring depth | SRAM | dense cycles | reuse cycles | speedup / ideal | achieved/ideal | "
                "reuse stalls: weights, detector, list builder, ring full | groups paired by count: cycles (achieved/ideal) | independent segments: dense / reuse cycles "
                "(achieved/ideal) | bit-exact |\n|---:|---:|---:|---:|---:|---|---:|---|---|---|---|\n");
    for (const auto& r : j["chunks"]) {
      const auto& s = r["stalls"];
      std::printf("| %d | %lld | %s | %lld | %lld | %.2fx / %.2fx | %.3f | %lld, %lld, %lld, %lld | %lld (%.3f) | %lld / %lld (%.3f) | %s |\n",
                  r["chunk"].get<int>(), static_cast<long long>(r["ring_depth"].get<int64_t>()),
                  bits_text(r["sram_bits_total"].get<int64_t>()).c_str(),
                  static_cast<long long>(r["dense_cycles"].get<int64_t>()),
                  static_cast<long long>(r["reuse_cycles"].get<int64_t>()), r["speedup"].get<double>(),
                  r["ideal_speedup"].get<double>(), r["achieved_over_ideal"].get<double>(),
                  static_cast<long long>(s["weight_load"].get<int64_t>()),
                  static_cast<long long>(s["detector_starved"].get<int64_t>()),
                  static_cast<long long>(s["list_builder"].get<int64_t>()),
                  static_cast<long long>(s["ring_full"].get<int64_t>()),
                  static_cast<long long>(r["reuse_cycles_paired_by_count"].get<int64_t>()),
                  r["achieved_over_ideal_paired_by_count"].get<double>(),
                  static_cast<long long>(r["dense_cycles_independent_segments"].get<int64_t>()),
                  static_cast<long long>(r["reuse_cycles_independent_segments"].get<int64_t>()),
                  r["achieved_over_ideal_independent_segments"].get<double>(),
                  r.contains("bit_exact") ? (r["bit_exact"].get<bool>() ? "yes" : "NO") : "not checked");
    }
    const auto& first = j["chunks"].front();
    std::printf("\nMemories at chunk %d:\n\n| role | formula | banks x depth x width | bits |\n|---|---|---|---:|\n",
                first["chunk"].get<int>());
    for (const auto& r : first["roles"])
      std::printf("| %s | %s | %lld x %lld x %lld | %s |\n", r["role"].get<std::string>().c_str(),
                  r["formula"].get<std::string>().c_str(), static_cast<long long>(r["banks"].get<int64_t>()),
                  static_cast<long long>(r["depth"].get<int64_t>()), static_cast<long long>(r["width"].get<int64_t>()),
                  bits_text(r["bits"].get<int64_t>()).c_str());
    std::printf("\nA model of an architecture whose RTL has only its merge, its passes' front end and "
                "issue, its chunk sequencer, its gather's walk, its detector and its A buffers so far "
                "(kld_ring_merge; kld_ring_engine: kld_ring_detect, kld_ring_chunks, kld_ring_passes "
                "(kld_ring_front, kld_ring_issue), kld_ring_walk, kld_ring_a_buffers, kld_ring_a_replay; "
                "--rtl; docs/hardware.md, \"The window-bounded ring\"); %.1f s\n",
                j["seconds"].get<double>());
  }
};

}  // namespace

void register_ring_plan(CLI::App& app) {
  auto cmd = std::make_shared<RingPlanCommand>();
  CLI::App* sub = app.add_subcommand(
      "ring-plan", "Size and time the window-bounded ring architecture (a model; of its RTL only the merge, the "
      "passes' front end and issue, the chunk sequencer, the gather's walk and the detector, --rtl) on a workload "
      "(synthetic by default; --workload qk: one attention head of a clip, every key)");
  cmd->sub = sub;
  cmd->hw.add_to(*sub);
  cmd->w.add_to(*sub);
  cmd->source.add_to(*sub);
  sub->add_option("--chunks", cmd->chunks, "Scan positions per chunk, comma-separated (0: 8 x ROWS)")
      ->capture_default_str();
  sub->add_option("--lead", cmd->lead, "Chunks the passes may run ahead of the gather (the ring holds W + (lead + 1) C)")
      ->capture_default_str();
  sub->add_option("--list-w", cmd->list_w, "Positions the list builder reads a cycle (later m-tiles)")
      ->capture_default_str();
  sub->add_option("--key-block", cmd->key_block,
                  "Block-sparse run: key block in output columns (a multiple of COLS); query blocks are the scan "
                  "tiles (--tile). 0: no mask")
      ->capture_default_str();
  sub->add_option("--keep", cmd->keep, "Block-sparse run: fraction of (query, key) blocks kept, chosen by --seed")
      ->capture_default_str();
  sub->add_flag("--check", cmd->check, "Also form the output through the ring and compare it with the golden model");
  sub->add_flag("--json", cmd->json, "Print the plan as JSON");
  sub->add_option("--rtl", cmd->rtl,
                  "Also write kld_ring_merge (the ring's merge) for this plan's ring depth and kld_ring_passes: "
                  "kld_ring_front (its decision codes, kld_ring_codes, for its words, read into its list builder, "
                  "kld_ring_lists, for its chunk and --list-w) joined to kld_ring_issue (the passes' issue from "
                  "the lists), kld_ring_chunks (the chunk sequencer) and kld_ring_walk (the gather's walk), joined "
                  "in kld_ring_engine with kld_ring_detect (the detector: LANES x LANE_GROUPS must reach G), into "
                  "this folder (block-tested; not yet in kld_top; one --chunks value)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace kaleido::cli
