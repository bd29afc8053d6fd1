#pragma once
/// StepCsr: the dose matrix with its column indices as 4- or 8-bit steps, for
/// csr_spmv_segmented_steps (issue 14, "SpMV at the floor"). Exact: decodeStepCsr() gives back
/// the HalfCsr bit for bit, and multiplyStepCsrCpu() equals multiplyCpu() bit for bit.
///
/// Why steps: a dose matrix's columns ascend within a row in long runs of neighbours (voxels along
/// a line of the dose grid, spots along a raster line), so most differences between consecutive
/// columns are small. Measured on the bench matrices (fraction of non-zeros whose step from the
/// previous column of the row is >= 16 / >= 255): prostate-1 D 0 / 0, D^T 4.7 % / 3.2 %;
/// proton-hn D 6.4 % / 0.03 %, D^T 6.1 % / 0.1 %. So a 4-bit step with an escape costs about
/// 0.5 + 4 x 0.06 B per non-zero against 1 B for an 8-bit step and 2 B for delta16; the encoder
/// counts the exact bytes of both widths and keeps the smaller (8 bits wins when many steps lie
/// in 15..254).
///
/// Layout (all of it is what the kernel reads; nothing else is needed on the GPU):
/// - Groups: each non-empty row is padded to whole groups of 8 entries, so a group belongs to one
///   row. Group g holds values[8g .. 8g+7] (fp16 bits, 16 B: one aligned vector load) and its 8
///   step codes in steps[g * stepBits .. +stepBits) (4 or 8 bytes). Codes: 0 = padding (no entry);
///   1 .. E-1 = the column is the previous column + code; E (15 or 255) = escape: the step is the
///   next uint32 of `escapes` (taken in stream order). Steps are uint32 and wrap mod 2^32, so any
///   jump (backwards across rows, 2^31 - 1 forward) is exact.
/// - Rows: rowFirstGroup / rowFirstCol / rowIndex for the non-empty rows in order (a row ends
///   where the next one starts), followed by kSentinels entries (rowFirstGroup = groups), so that
///   a warp may read a window of 32 rows past the last one. The column chain restarts at every
///   row start from rowFirstCol - 1 (so a row's first code is 1): 4 B per row, as the escape that a
///   jump back from the previous row's last column would cost, but decoded with the row starts
///   that the kernel reads anyway instead of through the escape path in nearly every block of a
///   matrix of short rows. Empty rows are runs written as zeros.
/// - Tasks: the group stream is cut into warp tasks of about `taskGroups` groups at row starts; a
///   row longer than that is cut into pieces, each its own task. A piece that starts inside a row
///   restarts the chain at 0xFFFFFFFF (its first step, column + 1, is an escape unless small), so
///   every task decodes on its own: a task carries its first group, end, first escape and row.
/// - Rows cut into pieces are listed in splitRows: the kernel leaves each piece's sum in a
///   per-task slot and a second launch adds the pieces in task order.
#include <cstdint>
#include <vector>

#include "spmv/half_csr.hpp"
#include "spmv/spmv_plan.hpp"

namespace penumbra::spmv {

struct StepTask {
  std::uint32_t groupBegin = 0, groupEnd = 0;  ///< groups [groupBegin, groupEnd)
  std::uint32_t escBegin = 0;                  ///< index of the task's first escape
  std::uint32_t ordBegin = 0;                  ///< non-empty row containing groupBegin
};
struct SplitRow {
  std::int32_t row = 0;
  std::uint32_t firstTask = 0, lastTask = 0;  ///< its pieces are these tasks, in order
};

struct StepCsrOptions {
  int stepBits = 0;             ///< 4 or 8; 0: the width that gives fewer bytes
  std::int64_t taskGroups = 0;  ///< groups per warp task; 0: groups / 65536 clamped to [32, 1024]
  int threads = 0;              ///< encoder threads; 0: all hardware threads
  /// Not part of the encoding: lanes of csr_spmv_segmented_steps that share a group (1 or 2).
  int lanesPerGroup = 1;
};

struct StepCsr {
  static constexpr int kGroup = 8;         ///< entries per group
  static constexpr int kSentinels = 32;    ///< extra rowFirstGroup / rowIndex entries
  static constexpr int kSlackGroups = 40;  ///< zero groups after the last (vector loads past it)

  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1;
  int stepBits = 8;
  std::int64_t groups = 0;  ///< groups in use (the arrays hold kSlackGroups more)
  std::int64_t taskGroups = 0;
  std::vector<std::uint16_t> values;  ///< (groups + kSlackGroups) * 8
  std::vector<std::uint8_t> steps;    ///< (groups + kSlackGroups) * stepBits
  std::vector<std::uint32_t> escapes;
  std::vector<std::uint32_t> rowFirstGroup;  ///< non-empty rows + kSentinels
  std::vector<std::uint32_t> rowFirstCol;    ///< non-empty rows + kSentinels (sentinels: 0)
  std::vector<std::int32_t> rowIndex;        ///< non-empty rows + kSentinels (sentinels: -1)
  std::vector<StepTask> tasks;
  std::vector<SplitRow> splitRows;
  std::vector<EmptyRun> emptyRuns;

  int escapeCode() const { return (1 << stepBits) - 1; }
  std::int64_t nonEmptyRows() const { return std::int64_t(rowIndex.size()) - kSentinels; }
};

/// Encodes a valid HalfCsr (HalfCsr::validate() holds). Multi-threaded; the result does not
/// depend on the thread count. Throws Unsupported past the 32-bit limits (2^32 groups, escapes or
/// non-empty rows; 2^31 rows).
StepCsr encodeStepCsr(const HalfCsr& m, const StepCsrOptions& options = {});

/// The HalfCsr back, exactly (rows in order, entries in column order, same bits and scale).
HalfCsr decodeStepCsr(const StepCsr& s);

/// The CPU reference on the encoded matrix: y = A x with every row summed left to right in
/// double, then scaled, as multiplyCpu() (so the two agree bit for bit). Threads split the tasks
/// only where a task starts a row.
void multiplyStepCsrCpu(const StepCsr& s, const double* x, double* y, int threads = 0);

/// Bytes one product moves with csr_spmv_segmented_steps: what the kernel reads of the matrix
/// (every array once), y written once and x read once (8 B per row and per column: the issue's
/// model of the vectors, which assumes the gathers of x hit in cache after the first).
struct StepCsrBytes {
  double values = 0, steps = 0, escapes = 0, rowInfo = 0, tasks = 0, vectors = 0;
  double matrix() const { return values + steps + escapes + rowInfo + tasks; }
  double total() const { return matrix() + vectors; }
};
StepCsrBytes stepCsrBytes(const StepCsr& s);

/// Device bytes of the layout (arrays as stored, with their slack, plus the per-task sums).
double stepCsrDeviceBytes(const StepCsr& s);

}  // namespace penumbra::spmv
