#include <algorithm>

#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingCodesBlock::check(int words, int list_w) {
  if (list_w < 1 || (list_w & (list_w - 1)) != 0)
    throw ConfigError("list-w", std::to_string(list_w),
                      "a code word holds LIST_W positions, a power of two (the list builder's word)");
  if (words < 2)
    throw ConfigError("code words", std::to_string(words), "the code memory holds at least two words");
}

int RingCodesBlock::parts(int words) {
  int parts = 1;
  while ((words + parts - 1) / parts > kMaxPartRows) parts *= 2;
  return parts;
}

RingCodesBlock::DecisionPorts RingCodesBlock::decision_ports(Module& m, const HwConfig& c, int words, int list_w,
                                                             bool output) {
  const int L = c.det_lanes(), gb = clog2(c.max_groups()), lg = RingListsBlock::lane_bits(list_w);
  auto port = [&](const std::string& name, int width, const std::string& comment) {
    return output ? m.output(name + "_o", width, Sign::Unsigned, comment)
                  : m.input(name + "_i", width, Sign::Unsigned, comment);
  };
  DecisionPorts p;
  p.valid = port("dec_valid", L, "lane l holds a decision this cycle");
  p.group = port("dec_group", L * gb, "lane l's group at l*clog2(G)");
  p.reuse = port("dec_reuse", L, "lane l's pair is REUSE (detector reuse_o)");
  p.axis = port("dec_axis", 2 * L, "lane l's reference axis at 2l: 0 t, 1 h, 2 w (detector axis_o)");
  p.lane = port("dec_lane", lg > 0 ? lg : 1,
                 lg > 0 ? "the position's lane in its word" : "unused: one position a word");
  p.row = port("dec_row", clog2(words), "the word's row");
  p.commit = port("dec_commit", 1, "the word's last decisions: the word, with them, is written at this edge");
  return p;
}

RingCodesBlock::ChunkWordPorts RingCodesBlock::ChunkWordPorts::declare(Module& m, const std::string& prefix,
                                                                       bool output, int words, int chunk,
                                                                       int list_w) {
  const std::string sfx = output ? "_o" : "_i";
  auto port = [&](const std::string& name, int width, const std::string& comment) {
    return output ? m.output(prefix + name + sfx, width, Sign::Unsigned, comment)
                  : m.input(prefix + name + sfx, width, Sign::Unsigned, comment);
  };
  ChunkWordPorts p;
  p.row = port("_row", clog2(words), "the row of the chunk's first code word");
  p.words = port("_words", clog2(RingListsBlock::rows(chunk, list_w) + 1), "its code words, 1 to ceil(C / LIST_W)");
  p.lanes = port("_lanes", list_w, "lanes of its last word (lane l: bit l)");
  return p;
}

Module RingCodesBlock::generate(const HwConfig& c, int words, int list_w, const Module& part_sram) {
  check(words, list_w);
  const int G = c.max_groups(), LW = list_w, lg = RingListsBlock::lane_bits(LW), L = c.det_lanes();
  const int gb = clog2(G), rw = clog2(words), ww = LW * G * 2;
  Module m("kld_ring_codes",
           "Decision-code memory of the window-bounded ring (docs/hardware.md): the detector's "
           "decisions, LANES groups of one position a cycle, as 2-bit codes (0 COMPUTE, 1/2/3 REUSE "
           "of the t/h/w neighbour) in words of LIST_W positions x G groups. A word is assembled in a "
           "register and written whole when its last decision enters (no write mask on the memory); "
           "the list builder reads a word a cycle (registered, like a macro). Deeper than a bank may be "
           "for the clock, the words are 2, 4, ... memories by the row's low bits, and a read takes "
           "two edges: the parts' words are picked in two registered levels");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const DecisionPorts dec = decision_ports(m, c, words, list_w);
  const Expr dec_valid = dec.valid, dec_group = dec.group, dec_reuse = dec.reuse, dec_axis = dec.axis;
  const Expr dec_lane = dec.lane, dec_row = dec.row, dec_commit = dec.commit;
  const Expr rd_row = m.input("rd_row_i", rw, Sign::Unsigned, "the row read");
  const int read_edges = RingCodesBlock::read_edges(words);
  const Expr rd_code = m.output("rd_code_o", ww, Sign::Unsigned,
                                "the row's codes " + std::to_string(read_edges) + (read_edges == 1 ? " edge" : " edges") +
                                    " after its address: lane i, group g at (i*G + g)*2");
  if (lg == 0) m.unused(dec_lane, "LIST_W 1: every position is lane 0");
  auto idx = [](int i) { return static_cast<size_t>(i); };

  // Each lane's code: REUSE of axis a is code a + 1.
  std::vector<Expr> code;
  for (int l = 0; l < L; ++l) {
    const std::string ls = std::to_string(l);
    const Expr axis = dec_axis.slice(2 * l + 1, 2 * l);
    code.push_back(m.wire("code_" + ls, mux(dec_reuse[l], axis + constant(2, 1), constant(2, 0)),
                          l == 0 ? "lane l's decision as a code" : ""));
  }
  // The word being assembled; its slots are cleared when it is written, so a partial word's empty
  // lanes read COMPUTE (the list builder's code_lanes_i masks them).
  const Expr word = m.signal("word_q", ww, Sign::Unsigned, "codes of the word being assembled");
  std::vector<Expr> merged;  // least significant first: the word with this cycle's decisions
  for (int i = 0; i < LW; ++i) {
    const Expr at_lane = lg > 0 ? m.wire("at_lane_" + std::to_string(i),
                                         dec_lane == constant(lg, static_cast<uint64_t>(i)),
                                         i == 0 ? "this cycle's position is lane i" : "")
                                : bit(true);
    for (int g = 0; g < G; ++g) {
      Expr hit = bit(false), value = constant(2, 0);
      for (int l = 0; l < L; ++l) {
        const Expr mine = dec_valid[l] && (dec_group.slice(l * gb + gb - 1, l * gb) ==
                                           constant(gb, static_cast<uint64_t>(g)));
        hit = hit || mine;
        value = value | (repl(2, mine) & code[idx(l)]);
      }
      const int at = (i * G + g) * 2;
      const std::string sg = std::to_string(i) + "_" + std::to_string(g);
      const Expr take = m.wire("take_" + sg, at_lane && hit,
                               i == 0 && g == 0 ? "a lane decides group g of lane i's position" : "");
      merged.push_back(m.wire("slot_" + sg, mux(take, value, word.slice(at + 1, at)),
                              i == 0 && g == 0 ? "the slot with this cycle's decision" : ""));
    }
  }
  const Expr word_d = m.wire("word_d", concat(std::vector<Expr>(merged.rbegin(), merged.rend())),
                             "the word with this cycle's decisions");
  Always& regs = m.always_ff(clk, rst_n, "the assembled word: cleared when written");
  regs.flop(word, mux(dec_commit, constant(ww, 0), word_d), 0);
  word_memory(m, part_sram, words, {"codes", "", "the code words"}, clk, dec_commit, dec_row, word_d, rd_row, rd_code);
  return m;
}

