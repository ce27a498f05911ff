#include "ppa/gatesim.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "common/error.hpp"

namespace kaleido::ppa {

// ---------------------------------------------------------------- simulator

namespace {

struct CellModel {
  const LibCell* cell = nullptr;
  std::vector<int> in_pins;   // LibCell pin indices of inputs, in variable order
  std::vector<int> out_pins;  // LibCell pin indices of outputs
  std::vector<std::vector<uint8_t>> out_tables;  // over inputs + (IQ, IQN) when sequential
  bool seq = false;
  bool latch = false;
  std::vector<uint8_t> next_state, clocked_on, clear, preset;  // over inputs + (IQ, IQN)
  char cpv1 = 'L';
};

struct Inst {
  int model = 0;
  std::vector<int> in_nets;   // one per model in_pins (kNet0 when unconnected)
  std::vector<int> out_nets;  // one per model out_pins (-1 when unconnected)
  uint8_t iq = 0;
  uint8_t clk_prev = 0;
  int level = 0;
};

struct SramReadSim {
  std::vector<int> addr, data;
  int en = -1;
  bool en_low = false;
  bool registered = false;
  uint64_t last_addr = ~uint64_t{0};  // address at the previous clock edge (async ports)
};

struct SramSim {
  std::string path;
  int clk = -1;
  std::vector<int> waddr, wdata;
  int we = -1, en = -1;
  bool we_low = false, en_low = false;
  std::vector<SramReadSim> reads;
  bool modelled = false;
  std::string how;
  std::vector<std::vector<uint8_t>> mem;
  uint8_t clk_prev = 0;
  bool queued = false;
  uint64_t n_reads = 0, n_writes = 0;
};

// What the clock edge of an SRAM does, applied with the registers' captures.
struct SramEdge {
  int sram = 0;
  int port = -1;  // read port for a registered read, -1 for a write
  size_t addr = 0;
  std::vector<uint8_t> word;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool active_low_name(const std::string& n) {
  const std::string l = lower(n);
  auto ends = [&](const char* suf) {
    const std::string s(suf);
    return l.size() > s.size() && l.compare(l.size() - s.size(), s.size(), s) == 0;
  };
  return ends("_n") || ends("_ni") || ends("_b") || ends("_bi") || ends("n_i");
}

}  // namespace

struct GateSim::Impl {
  const FlatNetlist& n;
  std::string clock_port;
  std::vector<CellModel> models;
  std::vector<Inst> insts;
  std::vector<uint8_t> queued;     // per instance: waiting in a bucket or seq_dirty
  std::vector<int> sched_level;    // per instance: level of a combinational cell, -1 sequential
  std::vector<SramSim> srams;
  std::vector<uint8_t> val;
  std::vector<std::vector<int>> fanout;       // net -> instances
  std::vector<std::vector<int>> sram_fanout;  // net -> srams
  std::vector<std::vector<int>> buckets;      // level -> queued combinational instances
  std::vector<int> seq_dirty, sram_dirty;
  std::vector<std::pair<int, uint8_t>> pending;                        // flop captures
  std::vector<SramEdge> sram_pending;                                  // registered reads and writes
  bool counting = false;
  std::vector<uint64_t> toggles, rises;
  std::map<std::string, const NetlistPort*> ports;
  int queued_count = 0;

  const std::vector<SramShape>& shapes;

  Impl(const FlatNetlist& netlist, const Library& lib, std::string clk, const std::vector<SramShape>& sram_shapes)
      : n(netlist), clock_port(std::move(clk)), shapes(sram_shapes) {
    (void)lib;
    build();
  }

  static std::vector<uint8_t> table_of(const std::string& f, const std::vector<std::string>& vars) {
    if (f.empty()) return {};
    return BoolFunction::parse(f).truth_table(vars);
  }

