// Test design for the PPA flow: a registered signed 8x8 multiply-accumulate
// with a 32-bit accumulator (inputs registered, accumulate when en_i).
module ppa_mac (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire               en_i,
  input  wire signed [7:0]  a_i,
  input  wire signed [7:0]  b_i,
  output wire signed [31:0] acc_o
);
  reg signed [7:0]  a_q, b_q;
  reg               en_q;
  reg signed [31:0] acc_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      a_q   <= 8'sd0;
      b_q   <= 8'sd0;
      en_q  <= 1'b0;
      acc_q <= 32'sd0;
    end else begin
      a_q  <= a_i;
      b_q  <= b_i;
      en_q <= en_i;
      if (en_q) acc_q <= acc_q + a_q * b_q;
    end
  end
  assign acc_o = acc_q;
endmodule
