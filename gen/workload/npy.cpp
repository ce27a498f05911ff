#include "workload/npy.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::workload {

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

namespace {

float half_to_float(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? std::nan("") : INFINITY;
  else
    v = std::ldexp(mant + 1024, exp - 25);
  return static_cast<float>(sign ? -v : v);
}

// The value of `key` in the header dictionary, as text.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) throw FileError(path, "npy header has no '" + key + "'");
  auto p = header.find(':', k);
  if (p == std::string::npos) throw FileError(path, "npy header is malformed near '" + key + "'");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p < header.size() && header[p] == '(') return header.substr(p, header.find(')', p) - p + 1);
  if (p < header.size() && header[p] == '\'') return header.substr(p + 1, header.find('\'', p + 1) - p - 1);
  const auto e = header.find_first_of(",}", p);
  return header.substr(p, e - p);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw FileError(path, "not a NumPy .npy file (the signature is missing)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen = 0, hstart = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw FileError(path, "npy header is truncated");
    for (int i = 3; i >= 0; --i) hlen = hlen << 8 | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    hstart = 12;
  } else {
    throw FileError(path, "npy format version " + std::to_string(major) + " is not supported");
  }
  if (hstart + hlen > bytes.size()) throw FileError(path, "npy header is truncated");
  const std::string header = bytes.substr(hstart, hlen);
  NpyArray a;
  a.dtype = dict_value(header, "descr", path);
  if (dict_value(header, "fortran_order", path).find("False") == std::string::npos)
    throw FileError(path, "Fortran-ordered arrays are not supported; save with numpy.ascontiguousarray");
  const std::string shape = dict_value(header, "shape", path);
  std::string num;
  for (char c : shape) {
    if (std::isdigit(static_cast<unsigned char>(c)))
      num.push_back(c);
    else if (!num.empty()) {
      a.shape.push_back(std::stoll(num));
      num.clear();
    }
  }
  size_t width = 0;
  if (a.dtype == "<f4" || a.dtype == "=f4")
    width = 4;
  else if (a.dtype == "<f2" || a.dtype == "=f2")
    width = 2;
  else if (a.dtype == "<f8" || a.dtype == "=f8")
    width = 8;
  else
    throw FileError(path, "npy dtype " + a.dtype + " is not supported (little-endian float16, float32 or float64)");
  const int64_t n = a.size();
  const size_t off = hstart + hlen;
  if (bytes.size() - off != static_cast<size_t>(n) * width)
    throw FileError(path, "npy data holds " + std::to_string(bytes.size() - off) + " bytes, the header promises " +
                              std::to_string(static_cast<size_t>(n) * width) + ": the file is truncated or corrupt");
  a.data.resize(static_cast<size_t>(n));
  const char* p = bytes.data() + off;
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (width == 4) {
      std::memcpy(&a.data[i], p + 4 * i, 4);
    } else if (width == 2) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      a.data[i] = half_to_float(h);
    } else {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      a.data[i] = static_cast<float>(d);
    }
  }
  return a;
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& data) {
  std::ostringstream dict;
  dict << "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict << shape[i] << (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict << "), }";
  std::string header = dict.str();
  while ((10 + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  AtomicFile f(path, true);
  std::ostream& o = f.stream();
  o.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  o.write(len, 2);
  o << header;
  o.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
  f.commit();
}

}  // namespace kaleido::workload