  int model_of(const LibCell* c, std::map<const LibCell*, int>& cache) {
    auto it = cache.find(c);
    if (it != cache.end()) return it->second;
    CellModel m;
    m.cell = c;
    std::vector<std::string> vars;
    for (size_t i = 0; i < c->pins.size(); ++i) {
      const LibPin& p = c->pins[i];
      if (p.direction == PinDirection::Input) {
        m.in_pins.push_back(static_cast<int>(i));
        vars.push_back(p.name);
      } else if (p.direction == PinDirection::Output || p.direction == PinDirection::Inout) {
        m.out_pins.push_back(static_cast<int>(i));
      }
    }
    if (c->has_statetable) throw Error("cannot simulate cell " + c->name + ": its behaviour is a statetable");
    if (c->sequentials.size() > 1) throw Error("cannot simulate cell " + c->name + ": more than one ff/latch group");
    if (!c->sequentials.empty()) {
      const SequentialGroup& s = c->sequentials.front();
      m.seq = true;
      m.latch = s.latch;
      vars.push_back(s.q_var);
      vars.push_back(s.qn_var.empty() ? "\x01unused" : s.qn_var);
      m.next_state = table_of(s.next_state, vars);
      m.clocked_on = table_of(s.clocked_on, vars);
      m.clear = table_of(s.clear, vars);
      m.preset = table_of(s.preset, vars);
      if (!s.clear_preset_var1.empty()) m.cpv1 = s.clear_preset_var1[0];
      if (m.next_state.empty() || m.clocked_on.empty())
        throw Error("cannot simulate cell " + c->name + ": ff/latch group without next_state/clocked_on");
    }
    if (vars.size() > 16) throw Error("cannot simulate cell " + c->name + ": more than 16 inputs");
    for (int op : m.out_pins) {
      const LibPin& p = c->pins[static_cast<size_t>(op)];
      if (p.function.empty()) throw Error("cannot simulate cell " + c->name + ": output " + p.name + " has no function");
      m.out_tables.push_back(table_of(p.function, vars));
    }
    const int idx = static_cast<int>(models.size());
    models.push_back(std::move(m));
    cache.emplace(c, idx);
    return idx;
  }

  void build() {
    val.assign(static_cast<size_t>(n.num_nets), 0);
    val[kNet1] = 1;
    toggles.assign(val.size(), 0);
    rises.assign(val.size(), 0);
    fanout.assign(val.size(), {});
    sram_fanout.assign(val.size(), {});
    for (const NetlistPort& p : n.ports) ports[p.name] = &p;
    std::map<const LibCell*, int> cache;
    std::vector<int> driver(val.size(), -1);
    insts.reserve(n.cells.size());
    for (const NetlistCell& c : n.cells) {
      Inst in;
      in.model = model_of(c.cell, cache);
      const CellModel& m = models[static_cast<size_t>(in.model)];
      for (int pi : m.in_pins) {
        const int net = c.pin_net[static_cast<size_t>(pi)];
        in.in_nets.push_back(net < 0 ? kNet0 : net);
      }
      const int idx = static_cast<int>(insts.size());
      for (int po : m.out_pins) {
        const int net = c.pin_net[static_cast<size_t>(po)];
        in.out_nets.push_back(net);
        if (net < 2) continue;
        if (driver[static_cast<size_t>(net)] >= 0)
          throw Error("net " + n.net_names[static_cast<size_t>(net)] + " has more than one driver (" + c.path + ")");
        driver[static_cast<size_t>(net)] = idx;
      }
      for (int net : in.in_nets)
        if (net >= 2) fanout[static_cast<size_t>(net)].push_back(idx);
      insts.push_back(std::move(in));
    }
    for (const NetlistBlackBox& b : n.blackboxes) add_sram(b);
    levelize(driver);
  }

