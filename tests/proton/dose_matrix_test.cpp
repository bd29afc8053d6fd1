// Parts of the GPU dose-matrix build that need no GPU: the device's fp16 rounding against the
// host's, the memory arithmetic and the refusal message, and that a CUDA request for a matrix
// builds the CPU's matrix where no GPU is usable (CPU-only CI).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "core/device.hpp"
#include "core/error.hpp"
#include "proton/dose_matrix_row.hpp"
#include "proton/proton_backend.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::proton {
namespace {

float floatOfBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(DoseMatrixHalf, DeviceRoundingEqualsTheHostsOnEveryExponent) {
  // Every exponent (both signs) with 2^16 mantissas each, a stride co-prime to 2 so that every
  // pattern of the low 13 bits (the rounded-off part) is met; plus all exact ties.
  int checked = 0;
  for (std::uint32_t sign : {0u, 0x80000000u})
    for (std::uint32_t e = 0; e < 256; ++e)
      for (std::uint32_t m = 0; m < (1u << 23); m += 127) {
        const std::uint32_t u = sign | (e << 23) | m;
        const float f = floatOfBits(u);
        if (std::isnan(f)) continue;
        ASSERT_EQ(pb::floatToHalfRne(f), spmv::floatToHalfBits(f)) << "bits 0x" << std::hex << u;
        ++checked;
      }
  for (std::uint32_t h = 0; h < 0x7BFF; ++h) {  // midpoints between neighbouring halves
    const double mid = (double(spmv::halfBitsToFloat(std::uint16_t(h))) +
                        double(spmv::halfBitsToFloat(std::uint16_t(h + 1)))) / 2;
    ASSERT_EQ(pb::floatToHalfRne(float(mid)), spmv::floatToHalfBits(float(mid))) << h;
  }
  EXPECT_GT(checked, 30000000);
}

TEST(DoseMatrixMemory, WorkingArraysAddUp) {
  detail::DoseMatrixDeviceSizes s;
  s.inputVoxels = 1000;
  s.rows = 100;
  s.cols = 10;
  s.bevSamples = 50;
  s.tileBegins = 7;
  s.tileEntries = 3;
  s.tableValues = 20;
  const double base = 4.0 * 1000 + 8 * 50 + 8 * 20 + 4 * 7 + 20 * 3 + 16 * 101 + (1 << 20) + 40 + 16;
  EXPECT_DOUBLE_EQ(detail::doseMatrixWorkBytes(s), base);
  s.fromCt = true;  // the CT (int16) and the HU LUT are on the device while converted
  EXPECT_DOUBLE_EQ(detail::doseMatrixWorkBytes(s), base + 2.0 * 1000 + 4.0 * 65536);
  EXPECT_DOUBLE_EQ(detail::doseMatrixEntryBytes(1e9), 6e9);
}

TEST(DoseMatrixMemory, RefusalNamesTheSizesAndTheDevice) {
  EXPECT_NO_THROW(detail::refuseDoseMatrixIfTooBig(9e9, 10e9, 1e8, 6000000, 11300, 1500000000, "GPU X"));
  try {
    detail::refuseDoseMatrixIfTooBig(9e9, 4e9, 1e8, 6000000, 11300, 1500000000, "GPU X");
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    const std::string m = e.message();
    EXPECT_NE(m.find("dose matrix on the GPU needs 8.4 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("3.7 GiB are free on GPU X"), std::string::npos) << m;
    EXPECT_NE(m.find("6000000 voxels x 11300 spots"), std::string::npos) << m;
    EXPECT_NE(m.find("1500000000 entries x 6 B = 8.4 GiB"), std::string::npos) << m;
  }
  // Before counting only the working arrays are named.
  try {
    detail::refuseDoseMatrixIfTooBig(2e9, 1e9, 2e9, 10, 2, -1, "GPU X");
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.message().find("entries"), std::string::npos) << e.message();
  }
  EXPECT_THROW(detail::refuseDoseMatrixIfTooBig(NAN, 1e9, 0, 1, 1, 0, "GPU X"), Error);
}

TEST(DoseMatrixMemory, TestLimitCapsTheFreeMemory) {
  EXPECT_EQ(detail::doseMatrixFreeBytes(1000), 1000u);
  detail::setDoseMatrixDeviceLimitForTests(300);
  EXPECT_EQ(detail::doseMatrixFreeBytes(1000), 300u);
  EXPECT_EQ(detail::doseMatrixFreeBytes(200), 200u);
  detail::setDoseMatrixDeviceLimitForTests(0);
  EXPECT_EQ(detail::doseMatrixFreeBytes(1000), 1000u);
}

TEST(DoseMatrixMemory, EstimateCountsTheGpuWorkingArrays) {
  const ProtonPhantomCase pc = makeRandomPhantomCase(4, 33);
  ProtonDoseRequest r;
  r.ct = std::make_shared<CtVolume>(pc.ct);
  r.beams = pc.beams;
  r.backend = Backend::Cuda;
  const WorkspaceEstimate without = workspaceBytes(r);
  r.params.computeDoseMatrix = true;
  const WorkspaceEstimate with = workspaceBytes(r);
  EXPECT_GT(with.matrixEntries, 0u);
  EXPECT_GE(with.deviceBytes, without.deviceBytes);
  EXPECT_NE(with.breakdown.find("GPU build: working arrays"), std::string::npos) << with.breakdown;
}

TEST(DoseMatrixMemory, CudaRequestWithoutAGpuBuildsTheCpuMatrix) {
  if (!queryCudaDevices().empty()) GTEST_SKIP() << "a GPU is usable: the GPU tests cover this";
  const ProtonPhantomCase pc = makeRandomPhantomCase(5, 21);
  ProtonDoseRequest r;
  r.ct = std::make_shared<CtVolume>(pc.ct);
  r.beams = pc.beams;
  r.params.computeDoseMatrix = true;
  r.backend = Backend::Cuda;
  const ProtonDoseResult a = computeProtonDose(r);
  r.backend = Backend::Cpu;
  const ProtonDoseResult b = computeProtonDose(r);
  ASSERT_TRUE(a.matrix && b.matrix);
  EXPECT_EQ(a.backend, Backend::Cpu);
  EXPECT_FALSE(a.messages.empty());  // says why it fell back
  ASSERT_GT(b.matrix->nnz(), 0);
  EXPECT_EQ(a.matrix->rowPtr, b.matrix->rowPtr);
  EXPECT_EQ(a.matrix->colIdx, b.matrix->colIdx);
  EXPECT_EQ(a.matrix->values, b.matrix->values);
}

}  // namespace
}  // namespace penumbra::proton
