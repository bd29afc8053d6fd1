#pragma once
/// Seeded synthetic dose-deposition matrices with the structure of the paper's Table I cases
/// (Liu et al. 2021: liver-1 2.97e6 x 6.80e4 with 1.48e9 non-zeros, prostate-1 1.03e6 x 5.09e3
/// with 9.5e7; 70 % empty rows, row lengths from tens to ~16 000, long-tailed).
///
/// The generator, so that anyone can reproduce a benchmark row:
/// - Rows (dose voxels) come in runs of consecutive rows, like a line of voxels along x, of a
///   length drawn uniformly from [runRows/2, 3 runRows/2]. A run is empty (outside every spot's
///   reach) with probability `emptyFraction`; this gives ~70 % empty rows, in runs, as in a
///   real matrix whose empty voxels are the ones the beam misses.
/// - A non-empty run gets a column centre c (uniform over the spots) and a length scale z drawn
///   log-normally (sigma `lengthSigma`, i.e. a long tail); each of its rows gets
///   L = clamp(round(s * z * exp(0.25 N(0,1))), 1, cols), with one global s found by bisection
///   so that the total is the requested nnz (to within 1e-4).
/// - A row's L columns are drawn without replacement (selection sampling, so they come out
///   ascending) from a window of W = min(cols, ceil(L / columnDensity)) consecutive columns
///   around c (jittered by up to W/8 per row, clipped to the matrix): columns clustered per row,
///   neighbouring rows sharing most of their spots.
/// - Values are dose-like, positive fp16: (0.05 + 0.95 u) * exp(-2 ((col - c) / (W / 2))^2),
///   at least 2^-10.
/// Every row draws from its own counter-based random stream (seed, row), so the matrix is the
/// same for any thread count; rows are filled in parallel. liver-1 (1.48e9 entries, 8.9 GB)
/// takes a few seconds on 16 cores.
#include <cstdint>
#include <string>

#include "spmv/half_csr.hpp"

namespace penumbra::spmv {

struct SyntheticSpec {
  std::string name;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double emptyFraction = 0.7;
  double lengthSigma = 1.0;
  double columnDensity = 2.0 / 3.0;
  int runRows = 64;
  std::uint64_t seed = 1;
};

SyntheticSpec liver1Spec();     ///< 2.97e6 x 6.80e4, 1.48e9 entries, seed 2021
SyntheticSpec prostate1Spec();  ///< 1.03e6 x 5.09e3, 9.5e7 entries, seed 2021
/// The same structure scaled down by `factor` in rows and entries (columns kept), for tests.
SyntheticSpec scaled(SyntheticSpec s, double factor);

HalfCsr makeSyntheticDoseMatrix(const SyntheticSpec& spec, int threads = 0);

}  // namespace penumbra::spmv