  void add_sram(const NetlistBlackBox& b) {
    SramSim s;
    s.path = b.path;
    auto single = [](const std::vector<int>& nets) { return nets.size() == 1 ? nets[0] : -1; };
    auto input = [&](const std::string& name) -> const std::vector<int>* {
      for (const auto& [pn, nets] : b.inputs)
        if (pn == name) return &nets;
      return nullptr;
    };
    auto output = [&](const std::string& name) -> const std::vector<int>* {
      for (const auto& [pn, nets] : b.outputs)
        if (pn == name) return &nets;
      return nullptr;
    };
    // Clock and write port by name (clk, we, waddr/addr, wdata/din).
    std::vector<int> addr;
    for (const auto& [name, nets] : b.inputs) {
      const std::string l = lower(name);
      if (l.find("clk") != std::string::npos || l.find("clock") != std::string::npos) {
        s.clk = single(nets);
      } else if (l.find("waddr") != std::string::npos || l.find("wr_addr") != std::string::npos) {
        s.waddr = nets;
      } else if (l.find("raddr") != std::string::npos || l.find("rd_addr") != std::string::npos) {
        // read addresses: below
      } else if (l.find("addr") != std::string::npos || l.find("adr") != std::string::npos) {
        addr = nets;
      } else if (l.find("wdata") != std::string::npos || l.find("din") != std::string::npos ||
                 l.find("wr_data") != std::string::npos || l == "d_i" || l == "d") {
        s.wdata = nets;
      } else if (l.rfind("we", 0) == 0 || l.find("_we") != std::string::npos || l.find("wr_en") != std::string::npos ||
                 l.find("wen") != std::string::npos || l.find("write") != std::string::npos) {
        s.we = single(nets);
        s.we_low = active_low_name(name);
      } else if (l == "en_i" || l == "ce_i" || l == "cs_i" || l == "en" || l == "ce" || l == "cs" || l == "req_i") {
        s.en = single(nets);
        s.en_low = active_low_name(name);
      }
    }
    if (s.waddr.empty()) s.waddr = addr;
    const SramShape* shape = nullptr;
    for (const SramShape& sh : shapes)
      if (sh.module == b.module) shape = &sh;
    std::ostringstream how;
    if (shape && !shape->read_ports.empty()) {
      // Read ports as traced in the SRAM's RTL.
      for (const SramReadPort& rp : shape->read_ports) {
        SramReadSim r;
        if (const auto* a = input(rp.addr_port)) r.addr = *a;
        if (const auto* d = output(rp.data_port)) r.data = *d;
        if (!rp.enable_port.empty())
          if (const auto* e = input(rp.enable_port)) r.en = single(*e);
        r.registered = rp.registered;
        s.reads.push_back(r);
        how << (how.tellp() > 0 ? "; " : "") << (rp.registered ? "registered" : "asynchronous") << " read "
            << rp.addr_port << " -> " << rp.data_port;
      }
    } else {
      // By name: raddrK -> rdataK pairs, else the shared address -> the read data output (registered).
      for (const auto& [name, nets] : b.inputs) {
        const std::string l = lower(name);
        if (l.find("raddr") == std::string::npos && l.find("rd_addr") == std::string::npos) continue;
        std::string want = name;
        const size_t at = lower(want).find("addr");
        want.replace(at, 4, "data");
        const std::string out_name = want.substr(0, want.size() >= 2 && want.substr(want.size() - 2) == "_i"
                                                        ? want.size() - 2 : want.size()) + "_o";
        SramReadSim r;
        r.addr = nets;
        if (const auto* d = output(out_name)) r.data = *d;
        r.registered = false;
        if (!r.data.empty()) {
          s.reads.push_back(r);
          how << (how.tellp() > 0 ? "; " : "") << "asynchronous read (by name) " << name << " -> " << out_name;
        }
      }
      if (s.reads.empty() && !addr.empty()) {
        SramReadSim r;
        r.addr = addr;
        r.registered = true;
        for (const auto& [name, nets] : b.outputs) {
          const std::string l = lower(name);
          if (l.find("rdata") != std::string::npos || l.find("dout") != std::string::npos) r.data = nets;
        }
        if (r.data.empty())
          for (const auto& [name, nets] : b.outputs)
            if (nets.size() > r.data.size()) r.data = nets;
        if (!r.data.empty()) {
          s.reads.push_back(r);
          how << "registered read (by name) on the shared address";
        }
      }
    }
    size_t width = s.wdata.size();
    for (const SramReadSim& r : s.reads) width = std::max(width, r.data.size());
    size_t addr_bits = s.waddr.size();
    for (const SramReadSim& r : s.reads) addr_bits = std::max(addr_bits, r.addr.size());
    s.modelled = s.clk >= 0 && !s.reads.empty() && width > 0 && addr_bits < 24;
    if (s.modelled) {
      const size_t words = shape && shape->words > 0 ? static_cast<size_t>(shape->words) : (size_t{1} << addr_bits);
      s.mem.assign(words, std::vector<uint8_t>(width, 0));
    }
    how << "; write " << (s.we >= 0 ? (s.we_low ? "enable active low" : "enable") : "never") << ", "
        << s.waddr.size() << "-bit address, " << s.wdata.size() << "-bit data";
    s.how = how.str();
    const int idx = static_cast<int>(srams.size());
    if (s.modelled) {
      std::vector<int> ins = s.waddr;
      ins.insert(ins.end(), s.wdata.begin(), s.wdata.end());
      for (int x : {s.clk, s.we, s.en}) ins.push_back(x);
      for (const SramReadSim& r : s.reads) {
        ins.insert(ins.end(), r.addr.begin(), r.addr.end());
        ins.push_back(r.en);
      }
      std::sort(ins.begin(), ins.end());
      ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
      for (int net : ins)
        if (net >= 2) sram_fanout[static_cast<size_t>(net)].push_back(idx);
    }
    srams.push_back(std::move(s));
  }

