// csr_spmv_sliced_offset8 on the GPU (label gpu; skips without a device), against the CPU: on
// seeded random matrices and their transposes, every matrix of the SpMV tests, the awkward shapes
// of issue 14 and the proton engine's matrix, at 1, 4 and 8 chunks per task (at 1 most rows
// longer than 32 entries are cut between tasks). Each case asks for
// - the contract of the other kernels' tests: every row written (outputs poisoned with NaN first),
//   max |gpu - cpu| / max |cpu| < 1e-12 against multiplyCpu, non-zero where the reference is,
//   repeats equal bit for bit;
// - bit for bit equality with the CPU emulation of the same warp algorithm (warp_emulator.hpp:
//   same summation order, so any difference is a GPU-only bug);
// - bit for bit equality with multiplyCpu on small-integer values (every sum exact).
// A failing case is written to a .pcsr file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/device.hpp"
#include "gpu_test_support.hpp"
#include "matrix/matrix_io.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"
#include "spmv_test_matrices.hpp"
#include "warp_emulator.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

SpmvLayouts offset8Only() {
  SpmvLayouts l;
  l.delta16 = false;
  l.offset8 = true;
  return l;
}

/// Segmented slices and rows cut between tasks seen by the GPU checks (so that a test can assert it
/// exercised them).
struct Seen {
  std::int64_t segmented = 0, split = 0;
};

void checkOne(const HalfCsr& a, const std::string& what, const SlicedOffset8Options& o,
              std::uint32_t seed, int repeats, Seen& seen) {
  const auto x = randomVector(a.cols, seed);
  std::vector<double> ref(std::size_t(a.rows)), y(std::size_t(a.rows)), again(std::size_t(a.rows));
  multiplyCpu(a, x.data(), ref.data(), 0);
  CudaSpmvMatrix dev(a, offset8Only(), {}, {}, 0, o);
  ASSERT_EQ(dev.offset8ChunksPerTask(), o.chunksPerTask);
  dev.applyHost(x.data(), y.data(), SpmvKernel::SlicedOffset8);
  const Comparison c = compareToReference(y, ref);
  EXPECT_EQ(c.nonFinite, 0u) << what << ": rows left unwritten";
  EXPECT_LT(c.relError, 1e-12) << what;
  if (c.maxAbsRef > 0) {
    double most = 0;
    for (double v : y) most = std::max(most, std::fabs(v));
    EXPECT_GT(most, 0.0) << what;
  }
  const SlicedOffset8 s = encodeSlicedOffset8(a, o);
  const std::string variant = dev.describe(SpmvKernel::SlicedOffset8).variant;
  EXPECT_EQ(variant.back() == 'r', s.rowBuffer != 0) << what << ": " << variant;
  seen.segmented += s.segmentedSlices;
  seen.split += std::int64_t(s.splitRows.size());
  std::vector<double> emulated(std::size_t(a.rows));
  ASSERT_EQ(emulateSlicedOffset8(s, x.data(), emulated.data()), 0) << what;
  EXPECT_EQ(0, std::memcmp(y.data(), emulated.data(), y.size() * sizeof(double)))
      << what << ": differs from the emulation";
  bool same = true;
  for (int r = 0; r < repeats && same; ++r) {
    dev.applyHost(x.data(), again.data(), SpmvKernel::SlicedOffset8);
    same = std::memcmp(y.data(), again.data(), y.size() * sizeof(double)) == 0;
  }
  EXPECT_TRUE(same) << what << ": not bitwise reproducible";
}

