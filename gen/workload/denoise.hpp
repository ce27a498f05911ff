// The denoised-estimate proxy: E[x0 | x_t], the Wiener (MMSE) estimate of the
// clean latent from the noisy one of a rectified-flow step.
//
// x_t = (1 - sigma) x0 + sigma eps with eps white, unit variance. Modelling
// each latent channel as a stationary Gaussian field with power spectrum P(f)
// on the latent grid (3D DFT over t, h, w), the MMSE estimate is the linear
// filter, per channel and frequency,
//     H(f) = (1 - sigma) P(f) / ((1 - sigma)^2 P(f) + sigma^2),
// applied to the DFT of x_t. P is the periodogram |X0(f)|^2 / N of a clip
// other than the one evaluated (the estimate must not see the clean latent it
// estimates), smoothed over neighbouring frequencies. A trained DiT's deep
// Q and K follow its estimate of the clean video rather than the raw noisy
// input; this proxy is the optimistic bound of that, raw x_t the pessimistic one.
#pragma once

#include <vector>

#include "golden/types.hpp"

namespace kaleido::workload {

// Power spectrum of each channel on a grid's DFT bins (same order as the grid's tokens).
struct LatentSpectrum {
  Grid grid;
  int channels = 0;
  std::vector<double> power;  // channels x grid.tokens(), channel-major
  double at(int c, int64_t bin) const { return power[static_cast<size_t>(c * grid.tokens() + bin)]; }
};

// Periodogram of x (grid tokens x C), averaged over a (2r+1)^3 box of neighbouring bins (circular).
LatentSpectrum estimate_spectrum(const Grid& grid, const FloatMatrix& x, int smooth_radius = 1);

// The Wiener estimate of x0 from x_t at noise level sigma; the spectrum must
// have the grid and channels of x_t. sigma = 0 returns x_t.
FloatMatrix wiener_denoise(const Grid& grid, const FloatMatrix& x_t, double sigma, const LatentSpectrum& spectrum);

// The filter gain H for one bin (exposed for tests and reports).
double wiener_gain(double power, double sigma);

}  // namespace kaleido::workload
