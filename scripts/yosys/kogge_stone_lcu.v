// Kaleido's carry unit for Yosys's `$lcu` cell (the carries of every `$alu`: adders, subtractors,
// comparators), mapped before Yosys's own Brent-Kung `_90_lcu`: techmap tries the modules that
// match a cell in name order, so `_80_` comes first. Kogge-Stone: ceil(log2 WIDTH) levels, at level l
// every bit combines its (generate, propagate) pair with that of the bit 2^l below it; about half
// the depth of Brent-Kung's 2 log2 WIDTH - 1 levels, for more AND-OR cells. Used by the `delay-ks`
// synthesis recipe (gen/ppa/yosys_flow.cpp); `kaleido equiv` proves each mapped module against
// Yosys's coarse $alu, so a wrong carry here fails there.
(* techmap_celltype = "$lcu" *)
module _80_kld_lcu_kogge_stone (P, G, CI, CO);
  parameter WIDTH = 2;
  localparam LEVELS = (WIDTH > 1) ? $clog2(WIDTH) : 1;

  (* force_downto *) input [WIDTH-1:0] P;
  (* force_downto *) input [WIDTH-1:0] G;
  input CI;
  (* force_downto *) output [WIDTH-1:0] CO;

  wire [1023:0] _TECHMAP_DO_ = "proc; opt -fast";

  // Row l holds the (generate, propagate) pairs after l levels; bit i of the last row spans bits
  // 0..i, so its generate is the carry out of bit i.
  (* force_downto *) wire [WIDTH-1:0] gen_row [0:LEVELS];
  (* force_downto *) wire [WIDTH-1:0] prop_row [0:LEVELS];
  assign gen_row[0][0] = G[0] | (P[0] & CI);
  assign prop_row[0] = P;
  genvar level, i;
  generate
    if (WIDTH > 1) begin : g_upper
      assign gen_row[0][WIDTH-1:1] = G[WIDTH-1:1];
    end
    for (level = 0; level < LEVELS; level = level + 1) begin : g_level
      for (i = 0; i < WIDTH; i = i + 1) begin : g_bit
        if (i >= (1 << level)) begin : g_combine
          assign gen_row[level+1][i] = gen_row[level][i]
                                       | (prop_row[level][i] & gen_row[level][i-(1<<level)]);
          assign prop_row[level+1][i] = prop_row[level][i] & prop_row[level][i-(1<<level)];
        end else begin : g_pass
          assign gen_row[level+1][i] = gen_row[level][i];
          assign prop_row[level+1][i] = prop_row[level][i];
        end
      end
    end
  endgenerate
  assign CO = gen_row[LEVELS];
endmodule