  void levelize(const std::vector<int>& driver) {
    // Combinational cells get 1 + the deepest combinational driver of their
    // inputs; flops, SRAMs, ports and constants are level 0 sources.
    const size_t ni = insts.size();
    std::vector<int> indeg(ni, 0);
    std::vector<std::vector<int>> succ(ni);
    for (size_t i = 0; i < ni; ++i) {
      if (models[static_cast<size_t>(insts[i].model)].seq) continue;
      for (int net : insts[i].in_nets) {
        if (net < 2) continue;
        const int d = driver[static_cast<size_t>(net)];
        if (d < 0 || models[static_cast<size_t>(insts[static_cast<size_t>(d)].model)].seq) continue;
        succ[static_cast<size_t>(d)].push_back(static_cast<int>(i));
        ++indeg[i];
      }
    }
    std::vector<int> order;
    for (size_t i = 0; i < ni; ++i)
      if (indeg[i] == 0) order.push_back(static_cast<int>(i));
    for (size_t k = 0; k < order.size(); ++k) {
      const int i = order[k];
      Inst& in = insts[static_cast<size_t>(i)];
      if (!models[static_cast<size_t>(in.model)].seq && in.level == 0) in.level = 1;
      for (int s : succ[static_cast<size_t>(i)]) {
        insts[static_cast<size_t>(s)].level = std::max(insts[static_cast<size_t>(s)].level, in.level + 1);
        if (--indeg[static_cast<size_t>(s)] == 0) order.push_back(s);
      }
    }
    if (order.size() != ni) {
      for (size_t i = 0; i < ni; ++i)
        if (indeg[i] > 0)
          throw Error("combinational loop in the netlist through instance " + n.cells[i].path +
                      "; the zero-delay simulator cannot order it");
    }
    int max_level = 0;
    for (const Inst& in : insts) max_level = std::max(max_level, in.level);
    buckets.assign(static_cast<size_t>(max_level) + 1, {});
    queued.assign(ni, 0);
    sched_level.resize(ni);
    for (size_t i = 0; i < ni; ++i) sched_level[i] = models[static_cast<size_t>(insts[i].model)].seq ? -1 : insts[i].level;
    // Initial state: evaluate everything once in level order, without counting.
    for (int i : order) {
      if (models[static_cast<size_t>(insts[static_cast<size_t>(i)].model)].seq) continue;
      eval_comb(i);
    }
    for (size_t i = 0; i < ni; ++i)
      if (models[static_cast<size_t>(insts[i].model)].seq) {
        insts[i].clk_prev = eval_table(models[static_cast<size_t>(insts[i].model)].clocked_on, insts[i]);
        seq_dirty.push_back(static_cast<int>(i));
      }
    settle();
  }