/// 1, 4 and 8 chunks per task on A and on A with small-integer values, with the kernel compiled
/// for 4 blocks per SM (the default), and 8 chunks with the one for 5 (same code, other registers);
/// the tasks in the encoder's order (groups of 32 rows by column where rows are long), in groups
/// of 8 rows by column and in index order; blocks of the encoder's choice of warps, of 2 and of
/// 8; and the same with 16-bit offsets (the kernel's other instantiation) at 1 and 8 chunks.
Seen checkSlicedOffset8(const HalfCsr& a, const std::string& name, std::uint32_t seed,
                        int repeats = 100) {
  Seen seen;
  struct Variant {
    int chunks, blocks, groupRows, offsetBits, warps, rowBuffer;
  };
  // Every compiled kernel: 8-, 12- and 16-bit offsets, blocks of 2 and 8 warps, 32 and 40 warps
  // an SM, with the row buffer (2-warp blocks, 32 warps an SM) and without.
  for (const Variant& v :
       {Variant{1, 4, -1, 8, 0, 0}, {4, 4, 8, 8, 2, 0}, {8, 4, -1, 8, 0, 0}, {8, 5, 0, 8, 8, 0},
        {8, 5, 8, 8, 2, 0}, {1, 4, -1, 16, 2, 0}, {8, 4, 8, 16, 0, 0}, {8, 5, 0, 16, 0, 0},
        {8, 5, 0, 16, 8, 0}, {1, 4, -1, 12, 2, 0}, {8, 4, 8, 12, 0, 0}, {8, 5, 0, 12, 2, 0},
        {8, 5, 0, 12, 8, 0}, {1, 4, 0, 8, 2, 1}, {8, 4, -1, 8, 2, 1}, {2, 4, 0, 12, 2, 1},
        {8, 4, 0, 12, 2, 1}, {4, 4, 0, 16, 2, 1}}) {
    const auto [chunks, blocks, groupRows, offsetBits, warps, rowBuffer] = v;
    const SlicedOffset8Options o{chunks, 0, blocks, groupRows, offsetBits, warps, rowBuffer};
    const std::string what = name + " (" + std::to_string(chunks) + " chunks per task, kernel b" +
                             std::to_string(blocks) + ", task groups " + std::to_string(groupRows) +
                             ", " + std::to_string(offsetBits) + "-bit offsets, warps per block " +
                             std::to_string(warps) + (rowBuffer ? ", row buffer" : "") + ")";
    checkOne(a, what, o, seed, repeats, seen);
    const HalfCsr ai = integerValued(a);
    std::vector<double> xi(std::size_t(a.cols)), ref(std::size_t(a.rows)), y(std::size_t(a.rows));
    for (std::size_t k = 0; k < xi.size(); ++k) xi[k] = double(int(k % 11) - 5);
    multiplyCpu(ai, xi.data(), ref.data(), 0);
    CudaSpmvMatrix dev(ai, offset8Only(), {}, {}, 0, o);
    dev.applyHost(xi.data(), y.data(), SpmvKernel::SlicedOffset8);
    std::size_t wrong = 0, first = 0;
    for (std::size_t r = 0; r < y.size(); ++r)
      if (!(y[r] == ref[r]) && wrong++ == 0) first = r;
    EXPECT_EQ(wrong, 0u) << what << ": integer values, first wrong row " << first;
    if (::testing::Test::HasFailure()) {
      const std::string dump = (std::filesystem::temp_directory_path() /
                                ("spmv_offset8_fail_" + std::to_string(seed) + ".pcsr"))
                                   .string();
      io::writeBinaryCsr(a, dump);
      ADD_FAILURE() << what << ": case written to " << dump;
      break;
    }
  }
  return seen;
}

TEST(SpmvSlicedOffset8Cuda, RandomMatricesAndTheirTransposes) {
  REQUIRE_GPU();
  Seen seen;
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const HalfCsr a = randomCsr(3000 + seed * 777, 1000 + seed * 13, 600, seed);
    const Seen s1 = checkSlicedOffset8(a, "random " + std::to_string(seed), seed);
    const Seen s2 =
        checkSlicedOffset8(transpose(a), "random^T " + std::to_string(seed), seed + 100, 10);
    seen.segmented += s1.segmented + s2.segmented;
    seen.split += s1.split + s2.split;
  }
  EXPECT_GT(seen.segmented, 0);
  EXPECT_GT(seen.split, 0);
}

