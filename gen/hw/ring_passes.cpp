#include <string>
#include <vector>

#include "hw/blocks.hpp"

namespace kaleido::hw {

using namespace vlog;

Module RingPassesBlock::generate(const HwConfig& c, int words, int chunk, int list_w, const Module& front,
                                 const Module& issue) {
  check(words, chunk, list_w);
  const int G = c.max_groups();
  const int ew = RingListsBlock::entry_w(chunk, list_w), lw = RingListsBlock::len_w(chunk);
  const int ww = list_w * G * 2, walk_rows = RingFrontBlock::walk_words(chunk, list_w);
  const int walk_edges = RingCodesBlock::read_edges(walk_rows), S = RingFrontBlock::kWalkSlots, cb = clog2(2 * S);
  Module m("kld_ring_passes",
           "The window-bounded ring's pass engine so far (docs/hardware.md, \"The ring's passes, "
           "joined\"): the front end (kld_ring_front: decision codes, list builder) and the issue "
           "(kld_ring_issue) joined. Chunks whose decisions are written are asked for in order; each "
           "is built into the list buffer of its parity once the chunk two before has made its last "
           "read, and issued once built, so a chunk's lists build while the chunk before issues. Its "
           "words are kept in walk-buffer slot (its number mod 4), read by the gather's walk; a chunk "
           "is taken only when fewer than four chunks taken are still to walk");
  const Expr clk = m.input("clk_i", 1);
  const Expr rst_n = m.input("rst_ni", 1);
  const RingCodesBlock::DecisionPorts dec = RingCodesBlock::decision_ports(m, c, words, list_w);
  RingIssueBlock::OuterPorts outer = RingIssueBlock::OuterPorts::declare_pass_side(m, c);
  const Expr chunk_valid = m.input("chunk_valid_i", 1, Sign::Unsigned, "a chunk's decisions are written: issue it");
  const Expr chunk_ready = m.output("chunk_ready_o", 1, Sign::Unsigned,
                                    "it is taken at this edge (its build begins)");
  const RingCodesBlock::ChunkWordPorts in = RingCodesBlock::ChunkWordPorts::declare(m, "chunk", false, words, chunk,
                                                                                    list_w);
  outer.declare_beat(m, c, chunk, list_w);
  const Expr walk_row = m.input("walk_row_i", clog2(walk_rows), Sign::Unsigned,
                                "the walk buffer's row read: chunk n's word i at (n mod 4)*" +
                                    std::to_string(RingListsBlock::rows(chunk, list_w)) + " + i");
  const Expr walk_code = m.output("walk_code_o", ww, Sign::Unsigned,
                                  "its codes " + std::to_string(walk_edges) + (walk_edges == 1 ? " edge" : " edges") +
                                      " after its row: lane i, group g at (i*G + g)*2");
  const Expr walked =
      m.input("walked_i", 1, Sign::Unsigned,
              "the walk has read the oldest unwalked chunk's last word: its slot is free after this edge");

  // Chunks counted mod 4 (at most two are between a build's take and the end of their issue):
  // builds taken and done, chunks taken by the issue and done issuing; builds taken and chunks
  // walked mod 8 (at most four chunks taken are still to walk).
  const Expr builds_taken_q = m.signal("builds_taken_q", cb, Sign::Unsigned, "builds taken (mod 8)");
  const Expr walks_done_q = m.signal("walks_done_q", cb, Sign::Unsigned, "chunks walked (mod 8)");
  const Expr builds_done_q = m.signal("builds_done_q", 2, Sign::Unsigned, "builds done (mod 4)");
  const Expr issues_taken_q = m.signal("issues_taken_q", 2, Sign::Unsigned, "chunks the issue has taken (mod 4)");
  const Expr issues_done_q = m.signal("issues_done_q", 2, Sign::Unsigned, "chunks that made their last read (mod 4)");
  const Expr build_ready = m.signal("build_ready", 1);
  const Expr built = m.signal("built", 1);
  const Expr issue_ready = m.signal("issue_ready", 1);
  const Expr issue_done = m.signal("issue_done", 1);
  const Expr buffer_free =
      m.wire("buffer_free", (builds_taken_q.slice(1, 0) - issues_done_q) != constant(2, 2) || issue_done,
             "the next build's buffer holds no chunk still to issue");
  const Expr slot_free = m.wire("slot_free", (builds_taken_q - walks_done_q) != constant(cb, static_cast<uint64_t>(S)),
                                "the next build's walk-buffer slot holds no chunk still to walk");
  const Expr room = m.wire("room", buffer_free && slot_free, "the next build has its list buffer and walk slot");
  m.assign(chunk_ready, build_ready && room);
  const Expr build_valid = m.wire("build_valid", chunk_valid && room, "the chunk's build is asked for");
  const Expr build_take = m.wire("build_take", build_valid && build_ready, "the front end takes it at this edge");
  const Expr waiting = m.wire("waiting", built || builds_done_q != issues_taken_q, "a built chunk waits for the issue");
  const Expr issue_take = m.wire("issue_take", waiting && issue_ready, "the issue takes the oldest built chunk");
  Always& count = m.always_ff(clk, rst_n, "the chunks' counts");
  count.flop(builds_taken_q, mux(build_take, builds_taken_q + constant(cb, 1), builds_taken_q), 0);
  count.flop(walks_done_q, mux(walked, walks_done_q + constant(cb, 1), walks_done_q), 0);
  count.flop(builds_done_q, mux(built, builds_done_q + constant(2, 1), builds_done_q), 0);
  count.flop(issues_taken_q, mux(issue_take, issues_taken_q + constant(2, 1), issues_taken_q), 0);
  count.flop(issues_done_q, mux(issue_done, issues_done_q + constant(2, 1), issues_done_q), 0);

  const Expr rd_buf = m.signal("rd_buf", 1), rd_index = m.signal("rd_index", G * ew);
  const Expr rd_entry = m.signal("rd_entry", G * ew), len = m.signal("len", 2 * G * lw);
  const Expr slot = builds_taken_q.slice(clog2(S) - 1, 0);  // the count's low bits: chunk n to slot n mod 4
  std::vector<Connection> front_ports = {{"build_valid_i", build_valid}, {"build_ready_o", build_ready}};
  for (const std::vector<Connection>& part : {in.connect("build", "_i"),
                                              std::vector<Connection>{{"build_buf_i", builds_taken_q[0]},
                                                                      {"build_slot_i", slot},
                                                                      {"built_o", built},
                                                                      {"rd_buf_i", rd_buf},
                                                                      {"rd_index_i", rd_index},
                                                                      {"rd_entry_o", rd_entry},
                                                                      {"len_o", len},
                                                                      {"walk_row_i", walk_row},
                                                                      {"walk_code_o", walk_code}}})
    front_ports.insert(front_ports.end(), part.begin(), part.end());
  m.instance(front, "u_front", dec.connect({{"clk_i", clk}, {"rst_ni", rst_n}}, front_ports),
             "decision codes and the chunks' compute lists");
  std::vector<Connection> issue_ports = {{"clk_i", clk}, {"rst_ni", rst_n}};
  for (const std::vector<Connection>& part : {outer.pass_side(),
                                              std::vector<Connection>{{"chunk_valid_i", waiting},
                                                                      {"chunk_buf_i", issues_taken_q[0]},
                                                                      {"chunk_ready_o", issue_ready},
                                                                      {"chunk_done_o", issue_done},
                                                                      {"len_i", len},
                                                                      {"rd_buf_o", rd_buf},
                                                                      {"rd_index_o", rd_index},
                                                                      {"rd_entry_i", rd_entry}},
                                              outer.beat()})
    issue_ports.insert(issue_ports.end(), part.begin(), part.end());
  m.instance(issue, "u_issue", issue_ports, "the passes' issue from the built lists");
  return m;
}

void RingPassesBlock::add(vlog::Design& d, const HwConfig& c, int words, int chunk, int list_w) {
  RingFrontBlock::add(d, c, words, chunk, list_w);
  d.add(RingIssueBlock::generate(c, chunk, list_w));
  d.add(generate(c, words, chunk, list_w, d.module("kld_ring_front"), d.module("kld_ring_issue")));
}

vlog::Design RingPassesBlock::design(const HwConfig& c, int words, int chunk, int list_w) {
  vlog::Design d = empty_design(c, RingFrontBlock::plan_params(words, chunk, list_w));
  add(d, c, words, chunk, list_w);
  d.check();
  return d;
}

}  // namespace kaleido::hw