  uint32_t index_of(const Inst& in, bool with_state) const {
    uint32_t idx = 0;
    for (size_t k = 0; k < in.in_nets.size(); ++k) idx |= static_cast<uint32_t>(val[static_cast<size_t>(in.in_nets[k])]) << k;
    if (with_state) {
      const size_t k = in.in_nets.size();
      idx |= static_cast<uint32_t>(in.iq) << k;
      idx |= static_cast<uint32_t>(in.iq ^ 1u) << (k + 1);
    }
    return idx;
  }
  uint8_t eval_table(const std::vector<uint8_t>& t, const Inst& in) const {
    if (t.empty()) return 0;
    return t[index_of(in, true)];
  }

  void set_net(int net, uint8_t v) {
    if (net < 2 || val[static_cast<size_t>(net)] == v) return;
    val[static_cast<size_t>(net)] = v;
    if (counting) {
      ++toggles[static_cast<size_t>(net)];
      if (v) ++rises[static_cast<size_t>(net)];
    }
    // The hottest loop of the simulation (the clock and broadcast nets have
    // thousands of readers): compact per-instance arrays, not Inst.
    for (int r : fanout[static_cast<size_t>(net)]) {
      uint8_t& q = queued[static_cast<size_t>(r)];
      if (q) continue;
      q = 1;
      const int level = sched_level[static_cast<size_t>(r)];
      if (level < 0) {
        seq_dirty.push_back(r);
      } else {
        buckets[static_cast<size_t>(level)].push_back(r);
        ++queued_count;
      }
    }
    for (int s : sram_fanout[static_cast<size_t>(net)]) {
      if (srams[static_cast<size_t>(s)].queued) continue;
      srams[static_cast<size_t>(s)].queued = true;
      sram_dirty.push_back(s);
    }
  }

  void eval_comb(int i) {
    Inst& in = insts[static_cast<size_t>(i)];
    const CellModel& m = models[static_cast<size_t>(in.model)];
    const uint32_t idx = index_of(in, false);
    for (size_t k = 0; k < m.out_pins.size(); ++k)
      if (in.out_nets[k] >= 0) set_net(in.out_nets[k], m.out_tables[k][idx]);
  }

  void update_seq_outputs(Inst& in) {
    const CellModel& m = models[static_cast<size_t>(in.model)];
    const uint32_t idx = index_of(in, true);
    for (size_t k = 0; k < m.out_pins.size(); ++k)
      if (in.out_nets[k] >= 0) set_net(in.out_nets[k], m.out_tables[k][idx]);
  }

  // Asynchronous clear/preset; returns true when one of them holds the state.
  bool apply_async(Inst& in, const CellModel& m) {
    const uint8_t c = eval_table(m.clear, in), p = eval_table(m.preset, in);
    if (c && p) {
      in.iq = m.cpv1 == 'H' ? 1 : 0;
      return true;
    }
    if (c) {
      in.iq = 0;
      return true;
    }
    if (p) {
      in.iq = 1;
      return true;
    }
    return false;
  }

  void eval_seq(int i) {
    Inst& in = insts[static_cast<size_t>(i)];
    const CellModel& m = models[static_cast<size_t>(in.model)];
    const uint8_t clk = eval_table(m.clocked_on, in);
    if (m.latch) {
      if (!apply_async(in, m) && clk) in.iq = eval_table(m.next_state, in);
    } else {
      if (!in.clk_prev && clk) pending.emplace_back(i, eval_table(m.next_state, in));
      apply_async(in, m);
    }
    in.clk_prev = clk;
    update_seq_outputs(in);
  }

  size_t address(const std::vector<int>& nets, size_t words) const {
    return static_cast<size_t>(bits_value(val, nets)) % std::max<size_t>(words, 1);
  }

