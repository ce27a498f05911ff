#include "common/error.hpp"
#include "common/version.hpp"
#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module RingMergeBlock::generate(const HwConfig& c, int depth, const Module& ring_sram) {
  const int segs = c.segs(), cols = c.cols, aw = c.acc_w, G = c.max_groups(), gws = c.gather_w;
  const int pw = c.partial_w(), sw = c.out_sum_w(), xw = slot_w(depth), tagw = tag_width(c, depth);
  const int ktw = clog2(c.max_kt()), srcw = clog2(gws);
  // A beat's GATHER_W positions need distinct slots.
  if (depth <= gws)
    throw InternalError("kld_ring_merge: a ring of " + std::to_string(depth) + " slots for a gather of " +
                        std::to_string(gws) + " positions a beat");
  Module m("kld_ring_merge",
           "Merge of the window-bounded ring (docs/hardware.md): the array taps write each COMPUTE "
           "partial into slot (position mod RING_DEPTH) of the ring of its (group, column); the gather "
           "takes GATHER_W positions a beat and, per group, reads the position's own slot (COMPUTE) or "
           "its w, h or t neighbour's (REUSE, from the 2-bit code) and copies that partial into its own "
           "slot, so a chain of references resolves one link at a time inside the ring. Three "
           "registered steps: the read addresses, the slots' read (forwarded from the copies being "
           "written), the resolved terms' sum (a carry-save tree)");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr tap_valid = m.input("tap_valid_i", segs * cols);
  const Expr tap_tag = m.input("tap_tag_i", segs * cols * tagw, Sign::Unsigned, "{k-tile, slot} of each tap");
  const Expr tap_psum = m.input("tap_psum_i", segs * cols * pw, Sign::Unsigned, "PARTIAL_W bits per tap");
  const Expr gather_en = m.input("gather_en_i", 1, Sign::Unsigned, "the gather pipeline advances");
  const Expr gather_valid =
      m.input("gather_valid_i", gws, Sign::Unsigned, "lane j of the entering beat holds a position");
  const Expr gather_slot = m.input("gather_slot_i", xw, Sign::Unsigned,
                                   "slot of lane 0's position (below RING_DEPTH); lane j's is (slot + j) mod "
                                   "RING_DEPTH");
  const Expr gather_code = m.input("gather_code_i", gws * G * 2, Sign::Unsigned,
                                   "code of lane j, group g at (j*G + g)*2: 0 COMPUTE, 1/2/3 REUSE of the "
                                   "t/h/w neighbour");
  const Expr off_h = m.input("ref_off_h_i", xw, Sign::Unsigned,
                             "slots back to the h neighbour (the scan tile's width; 1 to RING_DEPTH-1)");
  const Expr off_t = m.input("ref_off_t_i", xw, Sign::Unsigned,
                             "slots back to the t neighbour (the scan tile's area; 1 to RING_DEPTH-1)");
  const Expr group_valid = m.input("group_valid_i", G, Sign::Unsigned, "group g exists (g < K/GROUP_W)");
  const Expr out_valid = m.output("out_valid_o", gws, Sign::Unsigned, "lane j of out_data_o holds a position");
  const Expr out = m.output("out_data_o", gws * cols * aw, Sign::Unsigned,
                            "sum of lane j's position, column c at (j*COLS + c)*ACC_W, three beats after it "
                            "entered");
  const uint64_t D = static_cast<uint64_t>(depth);
  auto lane_sfx = [&](int j) { return gws > 1 ? "_l" + std::to_string(j) : std::string(); };
  auto at = [&](int j, int g) { return std::to_string(g) + lane_sfx(j); };

  // Stage a: the read address of every (lane, group), registered. Stage b: the slots' read,
  // registered. Stage out: the resolved terms' sum. Valid bits reset; data registers do not.
  const Expr a_valid = m.signal("a_valid_q", gws, Sign::Unsigned, "lanes of the beat in stage a");
  const Expr b_valid = m.signal("b_valid_q", gws, Sign::Unsigned, "lanes of the beat in stage b");
  const Expr o_valid = m.signal("out_valid_q", gws, Sign::Unsigned, "lanes of the beat in out_data_q");
  Always& valids = m.always_ff(clk, rst_n, "the stages' valid bits, advanced by gather_en_i");
  valids.flop(a_valid, mux(gather_en, gather_valid, a_valid), 0);
  valids.flop(b_valid, mux(gather_en, a_valid, b_valid), 0);
  valids.flop(o_valid, mux(gather_en, b_valid, o_valid), 0);
  m.assign(out_valid, o_valid);
  Block& regs = m.always_ff_no_reset(clk, "the stages' data, advanced by gather_en_i");
  IfStmt& en = regs.if_(gather_en);

  const Expr a_reuse = m.signal("a_reuse_q", gws * G, Sign::Unsigned, "bit j*G + g: the pair copies a neighbour");
  const Expr b_reuse = m.signal("b_reuse_q", gws * G);
  en.then_().assign(b_reuse, a_reuse);
  std::vector<Expr> reuse_bits;  // least significant first
  std::vector<Expr> b_slot;        // own slot of lane j in stage b
  // A lane whose neighbour is an earlier lane of its beat takes that lane's partial, which may
  // itself come from an earlier lane: the lane the chain ends at (its root in the beat) is found
  // from the codes in stage a, so stage b selects once instead of chaining through the lanes.
  std::vector<std::vector<Expr>> a_raddr(static_cast<size_t>(gws)), roots(static_cast<size_t>(G)),
      b_root(static_cast<size_t>(gws));
  for (int j = 0; j < gws; ++j) {
    const std::string js = std::to_string(j);
    Expr own = gather_slot;
    if (j > 0) {
      const Expr next = m.wire("slot_next" + lane_sfx(j), zext(gather_slot, xw + 1) + constant(xw + 1, j),
                               "slot + " + js + ", before the wrap");
      const Expr wrapped = m.wire("slot_wrap" + lane_sfx(j), mux(next >= constant(xw + 1, D), next - constant(xw + 1, D), next));
      own = m.wire("slot" + lane_sfx(j), trunc(wrapped, xw), "own slot of lane " + js);
      m.unused(wrapped.msb(), "below RING_DEPTH after the wrap");
    }
    const Expr a_slot = m.signal("a_slot" + lane_sfx(j) + "_q", xw, Sign::Unsigned, "own slot of lane " + js);
    b_slot.push_back(m.signal("b_slot" + lane_sfx(j) + "_q", xw));
    en.then_().assign(a_slot, own);
    en.then_().assign(b_slot.back(), a_slot);
    for (int g = 0; g < G; ++g) {
      const Expr code = gather_code.slice((j * G + g) * 2 + 1, (j * G + g) * 2);
      const Expr dist = m.wire("dist_" + at(j, g),
                               mux(code == constant(2, kRefW), constant(xw, 1),
                                   mux(code == constant(2, kRefH), off_h, off_t)),
                               "slots back to the neighbour the code names");
      const Expr back = m.wire("back_" + at(j, g), zext(own, xw + 1) - zext(dist, xw + 1));
      const Expr ref_wrap = m.wire("ref_wrap_" + at(j, g), mux(back.msb(), back + constant(xw + 1, D), back),
                                   "the neighbour's slot, wrapped into the ring");
      const Expr ref = m.wire("ref_slot_" + at(j, g), trunc(ref_wrap, xw));
      m.unused(ref_wrap.msb(), "below RING_DEPTH after the wrap");
      const Expr reuse = code != constant(2, kCompute);
      reuse_bits.push_back(reuse);
      a_raddr[static_cast<size_t>(j)].push_back(
          m.signal("a_raddr_" + at(j, g) + "_q", xw, Sign::Unsigned, "slot group " + std::to_string(g) + " reads"));
      en.then_().assign(a_raddr[static_cast<size_t>(j)].back(), mux(reuse, ref, own));
      if (gws == 1) continue;
      auto& lane_roots = roots[static_cast<size_t>(g)];
      if (j == 0) {
        lane_roots.push_back(constant(srcw, 0));
        continue;
      }
      const Expr src = m.wire("src_" + at(j, g), constant(xw, j) - dist, "lane j - dist when the neighbour is in the beat");
      if (xw > srcw) m.unused(src.slice(xw - 1, srcw), "used only when the neighbour is in the beat: below GATHER_W");
      const Expr root = m.wire("root_" + at(j, g),
                               mux(reuse && dist <= constant(xw, j), select(trunc(src, srcw), lane_roots, zero(srcw)),
                                   constant(srcw, static_cast<uint64_t>(j))),
                               "the lane whose partial lane " + js + " takes: its own, or its in-beat neighbour's root");
      lane_roots.push_back(root);
      const Expr a_root = m.signal("a_root_" + at(j, g) + "_q", srcw, Sign::Unsigned, "root lane in the beat");
      b_root[static_cast<size_t>(j)].push_back(m.signal("b_root_" + at(j, g) + "_q", srcw));
      en.then_().assign(a_root, root);
      en.then_().assign(b_root[static_cast<size_t>(j)].back(), a_root);
    }
  }
  std::reverse(reuse_bits.begin(), reuse_bits.end());
  en.then_().assign(a_reuse, concat(reuse_bits));

  // A copy of stage b lands at the edge that moves a later beat from stage a into stage b, so
  // that beat's read takes it from the copy (fwd_*), not from the memory.
  std::vector<std::vector<Expr>> copies(static_cast<size_t>(gws), std::vector<Expr>(static_cast<size_t>(G)));
  std::vector<std::vector<std::vector<Expr>>> fwd(static_cast<size_t>(gws),
                                                  std::vector<std::vector<Expr>>(static_cast<size_t>(G)));
  for (int j = 0; j < gws; ++j)
    for (int g = 0; g < G; ++g) {
      copies[static_cast<size_t>(j)][static_cast<size_t>(g)] =
          m.wire("copy_" + at(j, g), gather_en && b_valid[j] && b_reuse[j * G + g],
                 "lane " + std::to_string(j) + " writes its resolved partial of group " + std::to_string(g));
      for (int k = 0; k < gws; ++k)
        fwd[static_cast<size_t>(j)][static_cast<size_t>(g)].push_back(
            m.wire("fwd_" + at(j, g) + "_from" + std::to_string(k),
                   b_valid[k] && b_reuse[k * G + g] &&
                       a_raddr[static_cast<size_t>(j)][static_cast<size_t>(g)] == b_slot[static_cast<size_t>(k)]));
    }

  std::vector<std::vector<std::vector<Expr>>> terms(static_cast<size_t>(gws),
                                                    std::vector<std::vector<Expr>>(static_cast<size_t>(cols)));
  for (int g = 0; g < G; ++g) {
    const int s = g % segs, kt = g / segs;
    for (int cc = 0; cc < cols; ++cc) {
      const int tap = s * cols + cc;
      const std::string name = std::to_string(g) + "_" + std::to_string(cc);
      // The tap of segment s carries group kt*SEGS + s, kt from its tag.
      const Expr mine = c.max_kt() == 1 ? bit(true)
                                        : tap_tag.slice(tap * tagw + xw + ktw - 1, tap * tagw + xw) ==
                                              constant(ktw, static_cast<uint64_t>(kt));
      std::vector<Connection> conns = {
          {"clk_i", clk},
          {"we0_i", m.wire("tap_here_" + name, mine && tap_valid[tap],
                           "a partial of group " + std::to_string(g) + " arrives at column " + std::to_string(cc))},
          {"waddr0_i", tap_tag.slice(tap * tagw + xw - 1, tap * tagw)},
          {"wdata0_i", tap_psum.slice((tap + 1) * pw - 1, tap * pw)}};
      // Stage b's partials and their resolution: each lane takes its root lane's read (its own, or
      // that of the lane its chain through the beat ends at).
      std::vector<Expr> held, reads, resolved;
      for (int j = 0; j < gws; ++j) {
        const std::string jn = name + lane_sfx(j);
        const std::string rs = gws > 1 ? std::to_string(j) : "";
        reads.push_back(m.signal("slot_" + jn, pw));
        conns.push_back({"raddr" + rs + "_i", a_raddr[static_cast<size_t>(j)][static_cast<size_t>(g)]});
        conns.push_back({"rdata" + rs + "_o", reads.back()});
        held.push_back(m.signal("b_partial_" + jn + "_q", pw));
        if (j == 0) {
          resolved.push_back(held.back());
          continue;
        }
        resolved.push_back(m.wire("resolved_" + jn, select(b_root[static_cast<size_t>(j)][static_cast<size_t>(g)], held, zero(pw)),
                                  "the read of lane " + std::to_string(j) + "'s root lane"));
      }
      for (int j = 0; j < gws; ++j) {
        Expr next = reads[static_cast<size_t>(j)];
        for (int k = gws - 1; k >= 0; --k)
          next = mux(fwd[static_cast<size_t>(j)][static_cast<size_t>(g)][static_cast<size_t>(k)],
                     resolved[static_cast<size_t>(k)], next);
        en.then_().assign(held[static_cast<size_t>(j)], next);
        terms[static_cast<size_t>(j)][static_cast<size_t>(cc)].push_back(
            m.wire("term_" + name + lane_sfx(j),
                   mux(group_valid[g], sext(resolved[static_cast<size_t>(j)], sw), zero(sw))));
        const std::string ws = std::to_string(j + 1);
        conns.push_back({"we" + ws + "_i", copies[static_cast<size_t>(j)][static_cast<size_t>(g)]});
        conns.push_back({"waddr" + ws + "_i", b_slot[static_cast<size_t>(j)]});
        conns.push_back({"wdata" + ws + "_i", resolved[static_cast<size_t>(j)]});
      }
      m.instance(ring_sram, "u_ring_" + name, conns,
                 "ring of group " + std::to_string(g) + ", column " + std::to_string(cc));
    }
  }
  for (int s = G; s < segs; ++s)  // segments that never hold a group (MAX_K/GROUP_W < SEGS)
    m.unused(concat({tap_valid.slice((s + 1) * cols - 1, s * cols),
                     tap_tag.slice((s + 1) * cols * tagw - 1, s * cols * tagw),
                     tap_psum.slice((s + 1) * cols * pw - 1, s * cols * pw)}),
             "segment " + std::to_string(s) + " has no channel group in any configuration");
  std::vector<Expr> words;  // most significant first: lane GATHER_W-1, column COLS-1
  for (int j = gws - 1; j >= 0; --j)
    for (int cc = cols - 1; cc >= 0; --cc)
      words.push_back(carry_save_sum(m, terms[static_cast<size_t>(j)][static_cast<size_t>(cc)],
                                     std::to_string(cc) + lane_sfx(j)));
  const Expr out_q = m.signal("out_data_q", gws * cols * sw, Sign::Unsigned, "the sums, OUT_SUM_W bits each");
  en.then_().assign(out_q, concat(words));
  std::vector<Expr> out_words;  // most significant first, as words
  for (int w = gws * cols - 1; w >= 0; --w) out_words.push_back(sext(out_q.slice((w + 1) * sw - 1, w * sw), aw));
  m.assign(out, concat(out_words));
  return m;
}

vlog::Design RingMergeBlock::design(const HwConfig& c, int depth) {
  c.validate();
  std::vector<std::pair<std::string, std::string>> params = c.parameter_list();
  params.emplace_back("RING_DEPTH", std::to_string(depth));
  vlog::Design d(vlog::FileHeader{"kaleido gen " + version(), params});
  const int reads = c.gather_w, writes = 1 + c.gather_w;  // the taps, then a copy per lane
  d.add(SramBlock::generate(c, std::max(2, depth), c.partial_w(), reads, writes));
  d.add(generate(c, depth, d.module(SramBlock::name(std::max(2, depth), c.partial_w(), reads, writes))));
  d.check();
  return d;
}

}  // namespace kaleido::hw
