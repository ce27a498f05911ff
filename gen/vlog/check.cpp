// Whole-module checks, run before emission. Generate loops are unrolled with
// their genvar values, so every bit of every signal is accounted for exactly:
// one driver per bit, every input and internal bit read, flops reset
// consistently, no latches, a default in every case. These are the checks
// behind Verilator's UNDRIVEN, UNUSED, MULTIDRIVEN, LATCH, CASEINCOMPLETE and
// SYNCASYNCNET warnings, raised here with the generator's names instead.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "vlog/module.hpp"

namespace kaleido::vlog::detail {

namespace {

// Bit sets of one process as intervals [lo, hi]; after normalized() they
// are sorted and disjoint. Flat buses of big arrays are wide, so per-process
// sets must not cost their full width.
using Ranges = std::vector<std::pair<int, int>>;
using Masks = std::map<const Decl*, Ranges>;

Ranges normalized(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& x : r) {
    if (!out.empty() && x.first <= out.back().second + 1)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

Ranges unite(Ranges a, const Ranges& b) {
  a.insert(a.end(), b.begin(), b.end());
  return normalized(std::move(a));
}

Ranges intersect(const Ranges& a, const Ranges& b) {
  Ranges out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo <= hi) out.emplace_back(lo, hi);
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return out;
}

Ranges subtract(const Ranges& a, const Ranges& b) {
  Ranges out;
  for (auto x : a) {
    for (const auto& y : b) {
      if (y.second < x.first || y.first > x.second) continue;
      if (y.first > x.first) out.emplace_back(x.first, y.first - 1);
      x.first = y.second + 1;
      if (x.first > x.second) break;
    }
    if (x.first <= x.second) out.push_back(x);
  }
  return out;
}

std::string text(const Ranges& r) {
  std::string s;
  for (auto it = r.rbegin(); it != r.rend(); ++it)
    s += (s.empty() ? "[" : ", [") + std::to_string(it->second) +
         (it->first == it->second ? "" : ":" + std::to_string(it->first)) + "]";
  return s;
}

struct Use {
  std::vector<char> read, driven;
  bool drive_all = false;  // driven through a variable index
  bool used = false;       // localparams, genvars, memory reads
  bool mem_written = false;
  bool continuous = false, procedural = false;
};

// One target range of an assignment: bits [lo, hi] of decl, or the whole
// decl (precise == false) when the index is only known at run time.
struct Target {
  const Decl* decl;
  int lo, hi;
  bool precise;
};

std::string ranges(const std::vector<char>& bits, char want) {
  std::string s;
  int i = static_cast<int>(bits.size()) - 1;
  while (i >= 0) {
    if (bits[i] != want) {
      --i;
      continue;
    }
    int j = i;
    while (j - 1 >= 0 && bits[j - 1] == want) --j;
    s += (s.empty() ? "" : ", ") + ("[" + std::to_string(i) + (i == j ? "" : ":" + std::to_string(j)) + "]");
    i = j - 1;
  }
  return s;
}

bool waived(const Decl& d, std::initializer_list<const char*> codes) {
  for (const Waiver& w : d.waivers)
    for (const char* c : codes)
      if (w.code == c) return true;
  return false;
}

class Analyzer {
 public:
  explicit Analyzer(const Module& m) : m_(m) {}

  Analysis run() {
    if (m_.port_decls().empty()) fail("a module needs at least one port");
    walk_items(m_);
    for (const auto& d : m_.port_decls()) finish(*d);
    for (const auto& d : m_.param_decls()) finish(*d);
    for (const auto& d : m_.decls()) finish(*d);
    return std::move(result_);
  }

 private:
  const Module& m_;
  std::unordered_map<const Decl*, Use> use_;
  std::unordered_map<const Decl*, int64_t> env_;
  std::vector<std::string> path_;  // enclosing generate iterations, e.g. g_row[2]
  std::vector<const Decl*> resets_;
  Analysis result_;

  [[noreturn]] void fail(const std::string& msg) const {
    std::string where;
    for (const auto& p : path_) where += (where.empty() ? "" : ".") + p;
    throw BuildError("module " + m_.name() + (where.empty() ? "" : " (in " + where + ")") + ": " + msg);
  }

  Use& use(const Decl* d) {
    auto it = use_.find(d);
    if (it != use_.end()) return it->second;
    Use& u = use_[d];
    if (d->kind != DeclKind::Memory) {
      u.read.assign(static_cast<size_t>(d->width), 0);
      u.driven.assign(static_cast<size_t>(d->width), 0);
    }
    return u;
  }

