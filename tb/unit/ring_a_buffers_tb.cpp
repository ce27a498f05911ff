// Block test of kld_ring_a_buffers: `iterations` chunks of 1 to CHUNK positions (every fifth of
// CHUNK), their A random, streamed LANE_GROUPS beats a position (beat p, lane l: group p*LANES + l)
// in stretches that offer a beat every cycle or one cycle in four, with garbage on the ports while
// no beat is offered and on the chunk's last flag before a position's last beat. A reader takes
// the chunks in the order they were written, each once the block reports it held whole, in
// stretches that read every cycle or one in three: 1 to 3 x its positions reads (random positions,
// k-tile, segments; a segment whose group is past G never reads) or none (a drop), and frees it
// with its last read or 1 to 6 cycles later; a free while none is held must be ignored. Every
// cycle checks wr_ready_o (a beat is taken unless two chunks are held) and chunks_o against the
// chunks held, and every segment's rd_valid_o and rd_a_o read_edges edges after the read: the
// group streamed (segment s, k-tile kt: group kt*SEGS + s of the position), or, while the segment
// does not read, its last read's. The expectation does not use the block's banks or words.
#include <deque>

#include "Vkld_ring_a_buffers.h"
#include "hw/blocks.hpp"
#include "unit_common.hpp"

