#pragma once
/// The SpMV engine's matrix: CSR with IEEE binary16 values, 32-bit column indices and 64-bit row
/// offsets. The dose-deposition matrix of the proton engine (proton::DoseMatrixCsr) is this type
/// plus its provenance, so a matrix the engine builds goes to the SpMV engine without a copy.
///
/// Why the offsets are always 64-bit (and not only when nnz > 2^31): they cost 8 bytes per row,
/// the indices 4 and the values 2 bytes per non-zero. On liver-1 (2.97e6 rows, 1.48e9 nnz) 64-bit
/// offsets add 2.97e6 x 4 B = 12 MB to 8.9 GB of values and indices, 0.13 % of the traffic of one
/// product, while a 32-bit variant would double every kernel and file format for no measurable
/// gain. Column indices stay 32-bit: spots never exceed 2^31 (the proton engine refuses that),
/// and the optimised CUDA kernel compresses them to 16-bit deltas on the device anyway.
///
/// Entry (r, c) = scale * half(values[e]); products are computed as scale * (H x) in double.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace penumbra::spmv {

struct HalfCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> rowPtr;  ///< rows + 1 offsets, rowPtr[0] = 0, non-decreasing
  std::vector<std::int32_t> colIdx;  ///< column of each entry, ascending within a row
  std::vector<std::uint16_t> values; ///< IEEE binary16 bit patterns
  double scale = 1;                  ///< multiplies every entry (e.g. Gy per unit weight)

  std::int64_t nnz() const { return std::int64_t(colIdx.size()); }
  /// Throws InvalidArgument naming the first broken invariant (sizes, offsets, column range,
  /// ascending columns within a row). O(nnz).
  void validate() const;
};

/// D^T as its own CSR (columns become rows), entries of each new row in ascending old-row order
/// (so the transposed product has a fixed, documented accumulation order). Same scale.
/// Multi-threaded (threads <= 0: all hardware threads); deterministic for any thread count.
HalfCsr transpose(const HalfCsr& m, int threads = 0);

/// Bytes of the three CSR arrays of a rows x cols matrix with nnz entries (host or device).
double csrBytes(std::int64_t rows, std::int64_t nnz);

/// Device layouts of the CUDA SpMV engine (cuda_spmv.hpp); each kernel reads one.
struct SpmvLayouts {
  bool baseline = false;  ///< int32 column indices (csr_spmv_warp_per_row, the cuSPARSE yardstick)
  bool delta16 = true;    ///< 16-bit column deltas in slices (csr_spmv_binned_delta16)
  bool steps = false;     ///< StepCsr, 4- or 8-bit column steps (csr_spmv_segmented_steps)
  bool offset8 = false;   ///< SlicedOffset8, 8-, 12- or 16-bit offsets in row slices (csr_spmv_sliced_offset8)
};

/// Device memory the CUDA SpMV engine needs for D and D^T of this size, before any allocation
/// (worst cases, since the layouts depend on the columns): per matrix, for delta16 the fp16
/// values, the 16-bit column deltas (every slice wide), the row plan and the offsets; for the
/// baseline the int32 indices too; for steps 2 + 1 B per entry of rows padded to 8, every step an
/// escape (4 B), 12 B per row and the task records; for offset8 3 B per entry of slices that
/// hold as few as 4 entries (every entry its own segment), a full area a chunk, headers, rows and
/// tasks; and the four double vectors.
struct SpmvMemoryEstimate {
  double matrixBytes = 0;      ///< D
  double transposeBytes = 0;   ///< D^T
  double vectorBytes = 0;
  double total() const { return matrixBytes + transposeBytes + vectorBytes; }
  std::string describe() const;  ///< "D 5.5 GiB + D^T 5.5 GiB + vectors 47 MiB = 11.0 GiB"
};
SpmvMemoryEstimate estimateDeviceBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                       const SpmvLayouts& layouts);
/// The delta16 layout, with the int32 indices when `withBaseline`.
SpmvMemoryEstimate estimateDeviceBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                       bool withBaseline);

/// The estimate SpmvEngine checks before it builds anything: estimateDeviceBytes(), except that
/// offset8 counts the least its layout can take (full slices: 3 B per entry, 32 B of headers per
/// 256 entries). Its worst case (~30 B per entry: slices of 4 entries) is a bound no
/// dose matrix comes near (liver-1: 3.5 B per entry) and would refuse liver-1-sized D and D^T on
/// an 80 GB GPU; CudaSpmvMatrix checks the exact bytes after encoding, before it allocates.
SpmvMemoryEstimate estimateBeforeEncoding(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                          const SpmvLayouts& layouts);

/// Throws ErrorCode::OutOfMemory, with the matrix size, the estimate and the free memory in the
/// message, when the estimate does not fit in `freeBytes` (keeping 5 % of it spare). Called
/// before anything is allocated.
void refuseIfTooBig(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                    const SpmvMemoryEstimate& estimate, double freeBytes,
                    const std::string& deviceName);

}  // namespace penumbra::spmv