  int64_t eval(const Expr& e) {
    const Node& n = e.node();
    if (n.op == Op::Int) return n.ivalue;
    if (n.op == Op::Ref && n.decl->kind == DeclKind::IntParam) {
      use(n.decl.get()).used = true;
      return n.decl->ivalue;
    }
    if (n.op == Op::Ref && n.decl->kind == DeclKind::Genvar) {
      auto it = env_.find(n.decl.get());
      if (it == env_.end()) fail("genvar '" + n.decl->name + "' is used outside its loop");
      use(n.decl.get()).used = true;
      return it->second;
    }
    if (n.op == Op::Unary && n.sym == "-") return -eval(n.args[0]);
    if (n.op == Op::Binary) {
      const int64_t a = eval(n.args[0]), b = eval(n.args[1]);
      if (n.sym == "+") return a + b;
      if (n.sym == "-") return a - b;
      if (n.sym == "*") return a * b;
      if ((n.sym == "/" || n.sym == "%") && b == 0) fail("division by zero in '" + short_text(e) + "'");
      if (n.sym == "/") return a / b;
      if (n.sym == "%") return a % b;
    }
    fail("'" + short_text(e) + "' is not an elaboration-time integer expression");
  }

  // Bits [lo, lo + width) of a `width`-bit select must lie inside the base.
  int in_range(const Expr& sel, const Expr& base, int64_t lo, int width) {
    if (lo < 0 || lo + width > base.width())
      fail("select '" + short_text(sel) + "' reaches bit " + std::to_string(lo < 0 ? lo : lo + width - 1) + " of the " +
           std::to_string(base.width()) + "-bit '" + short_text(base) + "'");
    return static_cast<int>(lo);
  }

  void mark_read(const Expr& base, int lo, int hi) {
    const Node& b = base.node();
    if (b.op == Op::MemWord) {
      read(base);
      return;
    }
    Use& u = use(b.decl.get());
    u.used = true;
    for (int i = lo; i <= hi; ++i) u.read[static_cast<size_t>(i)] = 1;
  }

  void read(const Expr& e) {
    const Node& n = e.node();
    switch (n.op) {
      case Op::Const:
      case Op::Int:
        return;
      case Op::Ref:
        if (n.decl->kind == DeclKind::Genvar || n.decl->kind == DeclKind::IntParam) {
          eval(e);
        } else if (n.decl->kind == DeclKind::Param) {
          use(n.decl.get()).used = true;
          // A localparam computed from others (e.g. from a module parameter) uses them.
          if (!n.decl->init.is_elab()) read(n.decl->init);
        } else {
          mark_read(e, 0, n.width - 1);
        }
        return;
      case Op::MemWord:
        use(n.decl.get()).used = true;
        read_index(n.args[0]);
        return;
      case Op::BitSel:
        if (n.args[1].is_elab()) {
          const int i = in_range(e, n.args[0], eval(n.args[1]), 1);
          mark_read(n.args[0], i, i);
        } else {
          read(n.args[1]);
          mark_read(n.args[0], 0, n.args[0].width() - 1);
        }
        return;
      case Op::PartSel:
        mark_read(n.args[0], n.lo, n.hi);
        return;
      case Op::IndexedPart:
        if (n.args[1].is_elab()) {
          const int lo = in_range(e, n.args[0], eval(n.args[1]), n.width);
          mark_read(n.args[0], lo, lo + n.width - 1);
        } else {
          read(n.args[1]);
          mark_read(n.args[0], 0, n.args[0].width() - 1);
        }
        return;
      default:
        for (const Expr& a : n.args) read(a);
    }
  }

  void read_index(const Expr& idx) {
    if (idx.is_elab())
      eval(idx);
    else
      read(idx);
  }

  // Where an assignment lands; reads the index expressions when `reads`.
  void targets(const Expr& lhs, std::vector<Target>& out, bool reads) {
    const Node& n = lhs.node();
    switch (n.op) {
      case Op::Ref:
        out.push_back({n.decl.get(), 0, n.width - 1, true});
        return;
      case Op::MemWord:
        if (reads) read_index(n.args[0]);
        out.push_back({n.decl.get(), 0, 0, false});
        return;
      case Op::Concat:
        for (const Expr& a : n.args) targets(a, out, reads);
        return;
      default:
        break;
    }
    const Expr& base = n.args[0];
    if (base.node().op == Op::MemWord) {  // a select of a memory word: the word is written
      targets(base, out, reads);
      if (n.op != Op::PartSel && reads) read_index(n.args[1]);
      return;
    }
    const Decl* d = base.node().decl.get();
    if (n.op == Op::PartSel) {
      out.push_back({d, n.lo, n.hi, true});
    } else if (n.args[1].is_elab()) {
      const int lo = in_range(lhs, base, eval(n.args[1]), n.width);
      out.push_back({d, lo, lo + n.width - 1, true});
    } else {
      if (reads) read(n.args[1]);
      out.push_back({d, 0, base.width() - 1, false});
    }
  }

