#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

namespace {

int log2_exact(int v) {
  int lg = 0;
  while ((1 << lg) < v) ++lg;
  return lg;
}

}  // namespace

void RingListsBlock::check(int chunk, int list_w) {
  if (list_w < 1 || (list_w & (list_w - 1)) != 0)
    throw ConfigError("list-w", std::to_string(list_w),
                      "the list builder's word of positions must be a power of two (an entry is {word, lane})");
  if (chunk < 2 || chunk < list_w)
    throw ConfigError("chunks", std::to_string(chunk),
                      "the built list builder needs chunks of at least two positions and at least LIST_W (" +
                          std::to_string(list_w) + ")");
}

int RingListsBlock::lane_bits(int list_w) { return log2_exact(list_w); }
int RingListsBlock::word_bits(int chunk, int list_w) { return rows(chunk, list_w) > 1 ? clog2(rows(chunk, list_w)) : 0; }
int RingListsBlock::entry_w(int chunk, int list_w) { return word_bits(chunk, list_w) + lane_bits(list_w); }
int RingListsBlock::len_w(int chunk) { return clog2(chunk + 1); }

Module RingListsBlock::generate(const HwConfig& c, int chunk, int list_w, const Module& bank_sram) {
  check(chunk, list_w);
  const int G = c.max_groups(), LW = list_w, lg = lane_bits(LW), R = rows(chunk, LW);
  const int wb = word_bits(chunk, LW), ew = entry_w(chunk, LW), lw = len_w(chunk), aw = clog2(2 * R);
  Module m("kld_ring_lists",
           "List builder of the window-bounded ring (docs/hardware.md): from a chunk's decision codes, "
           "LIST_W positions a cycle, each group's compute list (the chunk positions whose code is "
           "COMPUTE, in scan order) for the pass engine, in one of two buffers (one built while the "
           "other is issued). A group's lists are LIST_W banks, entry e in bank e mod LIST_W, so the "
           "up to LIST_W entries a word adds go to distinct banks: the word's compute bits, ranked by "
           "a prefix count, are rotated by the list's length. Codes registered on entry, ranks, "
           "counts and the lists' lengths before the word registered in the next stage; a word's "
           "entries are written at the edge after "
           "and readable (registered) after the one after that");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr code_valid = m.input("code_valid_i", 1, Sign::Unsigned, "a word of codes enters");
  const Expr code_first = m.input("code_first_i", 1, Sign::Unsigned,
                                  "the word is its chunk's first: the buffer's lists restart empty");
  const Expr code_buf = m.input("code_buf_i", 1, Sign::Unsigned, "the list buffer the chunk's lists go to");
  const Expr code_lanes = m.input("code_lanes_i", LW, Sign::Unsigned,
                                  "lane i holds a position of the chunk (a chunk's last word may be partial)");
  const Expr code = m.input("code_i", LW * G * 2, Sign::Unsigned,
                            "code of lane i, group g at (i*G + g)*2: 0 COMPUTE, 1/2/3 REUSE");
  const Expr rd_buf = m.input("rd_buf_i", 1, Sign::Unsigned, "the buffer the reads address");
  const Expr rd_index = m.input("rd_index_i", G * ew, Sign::Unsigned, "entry of group g's list at g*ENTRY_W");
  const Expr rd_entry = m.output("rd_entry_o", G * ew, Sign::Unsigned,
                                 "the entries read (chunk positions), a cycle after their index");
  const Expr len_out = m.output("len_o", 2 * G * lw, Sign::Unsigned,
                                "length of buffer b's list of group g at (b*G + g)*LEN_W");
  auto idx = [](int i) { return static_cast<size_t>(i); };

  // The entering word, registered: the codes come from a memory and go on to the banks' writes.
  const Expr in_valid = m.signal("in_valid_q", 1, Sign::Unsigned, "a word in the rank stage");
  const Expr in_first = m.signal("in_first_q", 1);
  const Expr in_buf = m.signal("in_buf_q", 1);
  const Expr in_lanes = m.signal("in_lanes_q", LW);
  const Expr in_code = m.signal("in_code_q", LW * G * 2);
  Always& valid = m.always_ff(clk, rst_n, "the stages' valid bits");
  valid.flop(in_valid, code_valid, 0);
  Block& in_regs = m.always_ff_no_reset(clk, "the entering word");
  IfStmt& enter = in_regs.if_(code_valid);
  enter.then_().assign(in_first, code_first);
  enter.then_().assign(in_buf, code_buf);
  enter.then_().assign(in_lanes, code_lanes);
  enter.then_().assign(in_code, code);
  // The word's index in its chunk: its entries are {word, lane}.
  Expr in_word;
  if (wb > 0) {
    in_word = m.signal("in_word_q", wb, Sign::Unsigned, "the word's index in its chunk");
    enter.then_().assign(in_word, mux(code_first, zero(wb), in_word + constant(wb, 1)));
  }

  // The rank stage: the word's COMPUTE bits, ranks and counts, registered so that no path holds
  // the prefix count and the length's update (the codes come from a registered memory, so the
  // stage costs a cycle of latency, not throughput).
  const Expr ranked_valid = m.signal("ranked_valid_q", 1, Sign::Unsigned, "a word in the list stage");
  const Expr ranked_buf = m.signal("ranked_buf_q", 1);
  valid.flop(ranked_valid, in_valid, 0);
  Block& ranked_regs = m.always_ff_no_reset(clk, "the ranked word");
  IfStmt& ranked = ranked_regs.if_(in_valid);
  ranked.then_().assign(ranked_buf, in_buf);
  Expr ranked_word;
  if (wb > 0) {
    ranked_word = m.signal("ranked_word_q", wb);
    ranked.then_().assign(ranked_word, in_word);
  }
  auto entry = [&](const Expr& lane) {
    if (wb == 0) return lane;
    return lg == 0 ? ranked_word : concat({ranked_word, lane});
  };

  Always& counts = m.always_ff(clk, rst_n, "list lengths, per buffer and group");
  std::vector<Expr> len_words;  // least significant first
  std::vector<std::vector<Expr>> len_q(2);
  for (int b = 0; b < 2; ++b)
    for (int g = 0; g < G; ++g) {
      len_q[idx(b)].push_back(m.signal("len_" + std::to_string(b) + "_" + std::to_string(g) + "_q", lw,
                                       Sign::Unsigned, b == 0 && g == 0 ? "entries in buffer b's list of group g" : ""));
      len_words.push_back(len_q[idx(b)].back());
    }
  std::vector<Expr> msb_first(len_words.rbegin(), len_words.rend());
  m.assign(len_out, concat(msb_first));

  Block* rd_regs = lg > 0 ? &m.always_ff_no_reset(clk, "which bank word each read takes") : nullptr;
  std::vector<Expr> entries;  // least significant first
  for (int g = 0; g < G; ++g) {
    const std::string gs = std::to_string(g);
    // COMPUTE bits of the word's lanes and their ranks among them (lanes before: at most LIST_W - 1).
    std::vector<Expr> bits, rank;
    Expr count = zero(lg + 1);
    for (int i = 0; i < LW; ++i) {
      const Expr k = in_code.slice((i * G + g) * 2 + 1, (i * G + g) * 2);
      bits.push_back(m.wire("compute_" + gs + "_" + std::to_string(i), in_lanes[i] && (k == constant(2, 0)),
                            i == 0 && g == 0 ? "lane i holds a COMPUTE pair of group g" : ""));
      if (lg > 0) {
        // Lanes before lane i: at most LIST_W - 1, so the top bit is never set and not compared.
        const Expr before = m.wire("rank_" + gs + "_" + std::to_string(i), count,
                                   i == 0 && g == 0 ? "COMPUTE lanes before lane i: the entry's rank in the word" : "");
        rank.push_back(before.slice(lg - 1, 0));
        count = before;
      }
      count = count + zext(bits.back(), lg + 1);
    }
    const Expr ranked_compute = m.signal("ranked_compute_" + gs + "_q", LW, Sign::Unsigned,
                                         g == 0 ? "lane i holds a COMPUTE pair of group g, ranked" : "");
    ranked.then_().assign(ranked_compute, concat(std::vector<Expr>(bits.rbegin(), bits.rend())));
    Expr ranked_rank;
    if (lg > 0) {
      ranked_rank = m.signal("ranked_rank_" + gs + "_q", LW * lg, Sign::Unsigned,
                             g == 0 ? "lane i's rank at i*log2(LIST_W)" : "");
      ranked.then_().assign(ranked_rank, concat(std::vector<Expr>(rank.rbegin(), rank.rend())));
    }
    const Expr added = m.signal("ranked_added_" + gs + "_q", lg + 1, Sign::Unsigned,
                                "entries the word adds to group " + gs + "'s list");
    ranked.then_().assign(added, count);
    // The list's length before the word, found in the rank stage too: the buffer select then feeds
    // a register, not the banks' write rows (its fanout is every group's length). The word ahead,
    // in the list stage, updates the length at this edge: its new length is forwarded.
    const Expr base = m.signal("ranked_base_" + gs + "_q", lw, Sign::Unsigned,
                               "the list's length before the word: the index of its first new entry");
    const Expr next_len = m.wire("next_len_" + gs, base + zext(added, lw), "the list's length after the word");
    std::vector<Expr> len_after;  // buffer b's length after this edge
    for (int b = 0; b < 2; ++b) {
      const Expr mine = ranked_valid && (ranked_buf == constant(1, static_cast<uint64_t>(b)));
      len_after.push_back(mux(mine, next_len, len_q[idx(b)][idx(g)]));
      counts.flop(len_q[idx(b)][idx(g)], len_after.back(), 0);
    }
    ranked.then_().assign(base, mux(in_first, zero(lw), mux(in_buf, len_after[1], len_after[0])));
    const Expr base_low = lg > 0 ? base.slice(lg - 1, 0) : Expr();
    const Expr base_row = m.wire("base_row_" + gs, base.slice(lw - 1, lg), "the row of the first new entry");
    // Every bank of the group reads the row of the entry asked for; the bank's word is taken after.
    const Expr rd_row = wb > 0 ? zext(rd_index.slice(g * ew + ew - 1, g * ew + lg), aw) : zero(aw);
    const Expr raddr = m.wire("raddr_" + gs, mux(rd_buf, rd_row + constant(aw, static_cast<uint64_t>(R)), rd_row),
                              "the row read in group " + gs + "'s banks");
    std::vector<Expr> bank_out;
    for (int b = 0; b < LW; ++b) {
      const std::string bs = gs + "_b" + std::to_string(b);
      // Bank b takes the new entry of index base + ((b - base) mod LIST_W): the lane of that rank.
      Expr we = bit(false), lane = lg > 0 ? zero(lg) : Expr();
      if (lg > 0) {
        const Expr rot = m.wire("rot_" + bs, constant(lg, static_cast<uint64_t>(b)) - base_low,
                                "the rank of the lane bank " + std::to_string(b) + " takes");
        for (int i = 0; i < LW; ++i) {
          const Expr take = ranked_compute[i] && (ranked_rank.slice(i * lg + lg - 1, i * lg) == rot);
          we = we || take;
          lane = lane | (repl(lg, take) & constant(lg, static_cast<uint64_t>(i)));
        }
      } else {
        we = ranked_compute[0];
      }
      const Expr bank_we = m.wire("we_" + bs, ranked_valid && we, "bank " + std::to_string(b) + " takes an entry");
      // Below base's low bits the entry is in the row after base's.
      Expr row = base_row;
      if (lg > 0 && b < LW - 1) row = row + zext(base_low > constant(lg, static_cast<uint64_t>(b)), row.width());
      const Expr wrow = m.wire("wrow_" + bs, row, "the entry's row in its buffer");
      if (wb < wrow.width())
        m.unused(wrow.slice(wrow.width() - 1, wb), "a written entry's row is below ceil(C / LIST_W)");
      const Expr buf_row = wb > 0 ? zext(wrow.slice(wb - 1, 0), aw) : zero(aw);
      const Expr waddr = mux(ranked_buf, buf_row + constant(aw, static_cast<uint64_t>(R)), buf_row);
      bank_out.push_back(m.signal("bank_" + bs + "_rdata", ew));
      m.instance(bank_sram, "u_list_" + bs,
                 {{"clk_i", clk},
                  {"we_i", bank_we},
                  {"waddr_i", waddr},
                  {"wdata_i", entry(lane)},
                  {"raddr_i", raddr},
                  {"rdata_o", bank_out.back()}},
                 "bank " + std::to_string(b) + " of group " + gs + "'s lists (both buffers)");
    }
    if (lg == 0) {
      entries.push_back(bank_out[0]);
      continue;
    }
    const Expr rd_bank = m.signal("rd_bank_" + gs + "_q", lg, Sign::Unsigned, "the bank holding the entry read");
    rd_regs->assign(rd_bank, rd_index.slice(g * ew + lg - 1, g * ew));
    entries.push_back(select(rd_bank, bank_out, zero(ew)));
  }
  std::vector<Expr> entries_msb(entries.rbegin(), entries.rend());
  m.assign(rd_entry, concat(entries_msb));
  return m;
}

vlog::Design RingListsBlock::design(const HwConfig& c, int chunk, int list_w) {
  check(chunk, list_w);
  vlog::Design d = empty_design(c, {{"CHUNK", std::to_string(chunk)}, {"LIST_W", std::to_string(list_w)}});
  const int depth = 2 * rows(chunk, list_w), ew = entry_w(chunk, list_w);
  d.add(SramBlock::generate(c, depth, ew, 1, 1, true));
  d.add(generate(c, chunk, list_w, d.module(SramBlock::name(depth, ew, 1, 1, true))));
  d.check();
  return d;
}

}  // namespace kaleido::hw
