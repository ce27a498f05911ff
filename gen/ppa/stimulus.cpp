#include "ppa/stimulus.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::ppa {

// ---------------------------------------------------------------- stimuli

RandomStimulus::RandomStimulus(uint64_t seed, double toggle_probability, uint64_t reset_cycles, std::string clock_port,
                               std::string reset_port)
    : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull),
      seed_(seed),
      p_(toggle_probability),
      reset_cycles_(reset_cycles),
      clock_(std::move(clock_port)),
      reset_(std::move(reset_port)) {
  if (!(p_ >= 0 && p_ <= 1))
    throw ConfigError("toggle probability", std::to_string(p_), "must be between 0 and 1");
}

uint64_t RandomStimulus::next() {
  // splitmix64: small, seedable, good enough for stimulus bits.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string RandomStimulus::describe() const {
  std::ostringstream s;
  s << "random inputs (seed " << seed_ << "), each input bit flips with probability " << p_ << " per cycle; "
    << reset_ << " low for " << reset_cycles_ << " cycles";
  return s.str();
}

void RandomStimulus::drive(uint64_t cycle, InputDriver& in) {
  for (const std::string& port : in.input_ports()) {
    if (port == clock_) continue;
    if (port == reset_) {
      in.set(port, cycle < reset_cycles_ ? 0 : 1);
      continue;
    }
    const int w = in.width(port);
    for (int b = 0; b < w; ++b) {
      const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
      if (u < p_) in.set_bit(port, b, !in.get_bit(port, b));
    }
  }
}

VectorFileStimulus::VectorFileStimulus(const std::string& path) : path_(path) {
  std::ifstream in(path);
  if (!in) throw FileError(path, "cannot be read");
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    if (ports_.empty()) {
      std::string head;
      ss >> head;
      if (head != "ports:") throw FileError(path, "line " + std::to_string(line_no) + ": expected `ports: NAME ...`");
      for (std::string p; ss >> p;) ports_.push_back(p);
      if (ports_.empty()) throw FileError(path, "line " + std::to_string(line_no) + ": no port named");
      continue;
    }
    std::vector<std::string> row;
    for (std::string v; ss >> v;) row.push_back(v);
    if (row.size() != ports_.size())
      throw FileError(path, "line " + std::to_string(line_no) + ": " + std::to_string(row.size()) + " values for " +
                                std::to_string(ports_.size()) + " ports");
    for (const std::string& v : row)
      if (v.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw FileError(path, "line " + std::to_string(line_no) + ": \"" + v + "\" is not hexadecimal");
    rows_.push_back(std::move(row));
  }
  if (ports_.empty()) throw FileError(path, "has no `ports:` header");
}

std::string VectorFileStimulus::describe() const {
  return "input vectors from " + path_ + " (" + std::to_string(rows_.size()) + " cycles, repeated if shorter)";
}

void VectorFileStimulus::drive(uint64_t cycle, InputDriver& in) {
  if (rows_.empty()) return;
  const std::vector<std::string>& row = rows_[cycle % rows_.size()];
  for (size_t i = 0; i < ports_.size(); ++i) {
    const std::string& hex = row[i];
    const int w = in.width(ports_[i]);
    // Hex digits from the right: digit k holds bits 4k..4k+3.
    for (int b = 0; b < w; ++b) {
      const size_t digit = static_cast<size_t>(b / 4);
      bool v = false;
      if (digit < hex.size()) {
        const char ch = hex[hex.size() - 1 - digit];
        const int nib = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : (std::tolower(ch) - 'a' + 10);
        v = ((nib >> (b % 4)) & 1) != 0;
      }
      in.set_bit(ports_[i], b, v);
    }
  }
}

// ---------------------------------------------------------------- recording

namespace {

// Holds every input port's bits; what a stimulus sets is what gets written.
class RecordingDriver : public InputDriver {
 public:
  explicit RecordingDriver(const FlatNetlist& n) {
    for (const NetlistPort& p : n.ports) {
      if (!p.input) continue;
      index_[p.name] = names_.size();
      names_.push_back(p.name);
      bits_.emplace_back(p.nets.size(), 0);
    }
  }
  std::vector<std::string> input_ports() const override { return names_; }
  int width(const std::string& port) const override { return static_cast<int>(bits(port).size()); }
  void set(const std::string& port, uint64_t value) override {
    std::vector<uint8_t>& b = bits(port);
    for (size_t k = 0; k < b.size(); ++k) b[k] = k < 64 ? ((value >> k) & 1u) : 0;
  }
  void set_bit(const std::string& port, int bit, bool value) override { bits(port).at(checked(port, bit)) = value; }
  bool get_bit(const std::string& port, int bit) const override { return bits(port).at(checked(port, bit)) != 0; }

  std::string header() const {
    std::string h = "ports:";
    for (const std::string& n : names_) h += " " + n;
    return h + "\n";
  }
  void write_row(std::string& out) const {
    static const char* hex = "0123456789abcdef";
    for (size_t p = 0; p < bits_.size(); ++p) {
      const std::vector<uint8_t>& b = bits_[p];
      const size_t digits = std::max<size_t>(1, (b.size() + 3) / 4);
      if (p) out += ' ';
      for (size_t d = digits; d-- > 0;) {
        int nib = 0;
        for (size_t k = 0; k < 4 && 4 * d + k < b.size(); ++k) nib |= b[4 * d + k] << k;
        out += hex[nib];
      }
    }
    out += '\n';
  }

 private:
  size_t checked(const std::string& port, int bit) const {
    if (bit < 0 || static_cast<size_t>(bit) >= bits(port).size())
      throw Error("port `" + port + "` has no bit " + std::to_string(bit));
    return static_cast<size_t>(bit);
  }
  const std::vector<uint8_t>& bits(const std::string& port) const {
    auto it = index_.find(port);
    if (it == index_.end()) throw Error("the netlist has no input port `" + port + "`");
    return bits_[it->second];
  }
  std::vector<uint8_t>& bits(const std::string& port) {
    return const_cast<std::vector<uint8_t>&>(static_cast<const RecordingDriver&>(*this).bits(port));
  }
  std::vector<std::string> names_;
  std::vector<std::vector<uint8_t>> bits_;
  std::map<std::string, size_t> index_;
};

}  // namespace

void record_vectors(Stimulus& stimulus, const FlatNetlist& netlist, uint64_t cycles, const std::filesystem::path& path) {
  RecordingDriver d(netlist);
  std::string out = d.header();
  for (uint64_t c = 0; c < cycles; ++c) {
    stimulus.drive(c, d);
    d.write_row(out);
  }
  write_file_atomic(path, out);
}

}  // namespace kaleido::ppa