  // Bits one process (an assign, an instance port, one always block in one
  // generate iteration) drives.
  struct Pending {
    Masks bits;
    std::vector<const Decl*> order;
    std::vector<const Decl*> imprecise;
  };

  void drive(const Expr& lhs, Pending& p) {
    std::vector<Target> ts;
    targets(lhs, ts, true);
    for (const Target& t : ts) {
      auto it = p.bits.find(t.decl);
      if (it == p.bits.end()) {
        p.order.push_back(t.decl);
        it = p.bits.emplace(t.decl, Ranges{}).first;
      }
      if (t.decl->kind == DeclKind::Memory) continue;
      if (!t.precise) {
        p.imprecise.push_back(t.decl);
        continue;
      }
      it->second.emplace_back(t.lo, t.hi);
    }
  }

  bool imprecise(const Pending& p, const Decl* d) const {
    return std::find(p.imprecise.begin(), p.imprecise.end(), d) != p.imprecise.end();
  }

  void commit(const Pending& p, bool procedural, const std::string& who) {
    for (const Decl* d : p.order) {
      Use& u = use(d);
      if (procedural ? u.continuous : u.procedural)
        fail("'" + d->name +
             "' is driven both by an always block and by an assign or instance output; drive it one way");
      (procedural ? u.procedural : u.continuous) = true;
      if (procedural) result_.regs.insert(d);
      if (d->kind == DeclKind::Memory) {
        u.mem_written = true;
        continue;
      }
      if (imprecise(p, d)) u.drive_all = true;
      Ranges clash;
      for (const auto& r : normalized(p.bits.at(d)))
        for (int i = r.first; i <= r.second; ++i) {
          if (u.driven[static_cast<size_t>(i)]) clash.emplace_back(i, i);
          u.driven[static_cast<size_t>(i)] = 1;
        }
      if (!clash.empty())
        fail("bits " + text(normalized(clash)) + " of '" + d->name + "' have more than one driver (the second is " +
             who + ")");
    }
  }

  void walk_block(const Block& b, Pending& p) {
    for (const auto& s : b.stmts()) {
      switch (s->kind()) {
        case Stmt::Kind::Assign: {
          const auto& a = static_cast<const AssignStmt&>(*s);
          read(a.rhs());
          drive(a.lhs(), p);
          break;
        }
        case Stmt::Kind::If: {
          const auto& i = static_cast<const IfStmt&>(*s);
          for (const auto& br : i.branches()) {
            read(br.first);
            walk_block(*br.second, p);
          }
          if (i.else_block()) walk_block(*i.else_block(), p);
          break;
        }
        case Stmt::Kind::Case: {
          const auto& c = static_cast<const CaseStmt&>(*s);
          read(c.selector());
          if (!c.default_block())
            fail("case (" + short_text(c.selector()) + ") has no default branch; every case needs one");
          for (const auto& it : c.items()) {
            for (const Expr& l : it.labels) read(l);
            walk_block(*it.body, p);
          }
          walk_block(*c.default_block(), p);
          break;
        }
        case Stmt::Kind::Comment:
          break;
      }
    }
  }

