#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module ArrayBlock::generate_load_reg() {
  Module m("kld_load_reg",
           "One row's copy of the weight-load controls, a cycle after the weight loader: the loader's enable "
           "reaches one of these per row instead of every PE (hierarchical synthesis buffers no net across "
           "instances, and separate instances are copies Yosys cannot merge)");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr load = m.input("load_i", 1, Sign::Unsigned, "the loader shifts a row of weights");
  const Expr load_sel = m.input("load_sel_i", 1, Sign::Unsigned, "the buffer it shifts into");
  const Expr load_out = m.output("load_o", 1, Sign::Unsigned, "this row's PEs shift now");
  const Expr load_sel_out = m.output("load_sel_o", 1, Sign::Unsigned, "into this buffer");
  const Expr load_q = m.signal("load_q", 1), load_sel_q = m.signal("load_sel_q", 1);
  Always& ff = m.always_ff(clk, rst_n, "the controls of the previous cycle; the select holds between loads");
  ff.flop(load_q, load, 0);
  ff.flop(load_sel_q, mux(load, load_sel, load_sel_q), 0);
  m.assign(load_out, load_q);
  m.assign(load_sel_out, load_sel_q);
  return m;
}

Module ArrayBlock::generate(const HwConfig& c, const Module& pe, const Module& load_reg, bool bank_tag,
                            const std::string& name) {
  Module m(name,
           "ROWS x COLS weight-stationary array cut into segments of GROUP_W rows; each segment computes one "
           "channel group of its own token stream");
  const int rows = c.rows, cols = c.cols, dw = c.data_w, aw = c.psum_w(), gw = c.group_w, segs = c.segs();
  const int pw = c.partial_w();  // a segment's sum fits PARTIAL_W <= PSUM_W bits
  const int tw = tag_width(c, bank_tag);
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const Expr load = m.input("load_i", 1, Sign::Unsigned,
                            "every PE shifts the weight from above into a buffer, in the next cycle");
  const Expr load_sel = m.input("load_sel_i", 1, Sign::Unsigned, "the weight buffer being loaded");
  const Expr w_top = m.input("w_top_i", cols * dw, Sign::Unsigned, "weights entering the top row, column c at c*DATA_W");
  const Expr seg_valid = m.input("seg_valid_i", segs, Sign::Unsigned, "segment s issues a token this cycle");
  const Expr sel = m.input("sel_i", 1, Sign::Unsigned, "weight buffer of this cycle's issues");
  const char* tag_fields = bank_tag ? "{bank, k-tile, token}" : "{k-tile, token}";
  const Expr seg_tag = m.input("seg_tag_i", segs * tw, Sign::Unsigned,
                               std::string("tag ") + tag_fields + " of each segment's issue");
  const Expr seg_data = m.input("seg_data_i", segs * gw * dw, Sign::Unsigned,
                                "the group's GROUP_W channels of each segment's token");
  const Expr tap_valid = m.output("tap_valid_o", segs * cols, Sign::Unsigned, "segment s, column c at s*COLS+c");
  const Expr tap_tag = m.output("tap_tag_o", segs * cols * tw, Sign::Unsigned,
                                std::string("tag ") + tag_fields + " of each tap");
  const Expr tap_psum = m.output("tap_psum_o", segs * cols * pw, Sign::Unsigned, "partial sum of each tap (PARTIAL_W)");

  // Flattened nets between PEs: activations and MAC flags run east (COLS+1
  // per row, column 0 fed by the skew), weights and partial sums run south
  // (ROWS+1 per column, row 0 fed from the top).
  const Expr a_east = m.signal("a_east", rows * (cols + 1) * dw);
  const Expr mac_east = m.signal("mac_east", rows * (cols + 1));
  const Expr sel_east = m.signal("sel_east", rows * (cols + 1));
  const Expr w_south = m.signal("w_south", (rows + 1) * cols * dw);
  const Expr psum_south = m.signal("psum_south", (rows + 1) * cols * aw);
  const Expr psum_valid = m.signal("psum_valid", rows * cols);
  uint64_t seg_start_bits = 0;
  for (int r = 0; r < rows; r += gw) seg_start_bits |= uint64_t{1} << r;
  const Expr seg_start = m.wire("seg_start", constant(rows, seg_start_bits, Radix::Bin),
                                "rows that start a segment cut the partial-sum chain");

  // The PEs shift a cycle after load_i (a kld_load_reg per row), so the top row's weights wait a cycle too.
  const Expr w_top_q = m.signal("w_top_q", cols * dw, Sign::Unsigned, "w_top_i of the previous load cycle");
  m.always_ff(clk, rst_n, "the top row's weights, one cycle behind the loader")
      .flop(w_top_q, mux(load, w_top, w_top_q), 0);
  m.assign(w_south.slice(cols * dw - 1, 0), w_top_q);
  m.assign(psum_south.slice(cols * aw - 1, 0), zero(cols * aw), "the top of every column starts from zero");

  // Input skew per segment: channel j reaches row j of the segment j cycles
  // after issue. Stage k holds channels k..GROUP_W-1 of the word issued k
  // cycles ago, and holds still while no token flows (no toggling); the
  // weight buffer select bit travels with the word.
  for (int s = 0; s < segs; ++s) {
    const std::string sn = "s" + std::to_string(s);
    Expr prev_data = seg_data.slice((s + 1) * gw * dw - 1, s * gw * dw);
    Expr prev_valid = seg_valid[s], prev_sel = sel;
    for (int j = 0; j < gw; ++j) {
      const int r = s * gw + j;
      Expr data = prev_data, valid = prev_valid, word_sel = prev_sel;
      if (j > 0) {
        const int width = (gw - j) * dw;
        const Expr stage_q = m.signal("skew_" + sn + "_" + std::to_string(j) + "_q", width);
        const Expr valid_q = m.signal("skew_valid_" + sn + "_" + std::to_string(j) + "_q", 1);
        const Expr sel_q = m.signal("skew_sel_" + sn + "_" + std::to_string(j) + "_q", 1);
        Always& ff = m.always_ff(clk, rst_n);
        ff.flop(stage_q, mux(prev_valid, prev_data.slice(prev_data.width() - 1, dw), stage_q), 0);
        ff.flop(valid_q, prev_valid, 0);
        ff.flop(sel_q, mux(prev_valid, prev_sel, sel_q), 0);
        data = stage_q;
        valid = valid_q;
        word_sel = sel_q;
      }
      m.assign(a_east.slice((r * (cols + 1)) * dw + dw - 1, r * (cols + 1) * dw), data.slice(dw - 1, 0));
      m.assign(mac_east[r * (cols + 1)], valid);
      m.assign(sel_east[r * (cols + 1)], word_sel);
      prev_data = data;
      prev_valid = valid;
      prev_sel = word_sel;
    }
  }

  GenerateFor& grow = m.generate_for("g_row", "r", 0, rows);
  const Expr row_load = m.signal("row_load", rows, Sign::Unsigned, "row r's PEs shift now");
  const Expr row_load_sel = m.signal("row_load_sel", rows, Sign::Unsigned, "into this buffer");
  const Expr r = grow.var();
  grow.instance(load_reg, "u_load_reg",
                {{"clk_i", clk},
                 {"rst_ni", rst_n},
                 {"load_i", load},
                 {"load_sel_i", load_sel},
                 {"load_o", element(row_load, r)},
                 {"load_sel_o", element(row_load_sel, r)}});
  GenerateFor& gcol = grow.generate_for("g_col", "c", 0, cols);
  const Expr col = gcol.var();
  const Expr east = r * (cols + 1) + col;
  const Expr here = r * cols + col;
  const Expr below = (r + 1) * cols + col;
  gcol.instance(pe, "u_pe",
                {{"clk_i", clk},
                 {"rst_ni", rst_n},
                 {"load_i", element(row_load, r)},
                 {"load_sel_i", element(row_load_sel, r)},
                 {"mac_i", mac_east[east]},
                 {"sel_i", sel_east[east]},
                 {"seg_start_i", element(seg_start, r)},
                 {"a_i", as_signed(a_east.part(east * dw, dw))},
                 {"w_i", as_signed(w_south.part(here * dw, dw))},
                 {"psum_i", as_signed(psum_south.part(here * aw, aw))},
                 {"a_o", a_east.part((east + 1) * dw, dw)},
                 {"mac_o", mac_east[east + 1]},
                 {"sel_o", sel_east[east + 1]},
                 {"w_o", w_south.part(below * dw, dw)},
                 {"psum_o", psum_south.part(below * aw, aw)},
                 {"psum_valid_o", element(psum_valid, here)}});

  // Tags follow each segment's issues down the pipeline; the tap of column c
  // reads the tag issued latency(c) cycles earlier.
  const int chain = gw + cols - 1 + c.mul_pipe;
  for (int s = 0; s < segs; ++s) {
    const std::string sn = "s" + std::to_string(s);
    // Stage k holds the tag issued k+1 cycles ago.
    std::vector<Expr> stage;
    if (chain == 1) {
      const Expr q = m.signal("tag_" + sn + "_q", tw);
      m.always_ff_no_reset(clk, "tags need no reset: the valid bits qualify them")
          .assign(q, seg_tag.slice((s + 1) * tw - 1, s * tw));
      stage.push_back(q);
    } else {
      const Memory tags = m.memory("tag_" + sn + "_q", tw, chain);
      Block& shift = m.always_ff_no_reset(clk, "tags need no reset: the valid bits qualify them");
      const int aw_idx = clog2(chain);
      shift.assign(tags[constant(aw_idx, 0)], seg_tag.slice((s + 1) * tw - 1, s * tw));
      for (int k = 1; k < chain; ++k)
        shift.assign(tags[constant(aw_idx, static_cast<uint64_t>(k))], tags[constant(aw_idx, static_cast<uint64_t>(k - 1))]);
      for (int k = 0; k < chain; ++k) stage.push_back(tags[constant(aw_idx, static_cast<uint64_t>(k))]);
    }
    const int end_row = s * gw + gw - 1;
    for (int cc = 0; cc < cols; ++cc) {
      const int tap = s * cols + cc;
      m.assign(tap_valid[tap], psum_valid[end_row * cols + cc]);
      m.assign(tap_tag.slice((tap + 1) * tw - 1, tap * tw), stage[static_cast<size_t>(latency(c, cc) - 1)]);
    }
    for (int cc = 0; cc < cols; ++cc) {
      const int at = ((end_row + 1) * cols + cc) * aw;
      m.assign(tap_psum.slice((s * cols + cc + 1) * pw - 1, (s * cols + cc) * pw), psum_south.slice(at + pw - 1, at));
    }
  }
  std::vector<Expr> edge_a, edge_mac, edge_sel;
  for (int rr = 0; rr < rows; ++rr) {
    edge_a.push_back(a_east.slice((rr * (cols + 1) + cols + 1) * dw - 1, (rr * (cols + 1) + cols) * dw));
    edge_mac.push_back(mac_east[rr * (cols + 1) + cols]);
    edge_sel.push_back(sel_east[rr * (cols + 1) + cols]);
  }
  m.unused(concat(edge_a), "activations leaving the right edge of the array");
  m.unused(concat(edge_mac), "MAC flags leaving the right edge of the array");
  m.unused(concat(edge_sel), "buffer selects leaving the right edge of the array");
  m.unused(w_south.slice((rows + 1) * cols * dw - 1, rows * cols * dw), "weights leaving the bottom row");
  if (pw < aw) {
    std::vector<Expr> sign_copies;
    for (int cc = cols - 1; cc >= 0; --cc)
      sign_copies.push_back(psum_south.slice((rows * cols + cc + 1) * aw - 1, (rows * cols + cc) * aw + pw));
    m.unused(concat(sign_copies), "a segment's sum fits PARTIAL_W bits: the bottom row's upper bits copy its sign");
  }
  std::vector<Expr> inner_valid;
  for (int rr = 0; rr < rows; ++rr)
    if (rr % gw != gw - 1) inner_valid.push_back(psum_valid.slice((rr + 1) * cols - 1, rr * cols));
  if (!inner_valid.empty()) m.unused(concat(inner_valid), "partial-sum valid flags inside a segment (no tap there)");
  return m;
}

}  // namespace kaleido::hw
