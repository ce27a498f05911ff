// NumPy .npy files (format versions 1 to 3): how real activations dumped from
// a real model elsewhere (Q, K, V of a head, or a latent) enter the study.
// Little-endian float16/32/64, C order; values are converted to float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kaleido::workload {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::string dtype;  // as in the file, e.g. "<f4"
  int64_t size() const;
};

// Throws FileError naming what is wrong (signature, header, dtype, order, size).
NpyArray read_npy(const std::string& path);

// Writes float32, C order, atomically.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& data);

}  // namespace kaleido::workload