  // Bits assigned on every path through a block.
  Masks definite(const Block& b) {
    Masks acc;
    auto merge = [&acc](const Masks& m) {
      for (const auto& kv : m) acc[kv.first] = unite(acc[kv.first], kv.second);
    };
    auto all_paths = [](const std::vector<Masks>& all) {
      Masks r = all.front();
      for (size_t k = 1; k < all.size(); ++k)
        for (auto it = r.begin(); it != r.end();) {
          auto o = all[k].find(it->first);
          if (o == all[k].end()) {
            it = r.erase(it);
            continue;
          }
          it->second = intersect(it->second, o->second);
          ++it;
        }
      return r;
    };
    for (const auto& s : b.stmts()) {
      if (s->kind() == Stmt::Kind::Assign) {
        std::vector<Target> ts;
        targets(static_cast<const AssignStmt&>(*s).lhs(), ts, false);
        Masks m;
        for (const Target& t : ts)
          if (t.precise && t.decl->kind != DeclKind::Memory) m[t.decl].emplace_back(t.lo, t.hi);
        for (auto& kv : m) kv.second = normalized(kv.second);
        merge(m);
      } else if (s->kind() == Stmt::Kind::If) {
        const auto& i = static_cast<const IfStmt&>(*s);
        if (!i.else_block()) continue;
        std::vector<Masks> all;
        for (const auto& br : i.branches()) all.push_back(definite(*br.second));
        all.push_back(definite(*i.else_block()));
        merge(all_paths(all));
      } else if (s->kind() == Stmt::Kind::Case) {
        const auto& c = static_cast<const CaseStmt&>(*s);
        std::vector<Masks> all;
        for (const auto& it : c.items()) all.push_back(definite(*it.body));
        if (c.default_block()) all.push_back(definite(*c.default_block()));
        merge(all_paths(all));
      }
    }
    return acc;
  }

  void walk_always(const Always& a) {
    Pending p;
    if (a.comb()) {
      walk_block(a.body(), p);
      if (p.order.empty()) fail("an always @* block assigns nothing");
      const Masks def = definite(a.body());
      // Every bit the block assigns somewhere must be assigned on every path.
      for (const Decl* d : p.order) {
        if (d->kind == DeclKind::Memory) continue;
        const Ranges assigned = imprecise(p, d) ? Ranges{{0, d->width - 1}} : normalized(p.bits[d]);
        auto it = def.find(d);
        const Ranges latched = it == def.end() ? assigned : subtract(assigned, it->second);
        if (!latched.empty())
          fail("always @* assigns '" + d->name + "' (bits " + text(latched) +
               ") only on some paths, which infers a latch; assign it a default at the top of the block");
      }
      commit(p, true, "an always @* block");
      return;
    }
    mark_read(a.clock(), 0, 0);
    walk_block(a.body(), p);
    if (p.order.empty()) fail("a clocked always block assigns nothing");
    if (a.has_reset()) {
      const Decl* rst = a.reset().node().decl.get();
      if (std::find(resets_.begin(), resets_.end(), rst) == resets_.end()) resets_.push_back(rst);
      use(rst).used = true;
      Pending r;
      walk_block(a.on_reset(), r);
      // Reset and clocked branches must cover the same flop bits.
      for (const Decl* d : p.order) {
        const Ranges body = imprecise(p, d) ? Ranges{{0, d->width - 1}} : normalized(p.bits[d]);
        const Ranges missing = subtract(body, r.bits.count(d) ? normalized(r.bits[d]) : Ranges{});
        if (!missing.empty())
          fail("flop '" + d->name + "' bits " + text(missing) +
               " are assigned in the clocked branch but have no reset value (add them to on_reset())");
      }
      for (const Decl* d : r.order) {
        if (!p.bits.count(d)) fail("flop '" + d->name + "' has a reset value but the clocked branch never assigns it");
        const Ranges extra = imprecise(p, d) ? Ranges{} : subtract(normalized(r.bits[d]), normalized(p.bits[d]));
        if (!extra.empty())
          fail("flop '" + d->name + "' bits " + text(extra) +
               " have a reset value but the clocked branch never assigns them");
        p.bits[d] = unite(p.bits[d], r.bits[d]);
      }
    }
    commit(p, true, "an always block");
  }

  // An active-low reset input handed on whole to a submodule's rst*_ni port
  // stays a reset there; it is not data.
  static bool is_reset_pass(const Expr& conn, const std::string& port) {
    const Node& n = conn.node();
    auto reset_name = [](const std::string& x) {
      return x.rfind("rst", 0) == 0 && x.size() > 3 && x.compare(x.size() - 3, 3, "_ni") == 0;
    };
    return n.op == Op::Ref && n.decl->kind == DeclKind::Input && reset_name(n.decl->name) && reset_name(port);
  }

