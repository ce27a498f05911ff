// The register block of a top, built from the register map (regmap.hpp): one
// flop per RW field, written while `write` is high at its address; a pulse per
// W1 field; and the read mux over every register the top implements. The top
// supplies each RO field's value (status bits, counters) before finish().
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hw/regmap.hpp"
#include "vlog/module.hpp"

namespace kaleido::hw {

class RegisterBlock {
 public:
  enum class Top { Full, Plain };  // kld_top: every field; kld_plain_top: the fields marked plain
  struct Bus {
    vlog::Expr clk, rst_n;
    vlog::Expr valid;  // reg_valid_i
    vlog::Expr addr;   // reg_addr_i
    vlog::Expr wdata;  // reg_wdata_i
    vlog::Expr rdata;  // reg_rdata_o
  };
  // `write`: a register write this cycle that may change configuration (the top decides: idle only).
  RegisterBlock(vlog::Module& m, const HwConfig& c, Top top, const Bus& bus, const vlog::Expr& write);

  // The flop of an RW field (element g of a per-group register).
  const vlog::Expr& q(const std::string& reg, const std::string& field = "VALUE", int g = 0) const;
  // The value an RW field's flop takes at the next clock edge (the write data when written now),
  // as a wire named after the flop (<field signal>_next), made on the first request.
  const vlog::Expr& next(const std::string& reg, const std::string& field = "VALUE", int g = 0);
  // A W1 field: high in the cycle it is written with 1.
  const vlog::Expr& pulse(const std::string& reg, const std::string& field) const;
  // A field's bits of the write data: the value being written this cycle.
  vlog::Expr written(const std::string& reg, const std::string& field) const;
  // The value an RO field reads (at most the field's width; zero-extended).
  void read(const std::string& reg, const std::string& field, const vlog::Expr& value, int g = 0);
  void read(const std::string& reg, const vlog::Expr& value, int g = 0) { read(reg, "VALUE", value, g); }
  // A counter of up to 64 bits as its two registers <base>_LO and <base>_HI.
  void read_wide(const std::string& base, const vlog::Expr& value);
  // The read mux (reg_rdata_o is 0 unless reg_valid_i); every RO field must have its value by now.
  void finish();

 private:
  bool implemented(const RegField& f) const { return top_ == Top::Full || f.plain; }
  const Register& reg(const std::string& name) const;
  static std::string key(const std::string& reg, const std::string& field, int g);

  vlog::Module& m_;
  Top top_;
  Bus bus_;
  int addr_w_;
  std::vector<Register> map_;
  std::map<std::string, vlog::Expr> values_;  // RW flops, W1 pulses and RO values, by key()
  std::map<std::string, vlog::Expr> next_;    // RW flops' next values, by key()
  std::map<std::string, std::string> names_;  // RW flops' signal names without _q, by key()
  std::map<std::string, vlog::Expr> next_wires_;  // next() results, by key()
};

}  // namespace kaleido::hw
