#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

void RingFrontBlock::check(int words, int chunk, int list_w) {
  RingCodesBlock::check(words, list_w);
  RingListsBlock::check(chunk, list_w);
}

Module RingFrontBlock::generate(const HwConfig& c, int words, int chunk, int list_w, const Module& codes,
                                const Module& lists, const Module& walk_sram) {
  check(words, chunk, list_w);
  const int G = c.max_groups(), LW = list_w;
  const int rw = clog2(words), ww = LW * G * 2, R = RingCodesBlock::read_edges(words);
  const int nw = clog2(RingListsBlock::rows(chunk, LW) + 1), ew = RingListsBlock::entry_w(chunk, LW);
  const int lw = RingListsBlock::len_w(chunk), K = RingListsBlock::kReadyEdges;
  const int wpc = RingListsBlock::rows(chunk, LW), walk_rows = walk_words(chunk, LW), wb = clog2(walk_rows);
  const int sb = clog2(kWalkSlots), walk_edges = RingCodesBlock::read_edges(walk_rows);
  Module m("kld_ring_front",
           "Front end of the window-bounded ring (docs/hardware.md): the detector's decisions into the "
           "code memory (kld_ring_codes), and, for each build asked for, a chunk's code words read a "
           "word a cycle from its first row into the list builder (kld_ring_lists), which makes the "
           "chunk's compute lists in the buffer asked for. The decisions are stored once; a chunk's "
           "lists are built again for every B tile. The words a build reads are also kept in a walk "
           "buffer of four chunks' slots, which the gather's walk reads (the code memory has one read "
           "port)");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const RingCodesBlock::DecisionPorts dec = RingCodesBlock::decision_ports(m, c, words, list_w);
  const Expr build_valid = m.input("build_valid_i", 1, Sign::Unsigned, "a chunk's lists are asked for");
  const Expr build_ready = m.output("build_ready_o", 1, Sign::Unsigned,
                                    "a build is taken at this edge (none in progress, or its last word read now)");
  const RingCodesBlock::ChunkWordPorts build = RingCodesBlock::ChunkWordPorts::declare(m, "build", false, words, chunk,
                                                                                       list_w);
  const Expr build_buf = m.input("build_buf_i", 1, Sign::Unsigned, "the list buffer the lists go to");
  const Expr build_slot = m.input("build_slot_i", sb, Sign::Unsigned,
                                  "the walk-buffer slot its words are kept in (one walked or never used)");
  const Expr built = m.output("built_o", 1, Sign::Unsigned,
                              "the last build's lists and lengths read from this cycle on (RingFrontBlock::built_edges "
                              "edges after it was taken)");
  const Expr rd_buf = m.input("rd_buf_i", 1, Sign::Unsigned, "the list buffer the reads address");
  const Expr rd_index = m.input("rd_index_i", G * ew, Sign::Unsigned, "entry of group g's list at g*ENTRY_W");
  const Expr rd_entry = m.output("rd_entry_o", G * ew, Sign::Unsigned, "the entries read, a cycle after their index");
  const Expr len_out =
      m.output("len_o", 2 * G * lw, Sign::Unsigned, "length of buffer b's list of group g at (b*G + g)*LEN_W");
  const Expr walk_row = m.input("walk_row_i", wb, Sign::Unsigned,
                                "the walk buffer's row read: slot s's word i at s*" + std::to_string(wpc) + " + i");
  const Expr walk_code = m.output("walk_code_o", ww, Sign::Unsigned,
                                  "its codes " + std::to_string(walk_edges) + (walk_edges == 1 ? " edge" : " edges") +
                                      " after its row, as rd_code_o's");

  // The reader: the words left of the build in progress, and the next one's row.
  const Expr left = m.signal("left_q", nw, Sign::Unsigned, "words of the build still to read");
  const Expr row = m.signal("row_q", rw, Sign::Unsigned, "the row of the next word read");
  const Expr first = m.signal("first_q", 1, Sign::Unsigned, "the next word read is its chunk's first");
  const Expr lanes = m.signal("lanes_q", LW, Sign::Unsigned, "lanes of the build's last word");
  const Expr buf = m.signal("buf_q", 1, Sign::Unsigned, "the build's list buffer");
  const Expr walk_at = m.signal("walk_at_q", wb, Sign::Unsigned, "the walk-buffer row the next word read is kept at");
  const Expr reading = m.wire("reading", left != zero(nw), "a word is read this cycle");
  const Expr last = m.wire("last", left == constant(nw, 1), "the word read is its build's last");
  m.assign(build_ready, !reading || last);
  const Expr take = m.wire("take", build_valid && build_ready, "a build is taken at this edge");
  const Expr next_row = mux(row == constant(rw, static_cast<uint64_t>(words - 1)), zero(rw),
                            row + constant(rw, 1));
  Always& reader = m.always_ff(clk, rst_n, "the reader: a word a cycle, rows round the memory");
  reader.flop(left, mux(take, build.words, mux(reading, left - constant(nw, 1), left)), 0);
  reader.flop(row, mux(take, build.row, mux(reading, next_row, row)), 0);
  reader.flop(first, mux(take, bit(true), mux(reading, bit(false), first)), 0);
  reader.flop(lanes, mux(take, build.lanes, lanes), 0);
  reader.flop(buf, mux(take, build_buf, buf), 0);
  std::vector<Expr> slot_rows;
  for (int s = 0; s < kWalkSlots; ++s) slot_rows.push_back(constant(wb, static_cast<uint64_t>(s * wpc)));
  reader.flop(walk_at,
              mux(take, select(build_slot, slot_rows, zero(wb)), mux(reading, walk_at + constant(wb, 1), walk_at)), 0);

  // The word's place in its chunk travels beside its read, R edges, to the list builder and the
  // walk buffer.
  const int side_w = wb + 4 + LW;  // walk-buffer row, valid, first, last, buffer, lanes
  const Expr side_d = concat({walk_at, reading, first, last, buf, mux(last, lanes, ones(LW))});
  std::vector<Expr> side;
  for (int s = 0; s < R; ++s) {
    side.push_back(
        m.signal("side_" + std::to_string(s) + "_q", side_w, Sign::Unsigned,
                 s == 0 ? "a word read s + 1 edges ago: {walk row, valid, first, last, buffer, lanes}" : ""));
    reader.flop(side.back(), s == 0 ? side_d : side[static_cast<size_t>(s - 1)], 0);
  }
  const Expr word = side.back();
  const Expr word_valid = m.wire("word_valid", word[LW + 3], "the code word out of the memory enters the lists");
  const Expr word_last = m.wire("word_last", word[LW + 1], "it is its build's last");
  // The build is readable K edges after its last word enters the list builder.
  std::vector<Expr> done;
  for (int s = 0; s <= K; ++s) {
    done.push_back(m.signal("done_" + std::to_string(s) + "_q", 1, Sign::Unsigned,
                            s == 0 ? "the build's last word entered the lists s + 1 edges ago" : ""));
    reader.flop(done.back(), s == 0 ? (word_valid && word_last) : done[static_cast<size_t>(s - 1)], 0);
  }
  m.assign(built, done.back());

  const Expr rd_code = m.signal("rd_code", ww, Sign::Unsigned, "the code word read");
  m.instance(codes, "u_codes",
             dec.connect({{"clk_i", clk}, {"rst_ni", rst_n}}, {{"rd_row_i", row}, {"rd_code_o", rd_code}}),
             "the decision codes");
  m.instance(lists, "u_lists",
             {{"clk_i", clk},
              {"rst_ni", rst_n},
              {"code_valid_i", word_valid},
              {"code_first_i", word[LW + 2]},
              {"code_buf_i", word[LW]},
              {"code_lanes_i", word.slice(LW - 1, 0)},
              {"code_i", rd_code},
              {"rd_buf_i", rd_buf},
              {"rd_index_i", rd_index},
              {"rd_entry_o", rd_entry},
              {"len_o", len_out}},
             "the compute lists of the chunks built");
  RingCodesBlock::word_memory(m, walk_sram, walk_rows, {"walk", "walk_", "the code words of the chunks built"}, clk,
                              word_valid, word.slice(side_w - 1, LW + 4), rd_code, walk_row, walk_code);
  return m;
}

