// Sixteen memories (kld_sram_16x8_r2, black boxes in synthesis) whose read address comes from
// logic: one net per address bit drives 32 macro pins, the case separate_macro_pins is for.
module ppa_sram_fanout (
  input  wire       clk_i,
  input  wire       rst_ni,
  input  wire       we_i,
  input  wire [3:0] waddr_i,
  input  wire [7:0] wdata_i,
  input  wire [3:0] step_i,
  output wire [7:0] out_o
);
  reg  [3:0] addr_q;
  wire [3:0] addr_d = addr_q + step_i;
  wire [127:0] word0, word1;
  genvar k;
  generate
    for (k = 0; k < 16; k = k + 1) begin : g_mem
      kld_sram_16x8_r2 u_mem (
        .clk_i(clk_i),
        .we_i(we_i),
        .waddr_i(waddr_i),
        .wdata_i(wdata_i),
        .raddr0_i(addr_d),
        .rdata0_o(word0[k * 8 +: 8]),
        .raddr1_i(addr_d),
        .rdata1_o(word1[k * 8 +: 8])
      );
    end
  endgenerate
  reg [7:0] out_q;
  integer i;
  reg [7:0] acc;
  always @(*) begin
    acc = 8'd0;
    for (i = 0; i < 16; i = i + 1) acc = acc ^ word0[i * 8 +: 8] ^ word1[i * 8 +: 8];
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      addr_q <= 4'd0;
      out_q <= 8'd0;
    end else begin
      addr_q <= addr_d;
      out_q <= acc;
    end
  end
  assign out_o = out_q;
endmodule
