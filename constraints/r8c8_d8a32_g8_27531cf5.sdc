# Timing constraints for kld_top, written by kaleido 0.1.0 (kaleido_ppa).
# Units are the Liberty library's (kaleido_generic): time 1 ns, capacitance 1 pF.
# Input/output delays are absolute, so every check is independent of the period and
# Fmax = 1 / (period - worst setup slack).
create_clock -name clk -period 2 [get_ports clk_i]
set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk_i]]
set_output_delay 0 -clock clk [all_outputs]
set_driving_cell -lib_cell BUF_X1 -pin Y [delete_from_list [all_inputs] [get_ports clk_i]]
set_load 0.00384 [all_outputs]
# The asynchronous reset's buffer tree does not exist before physical design.
set_false_path -from [get_ports rst_ni]