std::vector<std::pair<std::string, std::string>> RingFrontBlock::plan_params(int words, int chunk, int list_w) {
  return {{"CODE_WORDS", std::to_string(words)}, {"CHUNK", std::to_string(chunk)}, {"LIST_W", std::to_string(list_w)}};
}

vlog::Design RingFrontBlock::design(const HwConfig& c, int words, int chunk, int list_w) {
  check(words, chunk, list_w);
  vlog::Design d = empty_design(c, plan_params(words, chunk, list_w));
  add(d, c, words, chunk, list_w);
  d.check();
  return d;
}

void RingFrontBlock::add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w) {
  check(words, chunk, list_w);
  const int ww = list_w * c.max_groups() * 2, rows = RingCodesBlock::part_rows(words);
  const int depth = 2 * RingListsBlock::rows(chunk, list_w), ew = RingListsBlock::entry_w(chunk, list_w);
  d.add(RingCodesBlock::generate(c, words, list_w, SramBlock::add(d, c, rows, ww, 1, 1, true)));
  d.add(RingListsBlock::generate(c, chunk, list_w, SramBlock::add(d, c, depth, ew, 1, 1, true)));
  const int walk_rows = RingCodesBlock::part_rows(walk_words(chunk, list_w));
  const vlog::Module& walk_sram = SramBlock::add(d, c, walk_rows, ww, 1, 1, true);
  d.add(generate(c, words, chunk, list_w, d.module("kld_ring_codes"), d.module("kld_ring_lists"), walk_sram));
}

}  // namespace kaleido::hw
