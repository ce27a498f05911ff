// Test design for the synthesis recipes: registered adders, a subtractor and comparisons of
// several widths (1, 2, 3, 5, 17 and 24 bits: one-level, odd and non-power-of-two carry units),
// so that every `$alu` width class goes through the carry-unit mapping.
module ppa_adders (
  input  wire        clk_i,
  input  wire [23:0] a_i,
  input  wire [23:0] b_i,
  output reg  [24:0] sum24_o,
  output reg  [16:0] sum17_o,
  output reg  [4:0]  sum5_o,
  output reg  [2:0]  sum3_o,
  output reg  [1:0]  sum2_o,
  output reg         sum1_o,
  output reg  [23:0] diff24_o,
  output reg         less13_o,
  output reg         geq7_signed_o
);
  reg [23:0] a_q;
  reg [23:0] b_q;
  always @(posedge clk_i) begin
    a_q           <= a_i;
    b_q           <= b_i;
    sum24_o       <= {1'b0, a_q} + {1'b0, b_q};
    sum17_o       <= a_q[16:0] + b_q[16:0] + {16'd0, a_q[23]};
    sum5_o        <= a_q[4:0] + b_q[4:0];
    sum3_o        <= a_q[2:0] + b_q[2:0];
    sum2_o        <= a_q[1:0] + b_q[1:0];
    sum1_o        <= a_q[0] + b_q[0];
    diff24_o      <= a_q - b_q;
    less13_o      <= a_q[12:0] < b_q[12:0];
    geq7_signed_o <= $signed(a_q[6:0]) >= $signed(b_q[6:0]);
  end
endmodule
