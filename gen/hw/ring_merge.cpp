#include "common/error.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

std::string RingMergeBlock::take_name(int words, int width) {
  return "kld_ring_take_" + std::to_string(words) + "x" + std::to_string(width);
}

Module RingMergeBlock::generate_take(int words, int width) {
  Module m(take_name(words, width),
           "A lane's partial in kld_ring_merge: the OR of the bank words it takes (at most one) and "
           "of a word from registers (zero when it takes a bank word). Its own module so that the "
           "late bank words pass one AND-OR level");
  const Expr take = m.input("take_i", words, Sign::Unsigned, "bit k: take word k");
  const Expr word = m.input("word_i", words * width, Sign::Unsigned, "the bank words, word k at k*WIDTH");
  const Expr other = m.input("other_i", width, Sign::Unsigned, "the word from registers");
  const Expr out = m.output("word_o", width);
  Expr acc = other;
  for (int k = 0; k < words; ++k) acc = acc | (repl(width, take[k]) & word.slice((k + 1) * width - 1, k * width));
  m.assign(out, acc);
  return m;
}

Module RingMergeBlock::generate(const HwConfig& c, int depth, const Module& bank_sram,
                                const std::vector<const Module*>& takes) {
  const int segs = c.segs(), cols = c.cols, aw = c.acc_w, G = c.max_groups(), gws = c.gather_w;
  const int pw = c.partial_w(), sw = c.out_sum_w(), rw = row_w(c, depth), bw = bank_w(c);
  const int tagw = tag_width(c, depth), ktw = clog2(c.max_kt()), srcw = clog2(gws);
  // Lane j of every beat owns bank j: the ring's slots are whole rows of GATHER_W banks.
  if (depth <= gws || depth % gws != 0)
    throw InternalError("kld_ring_merge: a ring of " + std::to_string(depth) + " slots for a gather of " +
                        std::to_string(gws) + " positions a beat (it needs whole rows of GATHER_W slots, two or more)");
  if (static_cast<int>(takes.size()) != gws) throw InternalError("kld_ring_merge: one take module per lane");
  const auto R = static_cast<uint64_t>(bank_rows(c, depth));
  // A deep bank is `parts` memories by the row's low `pb` bits: its upper bits address them.
  const int parts = bank_parts(c, depth), pb = parts > 1 ? clog2(parts) : 0;
  if (parts > 1 && clog2(part_rows(c, depth)) != rw - pb)
    throw InternalError("kld_ring_merge: a part of a bank addressed by the row's upper bits");
  auto part_of = [&](const Expr& row, int p) { return row.slice(pb - 1, 0) == constant(pb, static_cast<uint64_t>(p)); };
  auto in_part = [&](const Expr& enable, const Expr& row, int p) { return parts == 1 ? enable : enable && part_of(row, p); };
  auto part_addr = [&](const Expr& row) { return parts == 1 ? row : row.slice(rw - 1, pb); };
  Module m("kld_ring_merge",
           "Merge of the window-bounded ring (docs/hardware.md): the array taps write each COMPUTE "
           "partial into slot (position mod RING_DEPTH) of the ring of its (group, column), held as "
           "GATHER_W banks of RING_DEPTH / GATHER_W rows (slot = row * GATHER_W + bank). The gather "
           "takes a row a beat (lane j: bank j) and, per group, reads the position's own slot "
           "(COMPUTE) or its h or t neighbour's (REUSE, from the 2-bit code; the scan tile's rows are "
           "padded to whole rows of the ring, so both lie in the lane's own bank), takes a w "
           "neighbour from the lane before it (lane 0: the last lane of the beat before) and copies "
           "the partial into its own slot, so a chain of references resolves one link at a time "
           "inside the ring. Four registered steps: the banks' registered read at the edge a beat "
           "enters (the copies of the two beats ahead, which that read misses, forwarded), the "
           "resolved partials, the carry-save tree, its adder");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr tap_valid = m.input("tap_valid_i", segs * cols);
  const Expr tap_tag = m.input("tap_tag_i", segs * cols * tagw, Sign::Unsigned,
                               "{k-tile, row, bank} of each tap's slot");
  const Expr tap_psum = m.input("tap_psum_i", segs * cols * pw, Sign::Unsigned, "PARTIAL_W bits per tap");
  const Expr gather_en = m.input("gather_en_i", 1, Sign::Unsigned, "the gather pipeline advances");
  const Expr gather_valid = m.input("gather_valid_i", gws, Sign::Unsigned,
                                    "lane j of the entering beat holds a position (not a row's padding)");
  const Expr gather_row = m.input("gather_row_i", rw, Sign::Unsigned,
                                  "the beat's row (below RING_DEPTH / GATHER_W): lane j's slot is row * "
                                  "GATHER_W + j");
  const Expr gather_code = m.input("gather_code_i", gws * G * 2, Sign::Unsigned,
                                   "code of lane j, group g at (j*G + g)*2: 0 COMPUTE, 1/2/3 REUSE of the "
                                   "t/h/w neighbour");
  const Expr off_h = m.input("ref_off_h_i", rw, Sign::Unsigned,
                             "rows back to the h neighbour (the scan tile's padded width / GATHER_W)");
  const Expr off_t = m.input("ref_off_t_i", rw, Sign::Unsigned,
                             "rows back to the t neighbour (the scan tile's padded area / GATHER_W)");
  const Expr group_valid = m.input("group_valid_i", G, Sign::Unsigned, "group g exists (g < K/GROUP_W)");
  const Expr out_valid = m.output("out_valid_o", gws, Sign::Unsigned, "lane j of out_data_o holds a position");
  const Expr out = m.output("out_data_o", gws * cols * aw, Sign::Unsigned,
                            "sum of lane j's position, column c at (j*COLS + c)*ACC_W, four beats after it "
                            "entered");
  auto lane_sfx = [&](int j) { return gws > 1 ? "_l" + std::to_string(j) : std::string(); };
  auto at = [&](int j, int g) { return std::to_string(g) + lane_sfx(j); };
  auto idx = [](int i) { return static_cast<size_t>(i); };

  // Stage a: the banks' read (in the banks' output registers) and the beat's decode. Stage b: the
  // resolved partials. Stage s: their carry-save tree, its one or two words registered. Stage
  // out: their sum. Valid bits reset; data registers do not.
  const Expr a_valid = m.signal("a_valid_q", gws, Sign::Unsigned, "lanes of the beat in stage a");
  const Expr b_valid = m.signal("b_valid_q", gws, Sign::Unsigned, "lanes of the beat in stage b");
  const Expr s_valid = m.signal("s_valid_q", gws, Sign::Unsigned, "lanes of the beat in stage s");
  const Expr o_valid = m.signal("out_valid_q", gws, Sign::Unsigned, "lanes of the beat in out_data_q");
  Always& valids = m.always_ff(clk, rst_n, "the stages' valid bits, advanced by gather_en_i");
  valids.flop(a_valid, mux(gather_en, gather_valid, a_valid), 0);
  valids.flop(b_valid, mux(gather_en, a_valid, b_valid), 0);
  valids.flop(s_valid, mux(gather_en, b_valid, s_valid), 0);
  valids.flop(o_valid, mux(gather_en, s_valid, o_valid), 0);
  m.assign(out_valid, o_valid);
  Block& regs = m.always_ff_no_reset(clk, "the stages' data, advanced by gather_en_i");
  IfStmt& en = regs.if_(gather_en);
  Block& every = m.always_ff_no_reset(clk, "loaded at every edge: the read rows, the forward of the copies made "
                                            "as a beat enters, the words of those copies, the resolved partials");

  const Expr a_row = m.signal("a_row_q", rw, Sign::Unsigned, "the beat's row in stage a");
  const Expr b_row = m.signal("b_row_q", rw, Sign::Unsigned, "the beat's row in stage b: its copies' row");
  en.then_().assign(a_row, gather_row);
  en.then_().assign(b_row, a_row);
  const Expr a_reuse = m.signal("a_reuse_q", gws * G, Sign::Unsigned, "bit j*G + g: the pair copies a neighbour");
  const Expr b_reuse = m.signal("b_reuse_q", gws * G);
  en.then_().assign(b_reuse, a_reuse);
  std::vector<Expr> reuse_bits, prev_bits;  // least significant first
  // With one bank a w neighbour is one row back in it; with several it lies in another lane's bank:
  // lane j's w neighbour is lane j - 1 of the beat, lane 0's the beat before's last lane (held).
  const bool banked = gws > 1;
  const Expr a_prev = banked ? m.signal("a_prev_q", G, Sign::Unsigned,
                                        "bit g: lane 0 takes the w neighbour, the beat before's last lane")
                             : Expr();
  // A bank's read lands at the edge its beat enters stage a, so it misses two copies into the row
  // it reads: the one stage b's beat makes at that edge, and the one the beat then in stage a
  // makes when it leaves stage b. Both are found from the entering beat's rows and forwarded.
  // The first needs the copied word held a cycle (copied_*_q) and is void after a stalled edge,
  // whose read repeats the row and holds the copy.
  // A lane whose w neighbour is an earlier lane of its beat takes that lane's partial, which may
  // itself come from an earlier lane: the lane the chain ends at (its root in the beat) is found
  // from the codes as the beat enters, so each lane selects once instead of chaining.
  std::vector<std::vector<Expr>> raddr(idx(gws)), a_root(idx(gws)), fwd_b(idx(gws)), fwd_c(idx(gws)),
      a_rrows(idx(gws));
  std::vector<Expr> roots(idx(G));  // lane j-1's root lane of each group
  for (int j = 0; j < gws; ++j) {
    const std::string js = std::to_string(j);
    for (int g = 0; g < G; ++g) {
      const Expr code = gather_code.slice((j * G + g) * 2 + 1, (j * G + g) * 2);
      Expr off = mux(code == constant(2, kRefH), off_h, off_t);
      if (!banked) off = mux(code == constant(2, kRefW), constant(rw, 1), off);
      const Expr back = m.wire("back_" + at(j, g), zext(gather_row, rw + 1) - zext(off, rw + 1),
                               "the row of the neighbour the pair reads, before the wrap");
      const Expr ref_wrap = m.wire("ref_wrap_" + at(j, g), mux(back.msb(), back + constant(rw + 1, R), back),
                                   "the neighbour's row, wrapped into the ring");
      m.unused(ref_wrap.msb(), "below RING_DEPTH / GATHER_W after the wrap");
      const Expr far = m.wire("far_" + at(j, g),
                              banked ? code == constant(2, kRefH) || code == constant(2, kRefT) : code != constant(2, kCompute),
                              "the pair reads its neighbour's slot");
      const Expr rrow = m.wire("rrow_" + at(j, g), mux(far, trunc(ref_wrap, rw), gather_row),
                               "the row bank " + js + " reads for the entering beat's group " + std::to_string(g));
      const Expr a_rrow = m.signal("a_rrow_" + at(j, g) + "_q", rw, Sign::Unsigned, "the row read for stage a");
      raddr[idx(j)].push_back(m.wire("raddr_" + at(j, g), mux(gather_en, rrow, a_rrow),
                                     "the entering beat's row, or stage a's again while stalled"));
      every.assign(a_rrow, raddr[idx(j)].back());
      a_rrows[idx(j)].push_back(a_rrow);
      const Expr misses_b = m.wire("misses_b_" + at(j, g), a_valid[j] && a_reuse[j * G + g] && rrow == a_row,
                                   "the read misses the copy of the beat now in stage a");
      const Expr misses_c = m.wire("misses_c_" + at(j, g), b_valid[j] && b_reuse[j * G + g] && rrow == b_row,
                                   "the read misses the copy stage b makes at this edge");
      fwd_b[idx(j)].push_back(m.signal("fwd_b_" + at(j, g) + "_q", 1, Sign::Unsigned,
                                       "stage a's read lacks stage b's copy: take it"));
      en.then_().assign(fwd_b[idx(j)].back(), misses_b);
      fwd_c[idx(j)].push_back(m.signal("fwd_c_" + at(j, g) + "_q", 1, Sign::Unsigned,
                                       "stage a's read lacks the copy held in copied_*_q: take it"));
      every.assign(fwd_c[idx(j)].back(), gather_en && misses_c);
      reuse_bits.push_back(code != constant(2, kCompute));
      const Expr near = code == constant(2, kRefW);
      if (!banked) continue;
      if (j == 0) {
        prev_bits.push_back(near);
        roots[idx(g)] = constant(srcw, 0);
        continue;
      }
      const Expr root = m.wire("root_" + at(j, g), mux(near, roots[idx(g)], constant(srcw, static_cast<uint64_t>(j))),
                               "the lane whose partial lane " + js + " takes: its own, or lane " +
                                   std::to_string(j - 1) + "'s root");
      roots[idx(g)] = root;
      a_root[idx(j)].push_back(m.signal("a_root_" + at(j, g) + "_q", srcw, Sign::Unsigned, "root lane in the beat"));
      en.then_().assign(a_root[idx(j)].back(), root);
    }
  }
  std::reverse(reuse_bits.begin(), reuse_bits.end());
  en.then_().assign(a_reuse, concat(reuse_bits));
  std::reverse(prev_bits.begin(), prev_bits.end());
  if (banked) en.then_().assign(a_prev, concat(prev_bits));

  std::vector<std::vector<std::vector<Expr>>> lane_terms(idx(gws), std::vector<std::vector<Expr>>(idx(cols)));
  const Expr last_valid = b_valid[gws - 1];  // the beat in stage b fills its row's last lane
  for (int g = 0; g < G; ++g) {
    const int s = g % segs, kt = g / segs;
    // Which bank words a lane takes: its root lane's, unless that word is replaced (a forwarded
    // copy, or lane 0's w neighbour); none in a group that does not exist, whose partials are zero,
    // and none while stalled (the partial then holds through other_*).
    std::vector<Expr> copies, stale, take;
    for (int k = 0; k < gws; ++k) {
      copies.push_back(m.wire("copy_" + at(k, g), gather_en && b_valid[k] && b_reuse[k * G + g],
                              "lane " + std::to_string(k) + " writes its resolved partial of group " + std::to_string(g)));
      Expr st = fwd_b[idx(k)][idx(g)] || fwd_c[idx(k)][idx(g)];
      if (banked && k == 0) st = st || a_prev[g];
      stale.push_back(m.wire("stale_" + at(k, g), st, "lane " + std::to_string(k) + "'s bank word is replaced"));
    }
    for (int j = 0; j < gws; ++j) {
      const int n = take_lanes(c, j);
      std::vector<Expr> bits;  // most significant first: word k * parts + p is part p of bank k
      for (int k = n - 1; k >= 0; --k) {
        const Expr mine = j == 0 ? bit(true) : a_root[idx(j)][idx(g)] == constant(srcw, static_cast<uint64_t>(k));
        const Expr base = gather_en && group_valid[g] && mine && !stale[idx(k)];
        for (int p = parts - 1; p >= 0; --p) bits.push_back(in_part(base, a_rrows[idx(k)][idx(g)], p));
      }
      const std::string word = parts > 1 ? "word k (bank k / " + std::to_string(parts) + ", its part k mod " +
                                               std::to_string(parts) + ")"
                                         : "bank k's word";
      take.push_back(m.wire("take_" + at(j, g), concat(bits), "bit k: lane " + std::to_string(j) + " takes " + word));
    }
    for (int cc = 0; cc < cols; ++cc) {
      const int tap = s * cols + cc;
      const std::string name = std::to_string(g) + "_" + std::to_string(cc);
      // The tap of segment s carries group kt*SEGS + s, kt from its tag.
      const Expr mine = c.max_kt() == 1 ? bit(true)
                                        : tap_tag.slice(tap * tagw + rw + bw + ktw - 1, tap * tagw + rw + bw) ==
                                              constant(ktw, static_cast<uint64_t>(kt));
      const Expr tap_here = m.wire("tap_here_" + name, mine && tap_valid[tap],
                                   "a partial of group " + std::to_string(g) + " arrives at column " + std::to_string(cc));
      const Expr tap_row = tap_tag.slice(tap * tagw + bw + rw - 1, tap * tagw + bw);
      std::vector<Expr> reads, held, copied;
      for (int j = 0; j < gws; ++j) {
        const std::string jn = name + lane_sfx(j);
        for (int p = 0; p < parts; ++p)
          reads.push_back(m.signal("slot_" + jn + (parts > 1 ? "_p" + std::to_string(p) : std::string()), pw));
        held.push_back(m.signal("b_partial_" + jn + "_q", pw, Sign::Unsigned, "lane's resolved partial in stage b"));
        copied.push_back(m.signal("copied_" + jn + "_q", pw, Sign::Unsigned, "the partial stage b held a cycle ago"));
        every.assign(copied.back(), held.back());
      }
      // Lane 0's w neighbour is the last lane of the beat before: in stage b, or gone and held.
      Expr prev;
      if (banked) {
        const Expr last = m.signal("last_partial_" + name + "_q", pw, Sign::Unsigned,
                                   "resolved partial of the last lane of the latest beat to leave stage b");
        en.then_().if_(last_valid).then_().assign(last, held.back());
        prev = m.wire("prev_" + name, mux(last_valid, held.back(), last),
                      "lane 0's w neighbour: the beat before's last lane");
      }
      std::vector<Expr> alt;  // each lane's replacement of its bank word, zero when none
      for (int k = 0; k < gws; ++k) {
        Expr a = mux(fwd_b[idx(k)][idx(g)], held[idx(k)], mux(fwd_c[idx(k)][idx(g)], copied[idx(k)], zero(pw)));
        if (banked && k == 0) a = mux(a_prev[g], prev, a);
        alt.push_back(m.wire("alt_" + name + lane_sfx(k), a, "lane " + std::to_string(k) + "'s replaced word"));
      }
      for (int j = 0; j < gws; ++j) {
        const std::string jn = name + lane_sfx(j);
        const int n = take_lanes(c, j);
        const std::vector<Expr> alts(alt.begin(), alt.begin() + n);
        const Expr from_root = j == 0 ? alt[0] : select(a_root[idx(j)][idx(g)], alts, zero(pw));
        const Expr other = m.wire("other_" + jn, mux(gather_en, mux(group_valid[g], from_root, zero(pw)), held[idx(j)]),
                                  "the root lane's replaced word, if any; the held partial while stalled");
        std::vector<Expr> words(reads.begin(), reads.begin() + n * parts);
        std::reverse(words.begin(), words.end());
        const Expr taken = m.signal("taken_" + jn, pw);
        m.instance(*takes[idx(j)], "u_take_" + jn,
                   {{"take_i", take[idx(j)]}, {"word_i", concat(words)}, {"other_i", other}, {"word_o", taken}},
                   "lane " + std::to_string(j) + "'s resolved partial");
        every.assign(held[idx(j)], taken);  // the stall folded into the take: no enable after the bank word
        lane_terms[idx(j)][idx(cc)].push_back(sext(held[idx(j)], sw));
        const Expr tap_bank = bw == 0 ? bit(true)
                                      : tap_tag.slice(tap * tagw + bw - 1, tap * tagw) == constant(bw, static_cast<uint64_t>(j));
        for (int p = 0; p < parts; ++p) {
          const std::string part = parts > 1 ? "_p" + std::to_string(p) : std::string();
          const std::string rows_note =
              parts > 1 ? " (its rows " + std::to_string(p) + " mod " + std::to_string(parts) + ")" : "";
          m.instance(bank_sram, "u_ring_" + jn + part,
                     {{"clk_i", clk},
                      {"we0_i", in_part(tap_here && tap_bank, tap_row, p)},
                      {"waddr0_i", part_addr(tap_row)},
                      {"wdata0_i", tap_psum.slice((tap + 1) * pw - 1, tap * pw)},
                      {"we1_i", in_part(copies[idx(j)], b_row, p)},
                      {"waddr1_i", part_addr(b_row)},
                      {"wdata1_i", held[idx(j)]},
                      {"raddr_i", part_addr(raddr[idx(j)][idx(g)])},
                      {"rdata_o", reads[idx(j * parts + p)]}},
                     "bank " + std::to_string(j) + rows_note + " of the ring of group " + std::to_string(g) + ", column " + std::to_string(cc));
        }
      }
    }
  }
  for (int s = G; s < segs; ++s)  // segments that never hold a group (MAX_K/GROUP_W < SEGS)
    m.unused(concat({tap_valid.slice((s + 1) * cols - 1, s * cols),
                     tap_tag.slice((s + 1) * cols * tagw - 1, s * cols * tagw),
                     tap_psum.slice((s + 1) * cols * pw - 1, s * cols * pw)}),
             "segment " + std::to_string(s) + " has no channel group in any configuration");
  std::vector<Expr> words;  // most significant first: lane GATHER_W-1, column COLS-1
  for (int j = gws - 1; j >= 0; --j)
    for (int cc = cols - 1; cc >= 0; --cc) {
      // The tree and the adder in separate steps.
      const std::string sfx = std::to_string(cc) + lane_sfx(j);
      std::vector<Expr> held_words;
      const std::vector<Expr> pair = carry_save_pair(m, lane_terms[idx(j)][idx(cc)], sfx);
      for (size_t k = 0; k < pair.size(); ++k) {
        held_words.push_back(m.signal("s_csa_" + sfx + "_" + std::to_string(k) + "_q", sw, Sign::Unsigned,
                                      k == 0 ? "the carry-save words of the sum" : ""));
        en.then_().assign(held_words.back(), pair[k]);
      }
      words.push_back(carry_save_add(m, held_words, sfx));
    }
  const Expr out_q = m.signal("out_data_q", gws * cols * sw, Sign::Unsigned, "the sums, OUT_SUM_W bits each");
  en.then_().assign(out_q, concat(words));
  std::vector<Expr> out_words;  // most significant first, as words
  for (int w = gws * cols - 1; w >= 0; --w) out_words.push_back(sext(out_q.slice((w + 1) * sw - 1, w * sw), aw));
  m.assign(out, concat(out_words));
  return m;
}

vlog::Design RingMergeBlock::design(const HwConfig& c, int depth) {
  vlog::Design d = empty_design(c, {{"RING_DEPTH", std::to_string(depth)}});
  // A bank: one registered read (its lane's), two writes (the taps, its lane's copy).
  const int rows = part_rows(c, depth), pw = c.partial_w(), gws = std::max(1, c.gather_w);
  const int parts = bank_parts(c, depth);
  d.add(SramBlock::generate(c, rows, pw, 1, 2, true));
  // Lane j takes from take_lanes banks, each of `parts` memories.
  auto words = [&](int j) { return take_lanes(c, j) * parts; };
  for (int j = 0; j < gws; ++j)
    if (!d.has(take_name(words(j), pw))) d.add(generate_take(words(j), pw));
  std::vector<const vlog::Module*> takes;
  for (int j = 0; j < gws; ++j) takes.push_back(&d.module(take_name(words(j), pw)));
  d.add(generate(c, depth, d.module(SramBlock::name(rows, pw, 1, 2, true)), takes));
  d.check();
  return d;
}

}  // namespace kaleido::hw
