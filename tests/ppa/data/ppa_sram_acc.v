// Test design for the PPA flow: a kld_sram feeding an 8-bit accumulator.
module ppa_sram_acc (
  input  wire       clk_i,
  input  wire       rst_ni,
  input  wire       we_i,
  input  wire [3:0] addr_i,
  input  wire [7:0] wdata_i,
  output wire [7:0] rdata_o,
  output reg  [7:0] sum_o
);
  wire [7:0] rdata;
  kld_sram u_mem (
    .clk_i  (clk_i),
    .we_i   (we_i),
    .addr_i (addr_i),
    .wdata_i(wdata_i),
    .rdata_o(rdata)
  );
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) sum_o <= 8'd0;
    else sum_o <= sum_o + rdata;
  end
  assign rdata_o = rdata;
endmodule
