// Behavioural memory shaped like the generator's kld_sram_* modules: one
// synchronous write port and two asynchronous read ports, 16 words x 8 bits.
module kld_sram_16x8_r2 (
  input  wire       clk_i,
  input  wire       we_i,
  input  wire [3:0] waddr_i,
  input  wire [7:0] wdata_i,
  input  wire [3:0] raddr0_i,
  output wire [7:0] rdata0_o,
  input  wire [3:0] raddr1_i,
  output wire [7:0] rdata1_o
);
  reg [7:0] mem [0:15];
  always @(posedge clk_i) begin
    if (we_i) mem[waddr_i] <= wdata_i;
  end
  assign rdata0_o = mem[raddr0_i];
  assign rdata1_o = mem[raddr1_i];
endmodule