  void drive_async_reads(int s) {
    SramSim& m = srams[static_cast<size_t>(s)];
    for (const SramReadSim& r : m.reads) {
      if (r.registered) continue;
      const std::vector<uint8_t>& word = m.mem[address(r.addr, m.mem.size())];
      for (size_t k = 0; k < r.data.size(); ++k) set_net(r.data[k], k < word.size() ? word[k] : 0);
    }
  }

  void eval_sram(int s) {
    SramSim& m = srams[static_cast<size_t>(s)];
    const uint8_t clk = val[static_cast<size_t>(m.clk)];
    if (!m.clk_prev && clk) {
      const bool enabled = m.en < 0 || level_of(m.en, m.en_low);
      for (size_t p = 0; p < m.reads.size(); ++p) {
        SramReadSim& r = m.reads[p];
        const bool read_en = enabled && (r.en < 0 || level_of(r.en, false));
        const size_t a = address(r.addr, m.mem.size());
        if (r.registered) {
          // A registered port reads the old word on every enabled edge.
          if (read_en) {
            sram_pending.push_back({s, static_cast<int>(p), a, m.mem[a]});
            if (counting) ++m.n_reads;
          }
        } else if (a != r.last_addr) {
          // An asynchronous port counts one access per cycle its address moved.
          if (counting) ++m.n_reads;
          r.last_addr = a;
        }
      }
      if (enabled && m.we >= 0 && level_of(m.we, m.we_low)) {
        std::vector<uint8_t> word(m.mem.front().size(), 0);
        for (size_t k = 0; k < word.size() && k < m.wdata.size(); ++k) word[k] = val[static_cast<size_t>(m.wdata[k])];
        sram_pending.push_back({s, -1, address(m.waddr, m.mem.size()), word});
        if (counting) ++m.n_writes;
      }
    }
    m.clk_prev = clk;
    drive_async_reads(s);
  }

  static uint64_t bits_value(const std::vector<uint8_t>& v, const std::vector<int>& nets) {
    uint64_t x = 0;
    for (size_t k = 0; k < nets.size() && k < 64; ++k) x |= static_cast<uint64_t>(v[static_cast<size_t>(nets[k])]) << k;
    return x;
  }

  bool level_of(int net, bool low) const { return net >= 0 && (val[static_cast<size_t>(net)] != 0) != low; }

  void settle() {
    for (int guard = 0; guard < 100000; ++guard) {
      while (queued_count > 0) {
        for (std::vector<int>& b : buckets) {
          for (size_t k = 0; k < b.size(); ++k) {
            const int i = b[k];
            queued[static_cast<size_t>(i)] = 0;
            --queued_count;
            eval_comb(i);
          }
          b.clear();
        }
      }
      if (!seq_dirty.empty() || !sram_dirty.empty()) {
        std::vector<int> seqs;
        seqs.swap(seq_dirty);
        for (int i : seqs) {
          queued[static_cast<size_t>(i)] = 0;
          eval_seq(i);
        }
        std::vector<int> rams;
        rams.swap(sram_dirty);
        for (int s : rams) {
          srams[static_cast<size_t>(s)].queued = false;
          eval_sram(s);
        }
        continue;
      }
      if (pending.empty() && sram_pending.empty()) return;
      // Every register that saw its clock edge takes its sampled value at once.
      std::vector<std::pair<int, uint8_t>> caps;
      caps.swap(pending);
      for (const auto& [i, d] : caps) {
        Inst& in = insts[static_cast<size_t>(i)];
        const CellModel& m = models[static_cast<size_t>(in.model)];
        if (!apply_async(in, m)) in.iq = d;
        update_seq_outputs(in);
      }
      std::vector<SramEdge> edges;
      edges.swap(sram_pending);
      for (const SramEdge& e : edges) {
        SramSim& m = srams[static_cast<size_t>(e.sram)];
        if (e.port >= 0) {
          const SramReadSim& r = m.reads[static_cast<size_t>(e.port)];
          for (size_t k = 0; k < r.data.size(); ++k) set_net(r.data[k], k < e.word.size() ? e.word[k] : 0);
        } else {
          m.mem[e.addr] = e.word;
        }
      }
      for (const SramEdge& e : edges)
        if (e.port < 0) drive_async_reads(e.sram);
    }
    throw Error("gate-level simulation does not settle (oscillating latch loop?)");
  }