void RingCodesBlock::word_memory(Module& m, const Module& part_sram, int words, const WordMemoryNames& names,
                                 const Expr& clk, const Expr& we, const Expr& waddr, const Expr& wdata,
                                 const Expr& raddr, const Expr& rdata) {
  const int ww = wdata.width(), rw = clog2(words);
  const int P = parts(words), pb = RingListsBlock::lane_bits(P), prw = clog2(part_rows(words));
  auto idx = [](int i) { return static_cast<size_t>(i); };
  if (P == 1) {
    m.instance(
        part_sram, "u_" + names.instance,
        {{"clk_i", clk}, {"we_i", we}, {"waddr_i", waddr}, {"wdata_i", wdata}, {"raddr_i", raddr}, {"rdata_o", rdata}},
        names.what + " (registered reads)");
    return;
  }
  // Part p holds the rows whose low bits are p, at the row's high bits; every part reads the row
  // asked for, and the part's index, registered with the read, picks the word.
  const Expr wr_part = waddr.slice(pb - 1, 0), rd_part = raddr.slice(pb - 1, 0);
  const Expr wr_at = zext(waddr.slice(rw - 1, pb), prw), rd_at = zext(raddr.slice(rw - 1, pb), prw);
  const std::string& sp = names.signal_prefix;
  std::vector<Expr> part_out;
  for (int q = 0; q < P; ++q) {
    const std::string qs = std::to_string(q);
    part_out.push_back(m.signal(sp + "part_" + qs + "_rdata", ww));
    m.instance(part_sram, "u_" + names.instance + "_" + qs,
               {{"clk_i", clk},
                {"we_i", we && (wr_part == constant(pb, static_cast<uint64_t>(q)))},
                {"waddr_i", wr_at},
                {"wdata_i", wdata},
                {"raddr_i", rd_at},
                {"rdata_o", part_out.back()}},
               names.what + " whose row's low bits are " + qs);
  }
  // The part read, one-hot and registered with the read (no select decoded after the memories).
  // A part's read takes most of a cycle in the SRAM model, so only one level of AND-OR, over
  // kPickParts parts, follows it before a register (pick_s_q, zero unless one of its parts holds
  // the row); the OR of those registers follows them, into the reader's input register.
  const Expr rd_part_q = m.signal(sp + "rd_part_q", P, Sign::Unsigned, "bit p: part p holds the row read");
  Block& sel = m.always_ff_no_reset(clk, "the part of the row read, one-hot, then the picks");
  std::vector<Expr> hot;  // least significant first
  for (int q = 0; q < P; ++q) hot.push_back(rd_part == constant(pb, static_cast<uint64_t>(q)));
  sel.assign(rd_part_q, concat(std::vector<Expr>(hot.rbegin(), hot.rend())));
  const int F = std::min(P, kPickParts);
  Expr word_out;
  for (int s = 0; s < P / F; ++s) {
    Expr word_of = repl(ww, rd_part_q[s * F]) & part_out[idx(s * F)];
    for (int q = s * F + 1; q < (s + 1) * F; ++q) word_of = word_of | (repl(ww, rd_part_q[q]) & part_out[idx(q)]);
    const Expr pick = m.signal(sp + "pick_" + std::to_string(s) + "_q", ww, Sign::Unsigned,
                               s == 0 ? "the row's word if part s*F to s*F + F - 1 holds it, else 0" : "");
    sel.assign(pick, word_of);
    word_out = s == 0 ? pick : (word_out | pick);
  }
  m.assign(rdata, word_out);
}

vlog::Design RingCodesBlock::design(const HwConfig& c, int words, int list_w) {
  check(words, list_w);
  vlog::Design d = empty_design(c, {{"CODE_WORDS", std::to_string(words)}, {"LIST_W", std::to_string(list_w)}});
  const int ww = list_w * c.max_groups() * 2, rows = part_rows(words);
  d.add(SramBlock::generate(c, rows, ww, 1, 1, true));
  d.add(generate(c, words, list_w, d.module(SramBlock::name(rows, ww, 1, 1, true))));
  d.check();
  return d;
}

}  // namespace kaleido::hw
