#include "golden/threshold.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "golden/gemm.hpp"
#include "golden/metrics.hpp"
#include "golden/reuse.hpp"

namespace kaleido {

ThresholdSchedule ThresholdSchedule::load(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<std::vector<uint32_t>> table;
  const bool is_json = path.size() > 5 && path.substr(path.size() - 5) == ".json";
  if (is_json) {
    try {
      const auto j = nlohmann::json::parse(text);
      table = j.at("tau").get<std::vector<std::vector<uint32_t>>>();
    } catch (const nlohmann::json::exception& e) {
      throw FileError(path, std::string("not a threshold schedule (expected {\"tau\": [[...]]}): ") + e.what());
    }
  } else {
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::vector<uint32_t> row;
      std::stringstream ls(line);
      std::string cell;
      while (std::getline(ls, cell, ',')) {
        char* end = nullptr;
        const long v = std::strtol(cell.c_str(), &end, 10);
        while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
        if (cell.find_first_not_of(" \t\r") == std::string::npos || *end != '\0' || v < 0)
          throw FileError(path, "line " + std::to_string(lineno) + ": '" + cell + "' is not a non-negative integer");
        row.push_back(static_cast<uint32_t>(v));
      }
      table.push_back(row);
    }
  }
  if (table.empty()) throw FileError(path, "threshold schedule has no steps");
  return ThresholdSchedule(std::move(table));
}

const std::vector<uint32_t>& ThresholdSchedule::at_step(int s) const {
  if (s < 0 || s >= steps())
    throw ConfigError("step", std::to_string(s), "must be 0 to " + std::to_string(steps() - 1) + " (schedule rows)");
  return table_[static_cast<size_t>(s)];
}

void ThresholdSchedule::validate(int groups, int data_w) const {
  for (int s = 0; s < steps(); ++s) {
    const auto& row = table_[static_cast<size_t>(s)];
    if (static_cast<int>(row.size()) != groups)
      throw ConfigError("tau schedule step " + std::to_string(s), std::to_string(row.size()) + " values",
                        "needs one threshold per group (" + std::to_string(groups) + ")");
    for (uint32_t t : row)
      if (t > (2u << data_w) - 1u)
        throw ConfigError("tau schedule step " + std::to_string(s), std::to_string(t),
                          "must fit DATA_W+1 = " + std::to_string(data_w + 1) + " unsigned bits");
  }
}