  void walk_items(const Scope& s) {
    for (const auto& item : s.items()) {
      switch (item->kind()) {
        case Item::Kind::Assign: {
          const auto& a = static_cast<const AssignItem&>(*item);
          read(a.rhs());
          Pending p;
          drive(a.lhs(), p);
          commit(p, false, "assign to " + short_text(a.lhs()));
          break;
        }
        case Item::Kind::Always:
          walk_always(static_cast<const Always&>(*item));
          break;
        case Item::Kind::Instance: {
          const auto& inst = static_cast<const InstanceItem&>(*item);
          for (size_t i = 0; i < inst.ports().size(); ++i) {
            const Expr& conn = inst.connections()[i];
            const std::string& port = inst.ports()[i].name;
            if (inst.ports()[i].dir == PortDir::Input && is_reset_pass(conn, port)) {
              if (std::find(resets_.begin(), resets_.end(), conn.node().decl.get()) == resets_.end())
                resets_.push_back(conn.node().decl.get());
            } else if (inst.ports()[i].dir == PortDir::Input) {
              read(conn);
            } else {
              Pending p;
              drive(inst.connections()[i], p);
              commit(p, false, "output " + inst.ports()[i].name + " of instance " + inst.name());
            }
          }
          break;
        }
        case Item::Kind::Generate:
          walk_generate(static_cast<const GenerateFor&>(*item));
          break;
        case Item::Kind::Unused:
          read(static_cast<const UnusedItem&>(*item).bits());
          break;
        case Item::Kind::Comment:
          break;
      }
    }
  }

  void walk_generate(const GenerateFor& g) {
    const Decl* gv = &g.genvar();
    const int64_t end = eval(g.end());  // a bound that depends on an outer genvar may give no iterations
    for (int64_t v = g.begin(); v < end; ++v) {
      env_[gv] = v;
      path_.push_back(g.label() + "[" + std::to_string(v) + "]");
      for (const auto& d : g.decls()) {
        use_.erase(d.get());  // each iteration has its own copy
        if (d->kind == DeclKind::Param && d->init.is_elab()) {
          const int64_t x = eval(d->init);
          if (x < 0 || (d->width < 63 && x >= (int64_t{1} << d->width)))
            fail("localparam '" + d->name + "' = " + std::to_string(x) + " does not fit " + std::to_string(d->width) +
                 " unsigned bits");
        }
      }
      walk_items(g);
      for (const auto& d : g.decls()) finish(*d);
      path_.pop_back();
    }
    env_.erase(gv);
    if (end > g.begin() && !use(gv).used)
      fail("genvar '" + gv->name + "' of generate loop " + g.label() + " is never used");
  }

  void finish(const Decl& d) {
    Use& u = use(&d);
    const std::string name = "'" + d.name + "'";
    switch (d.kind) {
      case DeclKind::Param:
      case DeclKind::IntParam:
        if (!u.used && !waived(d, {"UNUSED", "UNUSEDPARAM"}))
          fail((d.overridable ? "parameter " : "localparam ") + name + " is never used; drop it");
        return;
      case DeclKind::Memory:
        if (!u.mem_written && !waived(d, {"UNDRIVEN"})) fail("memory " + name + " is never written");
        if (!u.used && !waived(d, {"UNUSED", "UNUSEDSIGNAL"})) fail("memory " + name + " is never read");
        return;
      default:
        break;
    }
    if (d.kind == DeclKind::Input && std::find(resets_.begin(), resets_.end(), &d) != resets_.end()) {
      if (std::find(u.read.begin(), u.read.end(), 1) != u.read.end())
        fail("reset " + name +
             " is used as an asynchronous reset and also as data (Verilator SYNCASYNCNET); "
             "use a separate synchronous clear input");
      return;
    }
    const bool drives = d.kind != DeclKind::Input;
    const bool reads = d.kind != DeclKind::Output;
    const bool none_driven = std::find(u.driven.begin(), u.driven.end(), 1) == u.driven.end() && !u.drive_all;
    const bool none_read = std::find(u.read.begin(), u.read.end(), 1) == u.read.end();
    if (d.kind == DeclKind::Signal && none_driven && none_read && d.waivers.empty())
      fail("signal " + name + " is declared but never used");
    if (drives && !u.drive_all && std::find(u.driven.begin(), u.driven.end(), 0) != u.driven.end() &&
        !waived(d, {"UNDRIVEN"}))
      fail((d.kind == DeclKind::Output ? "output " : "signal ") + name +
           (none_driven ? " is never driven" : ": bits " + ranges(u.driven, 0) + " are never driven"));
    if (reads && std::find(u.read.begin(), u.read.end(), 0) != u.read.end() && !waived(d, {"UNUSED", "UNUSEDSIGNAL"}))
      fail((d.kind == DeclKind::Input ? "input " : "signal ") + name +
           (none_read ? " is never read" : ": bits " + ranges(u.read, 0) + " are never read") +
           "; use them, do not produce them, or consume them with Scope::unused() and a justification");
  }
};

}  // namespace

Analysis analyze(const Module& m) { return Analyzer(m).run(); }

}  // namespace kaleido::vlog::detail