namespace {

using kaleido::hw::RingABuffersBlock;
using namespace kld_unit;

struct ChunkA {
  int len = 0;
  std::vector<uint64_t> a;  // position p, group g at p * LANES * LANE_GROUPS + g
};

// A read as presented: per segment whether it reads and the A it must return.
struct Read {
  std::vector<bool> valid;
  std::vector<uint64_t> a;
};

int run(const Job& job) {
  const kaleido::hw::HwConfig& c = job.hw;
  const int L = c.det_lanes(), LG = c.lane_groups, S = c.segs(), G = c.max_groups(), KT = c.max_kt();
  const int gbits = c.group_w * c.data_w, chunk = job.raw.at("chunk").get<int>();
  const int pw = kaleido::clog2(chunk), ktw = kaleido::clog2(KT + 1), RE = RingABuffersBlock::read_edges(c, chunk);
  const int per_pos = L * LG;  // groups a position streams
  const uint64_t gmask = gbits >= 64 ? ~0ull : (1ull << gbits) - 1;
  auto sz = [](int i) { return static_cast<size_t>(i); };
  Vkld_ring_a_buffers dut;
  Clock<Vkld_ring_a_buffers> clock(dut);
  Checker chk(job);
  kaleido::Rng rng(job.seed);

  dut.rst_ni = 0;
  dut.wr_valid_i = 0;
  dut.free_i = 0;
  dut.rd_valid_i = 0;
  clock.edge();
  dut.rst_ni = 1;

  int64_t made = 0, stalls = 0, drops = 0, frees_with_read = 0, stray_frees = 0, reads_checked = 0, full_chunks = 0;
  ChunkA writing;
  int wpos = 0, wbeat = 0;
  auto next_chunk = [&] {
    writing = ChunkA();
    if (made == job.iterations) return;
    writing.len = made % 5 == 4 ? chunk : static_cast<int>(rng.range(1, chunk));
    full_chunks += writing.len == chunk;
    for (int i = 0; i < writing.len * per_pos; ++i) writing.a.push_back(rng.next() & gmask);
    wpos = wbeat = 0;
    ++made;
  };
  next_chunk();
  std::deque<ChunkA> held;  // chunks written whole, oldest first: the reader's
  // The reader's plan for the oldest chunk: reads left (-1: none drawn), whether the free comes
  // with the last read, the cycles to wait before a later free.
  int reads_left = -1, wait = 0;
  bool free_with_last = false;
  std::deque<Read> in_flight;
  std::vector<uint64_t> shown(sz(S), 0);  // each segment's last A read
  bool fast_writer = true, fast_reader = true;

  int drain = RE + 2;  // idle cycles at the end, for the last reads
  for (int64_t guard = 0; writing.len > 0 || !held.empty() || drain-- > 0; ++guard) {
    if (guard > 400 * (job.iterations + 1) * chunk) {
      chk.fail("the run did not end: " + std::to_string(held.size()) + " chunks held, " + std::to_string(made) +
               " streamed");
      break;
    }
    if (rng.range(0, 49) == 0) fast_writer = !fast_writer;
    if (rng.range(0, 49) == 0) fast_reader = !fast_reader;
    // The stream.
    const bool offer = writing.len > 0 && (fast_writer || rng.range(0, 3) == 0);
    dut.wr_valid_i = offer;
    for (int l = 0; l < L; ++l)
      set_bits(dut.wr_a_i, l * gbits, gbits,
               offer ? writing.a[sz(wpos * per_pos + wbeat * L + l)] : rng.next());
    dut.wr_chunk_last_i = offer && wbeat == LG - 1 ? wpos == writing.len - 1 : (rng.next() & 1);
    // The reader.
    Read rd{std::vector<bool>(sz(S), false), std::vector<uint64_t>(sz(S), 0)};
    bool free = false;
    if (held.empty()) {
      free = rng.range(0, 9) == 0;
      stray_frees += free;
    } else {
      const ChunkA& oldest = held.front();
      if (reads_left < 0) {
        reads_left = rng.range(0, 5) == 0 ? 0 : static_cast<int>(rng.range(1, 3 * oldest.len));
        drops += reads_left == 0;
        free_with_last = reads_left > 0 && rng.range(0, 1) == 0;
        wait = static_cast<int>(rng.range(reads_left > 0 ? 1 : 0, 6));
      }
      if (reads_left > 0 && (fast_reader || rng.range(0, 2) == 0)) {
        const int kt = static_cast<int>(rng.range(0, KT - 1));
        dut.rd_kt_i = kt;
        for (int s = 0; s < S; ++s) {
          const int g = kt * S + s, pos = static_cast<int>(rng.range(0, oldest.len - 1));
          rd.valid[sz(s)] = g < G && rng.range(0, 3) != 0;
          set_bits(dut.rd_pos_i, s * pw, pw, rd.valid[sz(s)] ? static_cast<uint64_t>(pos) : rng.next());
          if (rd.valid[sz(s)]) rd.a[sz(s)] = oldest.a[sz(pos * per_pos + g)];
        }
        --reads_left;
        free = reads_left == 0 && free_with_last;
        frees_with_read += free;
      } else if (reads_left == 0 && wait-- == 0) {
        free = true;
      }
    }
    uint64_t valid_bits = 0;
    for (int s = 0; s < S; ++s) valid_bits |= static_cast<uint64_t>(rd.valid[sz(s)]) << s;
    set_bits(dut.rd_valid_i, 0, S, valid_bits);
    if (valid_bits == 0) {
      dut.rd_kt_i = rng.next() & ((1ull << ktw) - 1);
      for (int s = 0; s < S; ++s) set_bits(dut.rd_pos_i, s * pw, pw, rng.next());
    }
    dut.free_i = free;
    in_flight.push_back(rd);
    clock.settle();
    const std::string at = "cycle " + std::to_string(clock.cycle());
    chk.equal(dut.wr_ready_o, held.size() < 2, at + " wr_ready_o");
    chk.equal(dut.chunks_o, static_cast<int64_t>(held.size()), at + " chunks_o");
    const size_t held_before = held.size();
    clock.edge();

    // The model at the edge: a free of the oldest, a beat taken unless two chunks were held.
    const bool took = offer && held_before < 2;
    stalls += offer && !took;
    if (free && held_before > 0) {
      held.pop_front();
      reads_left = -1;
    }
    if (took && ++wbeat == LG) {
      wbeat = 0;
      if (++wpos == writing.len) {
        held.push_back(writing);
        next_chunk();
      }
    }
    if (static_cast<int>(in_flight.size()) == RE) {
      const Read want = in_flight.front();
      in_flight.pop_front();
      for (int s = 0; s < S; ++s) {
        const std::string what = "cycle " + std::to_string(clock.cycle()) + " segment " + std::to_string(s);
        chk.equal(get_bits(dut.rd_valid_o, s, 1), want.valid[sz(s)], what + " rd_valid_o");
        if (want.valid[sz(s)]) {
          shown[sz(s)] = want.a[sz(s)];
          ++reads_checked;
        }
        chk.equal(static_cast<int64_t>(get_bits(dut.rd_a_o, s * gbits, gbits)), static_cast<int64_t>(shown[sz(s)]),
                  what + " rd_a_o");
      }
    }
  }
  for (const auto& [count, what] : {std::pair<int64_t, const char*>{stalls, "no beat waited for a free buffer"},
                                    {drops, "no chunk freed unread"},
                                    {frees_with_read, "no chunk freed with its last read"},
                                    {stray_frees, "no free while none was held"},
                                    {full_chunks, "no chunk of CHUNK positions"}})
    if (count == 0) chk.fail(what);
  dut.final();
  return chk.finish("kld_ring_a_buffers " + std::to_string(S) + " segment(s), " + std::to_string(L) + " lanes x " +
                    std::to_string(LG) + " group(s), G " + std::to_string(G) + ", CHUNK " + std::to_string(chunk) +
                    ", reads of " + std::to_string(RE) + " edges: " + std::to_string(made) + " chunks (" +
                    std::to_string(full_chunks) + " whole, " + std::to_string(drops) + " freed unread, " +
                    std::to_string(frees_with_read) + " freed with their last read), " + std::to_string(stalls) +
                    " beats waiting for a buffer, " + std::to_string(stray_frees) + " stray frees, " +
                    std::to_string(reads_checked) + " groups read, " + std::to_string(clock.cycle()) + " cycles");
}

}  // namespace

int main(int argc, char** argv) { return harness_main(argc, argv, run); }
