#include "sweep/runner.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/format.hpp"
#include "common/stopwatch.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "hw/generator.hpp"
#include "ppa/synth.hpp"
#include "ppa/yosys_flow.hpp"

namespace kaleido::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Serialises progress lines from the worker threads and numbers them.
class Progress {
 public:
  Progress(std::ostream* os, int total) : os_(os), total_(total) {}
  void line(const SweepPoint& p, const std::string& top, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    ++n_;
    if (os_) *os_ << "[" << n_ << "/" << total_ << "] " << p.label() << " " << top << " ... " << what << std::endl;
  }
  // A line about the point as a whole, before its numbered ones (it counts no top).
  void note(const SweepPoint& p, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (os_) *os_ << "      " << p.label() << " ... " << what << std::endl;
  }

 private:
  std::ostream* os_;
  int total_;
  int n_ = 0;
  std::mutex mu_;
};

std::string seconds_text(double s) { return fixed(s, 1) + " s"; }

json point_json(const SweepSpec& spec, const SweepPoint& p) {
  json lib_files = json::array();
  for (const fs::path& f : p.library.files) lib_files.push_back(f.string());
  return {{"id", p.id},
          {"config", p.config},
          {"config_name", p.config.name()},
          {"clock_ns", p.clock_ns},
          {"library", {{"label", p.library.label}, {"files", lib_files}}},
          {"activity", spec.activity},
          {"recipe", spec.recipe}};
}

// synth.json repeats the SRAM model's description in every macro (193 of
// them in a 2x2 kld_top): keep it once per top so result.json stays small.
json compact_synth_json(json j) {
  if (j.contains("sram") && !j["sram"].empty()) {
    j["sram_model"] = j["sram"][0].value("model", std::string());
    for (json& s : j["sram"]) s.erase("model");
  }
  return j;
}

using RtlHashes = std::map<std::string, std::string>;  // top -> content hash of the files it needs