  int clock_net() const {
    auto it = ports.find(clock_port);
    if (it == ports.end() || it->second->nets.empty()) return -1;
    return it->second->nets[0];
  }

  void cycle() {
    settle();
    const int clk = clock_net();
    if (clk < 0) return;
    set_net(clk, 1);
    settle();
    set_net(clk, 0);
    settle();
  }

  const NetlistPort& port(const std::string& name) const {
    auto it = ports.find(name);
    if (it == ports.end()) throw Error("the netlist has no port `" + name + "`");
    return *it->second;
  }
};

GateSim::GateSim(const FlatNetlist& netlist, const Library& lib, std::string clock_port,
                 std::vector<SramShape> srams)
    : shapes_(std::move(srams)), impl_(std::make_unique<Impl>(netlist, lib, std::move(clock_port), shapes_)) {}

GateSim::~GateSim() = default;

std::vector<std::string> GateSim::input_ports() const {
  std::vector<std::string> out;
  for (const NetlistPort& p : impl_->n.ports)
    if (p.input) out.push_back(p.name);
  return out;
}

int GateSim::width(const std::string& port) const { return static_cast<int>(impl_->port(port).nets.size()); }

void GateSim::set(const std::string& port, uint64_t value) {
  const NetlistPort& p = impl_->port(port);
  if (!p.input) throw Error("port `" + port + "` is not an input");
  for (size_t b = 0; b < p.nets.size(); ++b) impl_->set_net(p.nets[b], b < 64 ? ((value >> b) & 1u) : 0);
}

void GateSim::set_bit(const std::string& port, int bit, bool value) {
  const NetlistPort& p = impl_->port(port);
  if (!p.input) throw Error("port `" + port + "` is not an input");
  if (bit < 0 || static_cast<size_t>(bit) >= p.nets.size()) throw Error("port `" + port + "` has no bit " + std::to_string(bit));
  impl_->set_net(p.nets[static_cast<size_t>(bit)], value ? 1 : 0);
}

bool GateSim::get_bit(const std::string& port, int bit) const {
  const NetlistPort& p = impl_->port(port);
  if (bit < 0 || static_cast<size_t>(bit) >= p.nets.size()) throw Error("port `" + port + "` has no bit " + std::to_string(bit));
  return impl_->val[static_cast<size_t>(p.nets[static_cast<size_t>(bit)])] != 0;
}

void GateSim::cycle() { impl_->cycle(); }

uint64_t GateSim::output(const std::string& port) const {
  const NetlistPort& p = impl_->port(port);
  return Impl::bits_value(impl_->val, p.nets);
}

bool GateSim::net_value(int net) const { return impl_->val.at(static_cast<size_t>(net)) != 0; }

ToggleCounts GateSim::run(Stimulus& stimulus, const SimOptions& opt) {
  Impl& s = *impl_;
  if (opt.cycles == 0) throw ConfigError("simulation cycles", "0", "must be at least 1");
  if (s.clock_net() < 0) throw Error("the netlist has no clock port `" + s.clock_port + "` to simulate with");
  std::fill(s.toggles.begin(), s.toggles.end(), 0);
  std::fill(s.rises.begin(), s.rises.end(), 0);
  for (SramSim& m : s.srams) m.n_reads = m.n_writes = 0;
  for (uint64_t c = 0; c < opt.warmup + opt.cycles; ++c) {
    s.counting = c >= opt.warmup;
    stimulus.drive(c, *this);
    s.cycle();
  }
  s.counting = false;
  ToggleCounts t;
  t.cycles = opt.cycles;
  t.toggles = s.toggles;
  t.rises = s.rises;
  t.stimulus = stimulus.describe();
  for (const SramSim& m : s.srams) t.srams.push_back({m.path, m.n_reads, m.n_writes, m.modelled, m.how});
  return t;
}

}  // namespace kaleido::ppa
