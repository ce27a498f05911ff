#include "golden/threshold.hpp"

#include <sstream>

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