TEST(SpmvSlicedOffset8Cuda, EveryMatrixOfTheSpmvTests) {
  REQUIRE_GPU();
  std::uint32_t seed = 200;
  for (const auto& [name, m] : existingTestMatrices()) checkSlicedOffset8(m, name, ++seed, 5);
}

TEST(SpmvSlicedOffset8Cuda, AwkwardShapes) {
  REQUIRE_GPU();
  std::uint32_t seed = 300;
  for (const auto& [name, m] : awkwardMatrices()) {
    if (m.cols >= (std::int64_t(1) << 30)) {  // columnGaps: the layout refuses 2^30 columns
      EXPECT_THROW({ CudaSpmvMatrix dev(m, offset8Only()); }, Error) << name;
      continue;
    }
    checkSlicedOffset8(m, name, ++seed, 10);
  }
  std::vector<std::vector<std::int32_t>> rows = {{3}, {}, {3}};
  for (std::int32_t gap : {254, 255, 256, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 16})
    rows[0].push_back(rows[0].back() + gap);
  rows[2] = rows[0];
  rows.push_back({(1 << 25) - 1});
  rows.push_back({0, (1 << 24) + 5});
  EXPECT_GT(checkSlicedOffset8(fromRows(1 << 25, rows), "gaps in 2^25 columns", 310, 10).segmented, 0);
  std::vector<std::int32_t> sparse;  // every entry its own segment
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  checkSlicedOffset8(fromRows(300000, {sparse, sparse, {}, sparse}), "every entry its own segment", 311, 10);
  checkSlicedOffset8(randomCsr(3000, 500, 31, 41, true, 0.2), "rows shorter than 32", 312, 10);
  EXPECT_GT(checkSlicedOffset8(hugeRow(1000000), "one row of 1e6", 313, 10).split, 0);
}

// offsetBits 0 (the default): the device matrix takes 12 bits for prostate-1's transpose (mostly
// segmented at 8 bits; 12 cut 4 % more slices than 16) on a GPU with 16 B or more of DRAM
// bandwidth per SM clock, else 8, and its product is the emulation's of that layout bit for bit.
TEST(SpmvSlicedOffset8Cuda, OffsetBitsChosenByTheDeviceAndTheMatrix) {
  REQUIRE_GPU();
  const DeviceInfo dev = queryCudaDevices().front();
  ASSERT_GT(dev.memoryBytesPerS, 1e11) << dev.name;
  ASSERT_GT(dev.smClockHz, 1e8) << dev.name;
  const double perSmClock = dev.memoryBytesPerSmClock();
  const HalfCsr dt = transpose(makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 64), 2));
  const SliceCounts counts = countSlices(dt);
  ASSERT_GT(2 * counts.segmented8, counts.slices8);
  ASSERT_LE(counts.slices16, counts.slices8);
  const int bits = chooseOffsetBits(perSmClock, counts);
  EXPECT_EQ(bits, perSmClock >= kWideOffsetsBytesPerSmClock ? 12 : 8);
  CudaSpmvMatrix dev8(dt, offset8Only());
  const std::string variant = dev8.describe(SpmvKernel::SlicedOffset8).variant;
  // "g<rows>", the width's suffix, "r" where the rows go through the shared-memory buffer
  std::string widths = variant.substr(variant.find('g'));
  if (widths.back() == 'r') widths.pop_back();
  const std::size_t k = widths.find_first_not_of("g0123456789");
  EXPECT_EQ(k == std::string::npos ? std::string() : widths.substr(k), offsetBitsSuffix(bits))
      << variant << ", " << dev.name << ": " << perSmClock << " B per SM clock";
  const auto x = randomVector(dt.cols, 77);
  std::vector<double> y(std::size_t(dt.rows)), emulated(std::size_t(dt.rows));
  dev8.applyHost(x.data(), y.data(), SpmvKernel::SlicedOffset8);
  SlicedOffset8Options o;
  o.offsetBits = bits;
  ASSERT_EQ(emulateSlicedOffset8(encodeSlicedOffset8(dt, o), x.data(), emulated.data()), 0);
  EXPECT_EQ(0, std::memcmp(y.data(), emulated.data(), y.size() * sizeof(double)));
  std::printf("%s: %.1f B per SM clock, %d-bit offsets chosen\n", dev.name.c_str(), perSmClock, bits);
}