KnobSchedule KnobSchedule::load(const std::string& path) {
  KnobSchedule s;
  try {
    const auto j = nlohmann::json::parse(read_file(path));
    if (j.at("format").get<std::string>() != kFormat)
      throw FileError(path, "format is \"" + j.at("format").get<std::string>() + "\", expected \"" + kFormat + "\"");
    s.source = j.value("source", std::string());
    s.group_w = j.at("group_w").get<int>();
    s.policy = j.at("policy").get<std::string>();
    s.distance = j.at("distance").get<std::string>();
    for (const auto& e : j.at("steps")) {
      KnobStep k;
      k.step = e.at("step").get<int>();
      // Absent or null for real activations, which have no noise level of their own.
      k.sigma = e.contains("sigma") && e["sigma"].is_number() ? e["sigma"].get<double>() : std::nan("");
      k.snr_target_db = e.at("snr_target_db").get<double>();
      k.knobs = e.at("knobs").get<std::map<std::string, std::vector<double>>>();
      for (const auto& [gemm, knobs] : k.knobs)
        for (double x : knobs)
          if (!(x >= 0.0) || !std::isfinite(x))
            throw FileError(path, "step " + std::to_string(k.step) + ", " + gemm + fmt::format(": knob {:g}", x) +
                                      " is not a non-negative number");
      s.steps.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw FileError(path, std::string("not a block threshold schedule: ") + e.what());
  }
  if (s.steps.empty()) throw FileError(path, "block threshold schedule has no steps");
  return s;
}

std::string KnobSchedule::to_json() const {
  nlohmann::json j = {{"format", kFormat},
                      {"rule", "tau_j = knob x RMS of group j of the GEMM's A (per head for qk and pv)"},
                      {"source", source},
                      {"group_w", group_w},
                      {"policy", policy},
                      {"distance", distance},
                      {"steps", nlohmann::json::array()}};
  for (const KnobStep& k : steps)
    j["steps"].push_back({{"step", k.step},
                          {"sigma", std::isfinite(k.sigma) ? nlohmann::json(k.sigma) : nlohmann::json()},
                          {"snr_target_db", k.snr_target_db},
                          {"knobs", k.knobs}});
  return j.dump(1) + "\n";
}

double KnobSchedule::knob(const std::string& gemm, int head, int step, double snr_target_db) const {
  const KnobStep* found = nullptr;
  std::string have;
  for (const KnobStep& k : steps) {
    if (k.step != step) continue;
    have += fmt::format("{}{:g}", have.empty() ? "" : ", ", k.snr_target_db);
    if (snr_target_db >= 0.0 && std::abs(k.snr_target_db - snr_target_db) > 1e-9) continue;
    if (found)
      throw ConfigError("--schedule-snr", "(not given)",
                        "step " + std::to_string(step) + " has several targets (" + have + " dB): pick one");
    found = &k;
  }
  if (!found) {
    std::string steps_there;
    for (const KnobStep& k : steps) steps_there += (steps_there.empty() ? "" : ", ") + std::to_string(k.step);
    const std::string asked =
        std::to_string(step) + (snr_target_db >= 0.0 ? fmt::format(" at {:g} dB", snr_target_db) : "");
    throw ConfigError("step", asked, "the schedule has steps " + steps_there + (have.empty() ? "" : "; this step's targets: " + have));
  }
  const auto g = found->knobs.find(gemm);
  if (g == found->knobs.end()) {
    std::string names;
    for (const auto& [name, _] : found->knobs) names += (names.empty() ? "" : ", ") + name;
    throw ConfigError("--gemm", gemm, "the schedule has " + names);
  }
  if (head < 0 || head >= static_cast<int>(g->second.size()))
    throw ConfigError("--head", std::to_string(head),
                      "GEMM " + gemm + " has " + std::to_string(g->second.size()) + " head(s) in the schedule");
  return g->second[static_cast<size_t>(head)];
}

void KnobSchedule::check_decisions(int group_w_used, const std::string& policy_used,
                                   const std::string& distance_used, const std::string& path) const {
  const std::pair<std::string, std::string> pairs[] = {{std::to_string(group_w), std::to_string(group_w_used)},
                                                       {policy, policy_used},
                                                       {distance, distance_used}};
  const char* option[] = {"--group-w", "--policy", "--distance"};
  for (size_t k = 0; k < 3; ++k)
    if (pairs[k].first != pairs[k].second)
      throw ConfigError(option[k], pairs[k].second,
                        "the block schedule " + path + " was calibrated with " + pairs[k].first);
}

std::vector<uint32_t> thresholds_from_knob(const ReuseConfig& cfg, const IntMatrix& a, double knob) {
  if (!(knob >= 0.0) || !std::isfinite(knob)) throw ConfigError("knob", std::to_string(knob), "must be >= 0");
  if (a.cols != cfg.channels) throw Error("thresholds_from_knob: A has " + std::to_string(a.cols) + " channels");
  std::vector<uint32_t> tau;
  for (int g = 0; g < cfg.groups(); ++g) {
    double sum = 0.0;
    for (int64_t i = 0; i < a.rows; ++i)
      for (int c = g * cfg.group_w; c < (g + 1) * cfg.group_w; ++c) {
        const double x = static_cast<double>(a.at(i, c));
        sum += x * x;
      }
    const double rms = std::sqrt(sum / (static_cast<double>(a.rows) * cfg.group_w));
    tau.push_back(static_cast<uint32_t>(std::min(std::llround(knob * rms), static_cast<long long>(cfg.tau_max()))));
  }
  return tau;
}

Calibration calibrate_reuse_ratio(const ReuseConfig& cfg, const IntMatrix& a, double target) {
  if (!(target >= 0.0 && target <= 1.0)) throw ConfigError("target_reuse", std::to_string(target), "must be in [0, 1]");
  const int G = cfg.groups();
  const int64_t N = cfg.grid.tokens();
  std::vector<uint32_t> lo(static_cast<size_t>(G), 0), hi(static_cast<size_t>(G), cfg.tau_max());
  ReuseConfig probe = cfg;
  // All groups bisect at once: one model run evaluates every group's probe.
  for (bool busy = true; busy;) {
    busy = false;
    probe.tau.assign(static_cast<size_t>(G), 0);
    for (int g = 0; g < G; ++g) probe.tau[static_cast<size_t>(g)] = lo[g] + (hi[g] - lo[g]) / 2;
    const IntReuse r = run_reuse(probe, a);
    for (int g = 0; g < G; ++g) {
      if (lo[g] >= hi[g]) continue;
      busy = true;
      if (r.counters.group_ratio(g, N) >= target)
        hi[g] = probe.tau[static_cast<size_t>(g)];
      else
        lo[g] = probe.tau[static_cast<size_t>(g)] + 1;
    }
  }
  probe.tau = lo;
  Calibration c;
  c.tau = lo;
  c.achieved = run_reuse(probe, a).counters.reuse_ratio();
  return c;
}

namespace {

// One threshold shared by all groups, the largest whose output quality figure `metric` stays >= target_db.
Calibration calibrate_quality(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, double target_db,
                              double Quality::*metric, const char* name) {
  const WideMatrix exact = gemm_exact(a, b);
  ReuseConfig probe = cfg;
  auto quality_at = [&](uint32_t tau) {
    probe.tau.assign(static_cast<size_t>(cfg.groups()), tau);
    const IntReuse r = run_reuse(probe, a);
    return compare(gemm_exact(r.a_eff, b), exact).*metric;
  };
  uint32_t lo = 0, hi = cfg.tau_max();  // largest tau with quality >= target, in [lo, hi]
  if (quality_at(0) < target_db)
    throw Error(std::string("target ") + name + " " + std::to_string(target_db) + " dB is not reachable even at tau = 0");
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (quality_at(mid) >= target_db)
      lo = mid;
    else
      hi = mid - 1;
  }
  Calibration c;
  c.tau.assign(static_cast<size_t>(cfg.groups()), lo);
  c.achieved = quality_at(lo);
  return c;
}

}  // namespace

Calibration calibrate_psnr(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, double target_db) {
  return calibrate_quality(cfg, a, b, target_db, &Quality::psnr_db, "PSNR");
}

Calibration calibrate_snr(const ReuseConfig& cfg, const IntMatrix& a, const IntMatrix& b, double target_db) {
  return calibrate_quality(cfg, a, b, target_db, &Quality::snr_db, "SNR");
}

}  // namespace kaleido