// Generates the point's RTL into `rtl` and hashes each top's files: what a finished result must
// have been made from. Nothing when the RTL cannot be generated (the run then records why).
std::optional<RtlHashes> current_rtl(const SweepSpec& spec, const SweepPoint& p, const fs::path& rtl) {
  try {
    fs::create_directories(rtl.parent_path());
    hw::write_rtl(p.config, rtl);
    RtlHashes h;
    for (const std::string& top : spec.tops)
      if (fs::exists(rtl / (top + ".v")))
        h[top] = ppa::rtl_content_hash(ppa::rtl_files_for_top(ppa::rtl_files_in(rtl), top));
    return h;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Whether `file` holds every top's result for the RTL the generator makes now (`rtl_hash`);
// otherwise `why` (when given) says what is stale.
bool finished(const SweepSpec& spec, const fs::path& file, const std::optional<RtlHashes>& rtl_hash,
              std::string* why = nullptr) {
  if (!rtl_hash || !fs::exists(file)) return false;
  try {
    const json j = json::parse(read_file(file));
    for (const std::string& t : spec.tops) {
      if (!j.at("tops").contains(t)) return false;  // a top was added to the sweep since
      const std::string was = j.at("tops").at(t).at("design").value("rtl_hash", std::string("(none)"));
      if (was != rtl_hash->at(t)) {
        if (why) *why = "stale: " + t + "'s RTL changed since (" + was + " -> " + rtl_hash->at(t) + "), rerun";
        return false;
      }
    }
    // Results from before recipes were recorded were all made with `yosys`.
    return j.at("point").value("recipe", std::string("yosys")) == spec.recipe;
  } catch (const std::exception&) {
    return false;  // unreadable: redo it
  }
}

PointOutcome run_point(const SweepSpec& spec, const SweepPoint& p, const RunOptions& opt, const fs::path& work_root,
                       Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  PointOutcome o;
  const fs::path dir = point_dir(opt.out, p);
  if (!p.library.unavailable.empty()) {
    o.status = PointStatus::SkippedUnavailable;
    o.message = p.library.unavailable;
    for (const std::string& top : spec.tops) progress.line(p, top, "skipped (" + o.message + ")");
    return o;
  }
  if (opt.max_pes > 0 && p.pes() > opt.max_pes) {
    o.status = PointStatus::SkippedLimit;
    for (const std::string& top : spec.tops) progress.line(p, top, "not run (above --max-pes " + std::to_string(opt.max_pes) + ")");
    return o;
  }
  const fs::path work = work_root / p.id;
  const fs::path rtl = work / "rtl";
  // The RTL first: a finished result must have been made from the same files.
  const auto tr = std::chrono::steady_clock::now();
  const std::optional<RtlHashes> rtl_hash = current_rtl(spec, p, rtl);
  const double rtl_seconds = seconds_since(tr);
  std::string stale;
  if (!opt.force && finished(spec, result_file(opt.out, p), rtl_hash, &stale)) {
    o.status = PointStatus::SkippedDone;
    for (const std::string& top : spec.tops) progress.line(p, top, "skipped (done, same RTL)");
    return o;
  }
  if (!stale.empty()) progress.note(p, stale);
  size_t top_index = 0;
  fs::path current_log = work;
  try {
    fs::create_directories(dir);
    fs::remove(failure_file(opt.out, p));
    fs::remove(dir / "error.log");
    json result;
    result["kaleido_version"] = version();
    result["sweep"] = spec.name;
    result["point"] = point_json(spec, p);
    fs::create_directories(work);
    if (!rtl_hash) hw::write_rtl(p.config, rtl);  // again, to record why it cannot be generated
    result["run_times_s"]["rtl"] = rtl_seconds;
    for (; top_index < spec.tops.size(); ++top_index) {
      const std::string& top = spec.tops[top_index];
      const auto tt = std::chrono::steady_clock::now();
      if (!fs::exists(rtl / (top + ".v")))
        throw ConfigError("tops", top, "is not a module of the generated design (no " + top + ".v in " + rtl.string() + ")");
      ppa::SynthOptions so;
      so.rtl_dir = rtl;
      so.top = top;
      so.liberty = p.library.files;
      so.clock_period_ns = p.clock_ns;
      so.out_dir = work / top;
      so.work_dir = work / top / "work";  // explicit: parallel points must not share ppa's default temp folder
      current_log = so.work_dir;
      so.config_name = p.id + "_" + top;
      so.vectorless_activity = spec.activity;
      so.recipe = spec.recipe;
      const ppa::SynthResult r = ppa::run_synthesis_flow(so);
      result["tops"][top] = compact_synth_json(ppa::result_json(r));
      write_file_atomic(dir / (top + ".md"), ppa::result_markdown(r));
      const double s = seconds_since(tt);
      result["run_times_s"][top] = s;
      progress.line(p, top, seconds_text(s));
    }
    result["run_times_s"]["total"] = seconds_since(t0);
    write_file_atomic(result_file(opt.out, p), result.dump(1) + "\n");  // last: marks the point finished
    o.status = PointStatus::Done;
  } catch (const std::exception& e) {
    o.status = PointStatus::Failed;
    o.message = e.what();
    const fs::path log = dir / "error.log";
    try {  // a record that cannot be written must not end the other points
      write_file_atomic(log, std::string(e.what()) + "\ntool logs and intermediate files: " + current_log.string() + "\n");
      const json failed = {{"point", point_json(spec, p)},
                           {"error", e.what()},
                           {"top", top_index < spec.tops.size() ? spec.tops[top_index] : ""},
                           {"log", log.string()},
                           {"work", current_log.string()}};
      write_file_atomic(failure_file(opt.out, p), failed.dump(1) + "\n");
    } catch (const std::exception& record_error) {
      o.message += std::string(" (and the failure record could not be written: ") + record_error.what() + ")";
    }
    for (size_t i = top_index; i < spec.tops.size(); ++i)
      progress.line(p, spec.tops[i], i == top_index ? "FAILED (see " + log.string() + ")" : "not run (point failed)");
  }
  o.seconds = seconds_since(t0);
  return o;
}

}  // namespace

int RunSummary::count(PointStatus s) const {
  int n = 0;
  for (const PointOutcome& p : points) n += p.status == s ? 1 : 0;
  return n;
}

fs::path point_dir(const fs::path& out, const SweepPoint& p) { return out / "points" / p.id; }
fs::path result_file(const fs::path& out, const SweepPoint& p) { return point_dir(out, p) / "result.json"; }
fs::path failure_file(const fs::path& out, const SweepPoint& p) { return point_dir(out, p) / "failed.json"; }

fs::path default_work_root(const SweepSpec& spec, const fs::path& out) {
  const fs::path abs = fs::absolute(out).lexically_normal();
  if (!in_tracked_tree(abs.string())) return abs / "points";
  const size_t h = std::hash<std::string>{}(abs.string());
  return fs::temp_directory_path() / ("kaleido_sweep_" + spec.name + "_" + std::to_string(h % 1000000007u));
}

RunSummary run_sweep(const SweepSpec& spec, const RunOptions& opt) {
  if (opt.out.empty()) throw ConfigError("--out", "(empty)", "name an output folder");
  if (opt.jobs < 1) throw ConfigError("-j", std::to_string(opt.jobs), "must be at least 1");
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path work_root = opt.work.empty() ? default_work_root(spec, opt.out) : fs::absolute(opt.work);
  fs::create_directories(opt.out / "points");
  RunSummary sum;
  sum.points.resize(spec.points.size());
  Progress progress(opt.progress, static_cast<int>(spec.points.size() * spec.tops.size()));
  std::atomic<size_t> next{0};
  // Each worker takes the next point; the external tools run as child processes.
  if (opt.only_point >= static_cast<int>(spec.points.size()))
    throw ConfigError("--point", std::to_string(opt.only_point),
                      "the sweep has " + std::to_string(spec.points.size()) + " points (0 to " +
                          std::to_string(spec.points.size() - 1) + ")");
  auto worker = [&] {
    for (size_t i = next++; i < spec.points.size(); i = next++) {
      if (opt.only_point >= 0 && i != static_cast<size_t>(opt.only_point)) {
        sum.points[i].status = PointStatus::SkippedDone;  // not this task's point
        continue;
      }
      sum.points[i] = run_point(spec, spec.points[i], opt, work_root, progress);
    }
  };
  const size_t n = std::min<size_t>(static_cast<size_t>(opt.jobs), std::max<size_t>(1, spec.points.size()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  sum.seconds = seconds_since(t0);
  return sum;
}

RunSummary run_sweep_slurm(const SweepSpec& spec, const fs::path& spec_file, const RunOptions& opt,
                           const slurm::Options& slurm_opt, const fs::path& shared) {
  if (opt.out.empty()) throw ConfigError("--out", "(empty)", "name an output folder");
  if (!slurm::available())
    throw Error("--backend slurm needs sbatch and squeue on PATH (Debian package slurm-client; docs/slurm.md)");
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out = fs::absolute(opt.out);
  const fs::path base = shared.empty() ? out : fs::absolute(shared);
  const fs::path work_root = opt.work.empty() ? base / "work" : fs::absolute(opt.work);
  fs::create_directories(out / "points");
  RunSummary sum;
  sum.points.resize(spec.points.size());
  auto say = [&](const std::string& s) {
    if (opt.progress) *opt.progress << s << std::endl;
  };
  std::vector<size_t> todo;
  std::vector<std::optional<RtlHashes>> rtl_hash(spec.points.size());  // what each task generates
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const SweepPoint& p = spec.points[i];
    PointOutcome& o = sum.points[i];
    std::string stale;
    if (!p.library.unavailable.empty()) {
      o.status = PointStatus::SkippedUnavailable;
      o.message = p.library.unavailable;
    } else if (opt.max_pes > 0 && p.pes() > opt.max_pes) {
      o.status = PointStatus::SkippedLimit;
    } else {
      rtl_hash[i] = current_rtl(spec, p, work_root / p.id / "rtl");
      if (!opt.force && finished(spec, result_file(out, p), rtl_hash[i], &stale)) {
        o.status = PointStatus::SkippedDone;
      } else {
        if (!stale.empty()) say("slurm: " + p.id + ": " + stale);
        todo.push_back(i);
      }
    }
  }
  if (todo.empty()) {
    say("slurm: every point is finished or skipped; nothing to submit");
    sum.seconds = seconds_since(t0);
    return sum;
  }
  // A rerun must not read a previous attempt's outcome as this one's.
  for (size_t i : todo) {
    fs::remove(failure_file(out, spec.points[i]));
    if (opt.force) fs::remove(result_file(out, spec.points[i]));
  }
  char exe_buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe_buf, sizeof exe_buf - 1);
  if (n <= 0) throw Error("cannot find the kaleido executable (/proc/self/exe) to run on the nodes");
  std::vector<std::string> task = {std::string(exe_buf, static_cast<size_t>(n)), "sweep", fs::absolute(spec_file).string(),
                                   "--out", out.string(), "--work-dir", work_root.string()};
  if (opt.force) task.push_back("--force");
  const std::string command = command_text(task) + " --point \"$SLURM_ARRAY_TASK_ID\"";
  const fs::path logs = base / "slurm";
  const std::string job = slurm::submit_array(slurm_opt, "kaleido_sweep_" + spec.name, todo, command, logs);
  say("slurm: job " + job + ", " + std::to_string(todo.size()) + " of " + std::to_string(spec.points.size()) +
      " points submitted; task logs in " + logs.string());
  auto settled = [&] {
    size_t k = 0;
    for (size_t i : todo)
      k += fs::exists(result_file(out, spec.points[i])) || fs::exists(failure_file(out, spec.points[i]));
    return k;
  };
  slurm::wait_for(job, slurm_opt, [&](const slurm::QueueState& q) {
    say("slurm: [" + std::to_string(settled()) + "/" + std::to_string(todo.size()) + "] points finished; " +
        q.text() + " (" + seconds_text(seconds_since(t0)) + ")");
  });
  for (size_t i : todo) {
    const SweepPoint& p = spec.points[i];
    PointOutcome& o = sum.points[i];
    if (finished(spec, result_file(out, p), rtl_hash[i])) {
      o.status = PointStatus::Done;
      continue;
    }
    o.status = PointStatus::Failed;
    const fs::path log = logs / (job + "_" + std::to_string(i) + ".log");
    if (fs::exists(failure_file(out, p))) {
      try {
        o.message = json::parse(read_file(failure_file(out, p))).value("error", std::string("failed"));
      } catch (const std::exception&) {
        o.message = "failed (unreadable failed.json)";
      }
    } else {
      // Killed (time or memory limit, node failure) before it could record anything.
      o.message = "the Slurm task ended without a result; log: " + log.string();
      const json failed = {{"point", point_json(spec, p)}, {"error", o.message}, {"log", log.string()}};
      fs::create_directories(point_dir(out, p));
      write_file_atomic(failure_file(out, p), failed.dump(1) + "\n");
      write_file_atomic(point_dir(out, p) / "error.log", o.message + "\n");
    }
    say("slurm: " + p.id + " FAILED: " + o.message);
  }
  sum.seconds = seconds_since(t0);
  return sum;
}

}  // namespace kaleido::sweep