TEST(SpmvSlicedOffset8Cuda, ProtonEngineMatrixAndEngineApi) {
  REQUIRE_GPU();
  const HalfCsr d = protonPhantomMatrix();
  ASSERT_GT(d.nnz(), 0);
  checkSlicedOffset8(d, "proton random phantom", 21);
  checkSlicedOffset8(transpose(d), "proton random phantom^T", 22);

  SpmvOptions o;
  o.backend = Backend::Cuda;
  o.kernel = SpmvKernel::SlicedOffset8;
  SpmvEngine eng(HalfCsr(d), o);
  ASSERT_EQ(eng.backend(), Backend::Cuda) << eng.message();
  ASSERT_FALSE(eng.deviceMatrix(Product::D)->layouts().delta16);  // only the layout it reads
  ASSERT_TRUE(eng.deviceMatrix(Product::D)->layouts().offset8);
  std::vector<double> w(std::size_t(d.cols), 1.0), dose, ref(std::size_t(d.rows));
  eng.multiply(Product::D, w, dose);
  multiplyCpu(d, w.data(), ref.data());
  EXPECT_LT(compareToReference(dose, ref).relError, 1e-12);
  std::vector<double> g, refT(std::size_t(d.cols));
  eng.multiply(Product::Dt, dose, g);
  multiplyCpu(eng.matrix(Product::Dt), dose.data(), refT.data());
  EXPECT_LT(compareToReference(g, refT).relError, 1e-12);
  EXPECT_THROW(eng.deviceMatrix(Product::D)->apply(nullptr, nullptr, SpmvKernel::BinnedDelta16),
               Error);
  // The profile and the real bytes of the new layout.
  const CudaSpmvMatrix& dm = *eng.deviceMatrix(Product::D);
  const KernelProfile p = dm.describe(SpmvKernel::SlicedOffset8);
  EXPECT_EQ(p.kernel, "csr_spmv_sliced_offset8");
  // The defaults: the kernel for 4 blocks an SM, tasks in index order (D's rows, the voxels, are
  // shorter than two tasks) and so blocks of 2 warps, which sum their rows through the
  // shared-memory buffer (2 warps x 8 slots x 33 doubles) unless slices are segmented or x is
  // large, in tasks of 12 chunks with the buffer, else 8.
  const bool buffered =
      dm.offset8SegmentedSlices() == 0 && 8 * d.cols <= kRowBufferMaxXBytes;
  EXPECT_EQ(p.variant.rfind(buffered ? "c12b4k2g0" : "c8b4k2g0", 0), 0u) << p.variant;
  EXPECT_EQ(dm.offset8ChunksPerTask(), buffered ? 12 : 8);
  EXPECT_EQ(p.variant.back() == 'r', buffered) << p.variant;
  EXPECT_EQ(p.sharedBytesPerBlock, buffered ? 2 * 8 * 33 * 8 : 0) << p.variant;
  EXPECT_EQ(p.blockX, 64);
  const KernelProfile pt = eng.deviceMatrix(Product::Dt)->describe(SpmvKernel::SlicedOffset8);
  EXPECT_EQ(pt.blockX, pt.variant.find("g0") == std::string::npos ? 256 : 64) << pt.variant;
  EXPECT_GT(p.registersPerThread, 0);
  const double real = dm.realBytes(SpmvKernel::SlicedOffset8);
  EXPECT_GT(real, 3.0 * double(d.nnz()));
  EXPECT_EQ(real, slicedOffset8Bytes(encodeSlicedOffset8(d)).total());
}

}  // namespace
}  // namespace penumbra::spmv
