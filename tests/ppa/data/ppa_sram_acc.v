// Test design for the PPA flow: two memories kept out of logic synthesis (a
// registered-read kld_sram and a two-read-port kld_sram_16x8_r2 with
// asynchronous reads) feeding an 8-bit accumulator. Both memories take the
// same writes; the second one is read at addr_i and at addr_i + 1.
module ppa_sram_acc (
  input  wire       clk_i,
  input  wire       rst_ni,
  input  wire       we_i,
  input  wire [3:0] addr_i,
  input  wire [7:0] wdata_i,
  output wire [7:0] rdata_o,
  output reg  [7:0] sum_o
);
  wire [7:0] rdata, rd0, rd1;
  kld_sram u_mem (
    .clk_i  (clk_i),
    .we_i   (we_i),
    .addr_i (addr_i),
    .wdata_i(wdata_i),
    .rdata_o(rdata)
  );
  kld_sram_16x8_r2 u_mem2 (
    .clk_i   (clk_i),
    .we_i    (we_i),
    .waddr_i (addr_i),
    .wdata_i (wdata_i),
    .raddr0_i(addr_i),
    .rdata0_o(rd0),
    .raddr1_i(addr_i + 4'd1),
    .rdata1_o(rd1)
  );
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) sum_o <= 8'd0;
    else sum_o <= sum_o + rdata + rd0 + rd1;
  end
  assign rdata_o = rdata;
endmodule
