// Test design for the PPA flow: a 2x2 grid of ppa_mac (hierarchy kept).
// Row r takes a_i[8r +: 8], column c takes b_i[8c +: 8].
module ppa_grid2x2 (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire         en_i,
  input  wire [15:0]  a_i,
  input  wire [15:0]  b_i,
  output wire [127:0] acc_o
);
  genvar r, c;
  generate
    for (r = 0; r < 2; r = r + 1) begin : g_r
      for (c = 0; c < 2; c = c + 1) begin : g_c
        ppa_mac u_pe (
          .clk_i (clk_i),
          .rst_ni(rst_ni),
          .en_i  (en_i),
          .a_i   (a_i[8*r +: 8]),
          .b_i   (b_i[8*c +: 8]),
          .acc_o (acc_o[32*(2*r+c) +: 32])
        );
      end
    end
  endgenerate
endmodule
