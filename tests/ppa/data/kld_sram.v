// Behavioural single-port SRAM for the PPA flow tests: 16 words x 8 bits,
// synchronous write, registered read of the old word. The flow keeps
// modules named kld_sram* out of logic synthesis and costs them with its
// SRAM model.
module kld_sram (
  input  wire       clk_i,
  input  wire       we_i,
  input  wire [3:0] addr_i,
  input  wire [7:0] wdata_i,
  output reg  [7:0] rdata_o
);
  reg [7:0] mem [0:15];
  always @(posedge clk_i) begin
    if (we_i) mem[addr_i] <= wdata_i;
    rdata_o <= mem[addr_i];
  end
endmodule
