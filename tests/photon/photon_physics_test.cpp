// Photon beam model (engines/photon/physics): every number compared here is a published value or
// a cross-check printed by tools/photon_beam_convert.py and quoted in
// shared/data/photon-beam/README.md:
//  - mean energies of the Mohan et al., Med. Phys. 12, 595 (1985) spectra as shipped with EGSnrc
//    (mohan10: 2.8014 MeV quoted in EGSnrc course material for this very file);
//  - NIST SRD 126 (Hubbell & Seltzer) mu/rho, mu_en/rho of liquid water;
//  - energy fractions of the Mackie et al., Phys. Med. Biol. 33, 1 (1988) EGS point kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "photon/physics/photon_beam_model.hpp"
#include "test_data.hpp"

namespace penumbra::photon {
namespace {

namespace fs = std::filesystem;
using penumbra::test::dataPath;

const std::string kKernelDir = "photon-beam/kernels/mackie_wiscplan_6MV_bin";
const std::string kNist = "reference/nist_xray_water_mu_rho_0.1-20MeV.csv";

std::string tempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("penumbra_photon_" + name)).string();
}

std::vector<float> readFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);  // the test machines are little-endian
  return v;
}

/// Expects `fn` to throw penumbra::Error with `code` and a message containing `needle`.
template <class Fn>
void expectError(Fn&& fn, ErrorCode code, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

double fitK(const ConeBand& b, double r) {
  return b.A * (1 - std::exp(-b.a * r)) + b.B * (1 - std::exp(-b.b * r));
}

// ---- spectra ---------------------------------------------------------------------------------

TEST(PhotonSpectrum, MohanMeanEnergiesMatchReadmeCrossCheck) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const Spectrum s6 = readEgsSpectrum(dataPath("photon-beam/spectra/egsnrc/mohan6.spectrum"));
  ASSERT_EQ(s6.energyMeV.size(), 24u);
  EXPECT_DOUBLE_EQ(s6.energyMeV.front(), 0.125);  // [EMIN = 0, 0.25]
  EXPECT_DOUBLE_EQ(s6.energyMeV.back(), 5.875);
  double sum = 0;
  for (double f : s6.fluence) sum += f;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_TRUE(s6.muRho.empty());
  EXPECT_NEAR(s6.meanEnergyMeV(), 1.899, 0.0005);
  const Spectrum s10 = readEgsSpectrum(dataPath("photon-beam/spectra/egsnrc/mohan10.spectrum"));
  EXPECT_NEAR(s10.meanEnergyMeV(), 2.8014, 0.0005);
}

TEST(PhotonSpectrum, ReadsCrlfFilesOfOtherSources) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  // CERR files have CRLF line ends and blank separators (README: 1.673 and 5.170 MeV).
  EXPECT_NEAR(
      readEgsSpectrum(dataPath("photon-beam/spectra/cerr/6MVVarian.spectrum")).meanEnergyMeV(),
      1.673, 0.0005);
  EXPECT_NEAR(
      readEgsSpectrum(dataPath("photon-beam/spectra/cerr/18MV10x10MDA.spectrum")).meanEnergyMeV(),
      5.170, 0.0005);
  // Per-bin files whose EMIN equals the first upper edge (README: Elekta 1.898, Siemens 1.819).
  EXPECT_NEAR(
      readEgsSpectrum(dataPath("photon-beam/spectra/cerr/6MVElekta.spectrum")).meanEnergyMeV(),
      1.898, 0.0005);
  EXPECT_NEAR(
      readEgsSpectrum(dataPath("photon-beam/spectra/cerr/6MVSiemens.spectrum")).meanEnergyMeV(),
      1.819, 0.0005);
}

TEST(PhotonSpectrum, PerBinModeIsNotMultipliedByWidth) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const std::string path = tempPath("mode0.spectrum");
  { std::ofstream(path) << "two bins, per bin\n2, 1.0, 0\r\n2.0, 1\r\n5.0 3\r\n"; }
  const Spectrum s = readEgsSpectrum(path);
  ASSERT_EQ(s.fluence.size(), 2u);
  EXPECT_DOUBLE_EQ(s.energyMeV[0], 1.5);
  EXPECT_DOUBLE_EQ(s.energyMeV[1], 3.5);
  EXPECT_DOUBLE_EQ(s.fluence[0], 0.25);
  EXPECT_DOUBLE_EQ(s.fluence[1], 0.75);
  EXPECT_DOUBLE_EQ(s.meanEnergyMeV(), 0.25 * 1.5 + 0.75 * 3.5);
  fs::remove(path);
}

TEST(PhotonSpectrum, MalformedFilesGiveFormatErrorNamingTheLine) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const std::string path = tempPath("bad.spectrum");
  { std::ofstream(path) << "bad\n3, 0, 1\n0.5, 1\n1.0, abc\n1.5, 1\n"; }
  expectError([&] { readEgsSpectrum(path); }, ErrorCode::Format, path + ":4:");
  { std::ofstream(path) << "short\n3, 0, 1\n0.5, 1\n1.0, 2\n"; }
  expectError([&] { readEgsSpectrum(path); }, ErrorCode::Format, path + ":5:");
  { std::ofstream(path) << "descending\n2, 0, 1\n0.5, 1\n0.4, 2\n"; }
  expectError([&] { readEgsSpectrum(path); }, ErrorCode::Format, path + ":4:");
  { std::ofstream(path) << "mode\n2, 0, 2\n0.5, 1\n1.0, 2\n"; }
  expectError([&] { readEgsSpectrum(path); }, ErrorCode::Format, path + ":2:");
  fs::remove(path);
  expectError([&] { readEgsSpectrum(tempPath("does_not_exist.spectrum")); }, ErrorCode::Io,
              "does_not_exist.spectrum");
}

// ---- NIST attenuation ------------------------------------------------------------------------

TEST(PhotonWaterAttenuation, ReproducesNistPointsAndIsMonotoneBetween) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  PENUMBRA_REQUIRE_DATA(kNist);
  const auto w = WaterAttenuation::load(dataPath(kNist));
  // Table rows (E, mu/rho, mu_en/rho), NIST SRD 126 Table 4.
  struct Row {
    double e, mu, muEn;
  };
  const Row rows[] = {{0.1, 0.1707, 0.02546},   {0.5, 0.09687, 0.03299}, {1.0, 0.07072, 0.03103},
                      {1.25, 0.06323, 0.02965}, {6.0, 0.02770, 0.01806}, {20.0, 0.01813, 0.01382}};
  for (const auto& r : rows) {
    EXPECT_NEAR(w.muRho(r.e), r.mu, 1e-12 * r.mu) << r.e;
    EXPECT_NEAR(w.muEnRho(r.e), r.muEn, 1e-12 * r.muEn) << r.e;
  }
  // Between neighbouring table energies a log-log interpolant stays between the two end values.
  const double grid[] = {0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25,
                         1.5, 2.0,  3.0, 4.0, 5.0, 6.0, 8.0, 10., 15., 20.};
  for (int i = 0; i + 1 < 20; ++i) {
    for (int k = 1; k < 10; ++k) {
      const double e = grid[i] * std::pow(grid[i + 1] / grid[i], k / 10.0);
      for (auto f : {&WaterAttenuation::muRho, &WaterAttenuation::muEnRho}) {
        const double lo = (w.*f)(grid[i]), hi = (w.*f)(grid[i + 1]), v = (w.*f)(e);
        EXPECT_LE(v, std::max(lo, hi) * (1 + 1e-12)) << e;
        EXPECT_GE(v, std::min(lo, hi) * (1 - 1e-12)) << e;
      }
      EXPECT_LT(w.muRho(e), w.muRho(grid[i]));  // mu/rho of water falls over 0.1-20 MeV
    }
  }
  expectError([&] { w.muRho(0.05); }, ErrorCode::InvalidArgument, "outside");
  expectError([&] { w.muEnRho(25.0); }, ErrorCode::InvalidArgument, "outside");
}

TEST(PhotonWaterAttenuation, AgreesWithWiscPlanVectorsAtKernelEnergies) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  PENUMBRA_REQUIRE_DATA(kNist);
  const auto w = WaterAttenuation::load(dataPath(kNist));
  const auto e = readFloats(dataPath(kKernelDir + "/energies.bin"));
  const auto mu = readFloats(dataPath(kKernelDir + "/mu.bin"));
  const auto muEn = readFloats(dataPath(kKernelDir + "/mu_en.bin"));
  ASSERT_EQ(e.size(), 14u);
  ASSERT_EQ(mu.size(), 14u);
  ASSERT_EQ(muEn.size(), 14u);
  for (std::size_t i = 0; i < e.size(); ++i) {
    EXPECT_NEAR(w.muRho(e[i]), mu[i], 0.01 * mu[i]) << e[i] << " MeV";
    EXPECT_NEAR(w.muEnRho(e[i]), muEn[i], 0.01 * muEn[i]) << e[i] << " MeV";
  }
}

// ---- Mackie kernels --------------------------------------------------------------------------

TEST(PhotonMackieKernels, LoadsAndHasPublishedEnergyFractions) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const auto k = MackieKernels::load(dataPath(kKernelDir));
  ASSERT_EQ(k.nE(), 14);
  ASSERT_EQ(k.nPolar(), 48);
  ASSERT_EQ(k.nRadial(), 24);
  EXPECT_NEAR(k.energyMeV.front(), 0.2, 1e-6);
  EXPECT_NEAR(k.energyMeV.back(), 6.0, 1e-6);
  EXPECT_NEAR(k.radiusCm.back(), 60.0, 1e-6);
  EXPECT_NEAR(k.polarUpperDeg.front(), 3.75, 1e-6);
  std::vector<double> frac(k.nE(), 0.0);
  for (int e = 0; e < k.nE(); ++e)
    for (int p = 0; p < k.nPolar(); ++p)
      for (int r = 0; r < k.nRadial(); ++r) frac[e] += k.at(e, p, r);
  EXPECT_NEAR(frac.front(), 0.993, 0.005);                           // 0.2 MeV
  EXPECT_NEAR(frac.back(), 0.933, 0.005);                            // 6 MeV
  for (int e = 1; e < k.nE(); ++e) EXPECT_LT(frac[e], frac[e - 1]);  // more escapes at higher E
  // C order [energy][polar][radial]: at 6 MeV the forward cone holds far more energy than the
  // backward one (a [radial][polar] misreading would mix them).
  double fwd = 0, back = 0;
  for (int r = 0; r < k.nRadial(); ++r) fwd += k.at(13, 0, r), back += k.at(13, 47, r);
  EXPECT_GT(fwd, 20 * back);
}

TEST(PhotonMackieKernels, TruncatedFileGivesClearError) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const fs::path dir = tempPath("kernels_truncated");
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"kernel_header.txt", "energies.bin", "radii.bin", "angles.bin"})
    fs::copy_file(dataPath(kKernelDir + "/" + f), dir / f);
  {
    std::ofstream out(dir / "total.bin", std::ios::binary);
    const std::vector<char> zeros(1000 * 4, 0);
    out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  expectError([&] { MackieKernels::load(dir.string()); }, ErrorCode::Format, "expected 64512");
  fs::remove(dir / "total.bin");
  expectError([&] { MackieKernels::load(dir.string()); }, ErrorCode::Io, "total.bin");
  fs::remove_all(dir);
}

// ---- polyenergetic kernel and beam model -----------------------------------------------------

TEST(PhotonPolyKernel, Mohan6EnergyFraction) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const auto model = PhotonBeamModel::load6MV(test::testDataDir());
  ASSERT_EQ(model->spectrum.energyMeV.size(), 14u);
  ASSERT_EQ(model->spectrum.muRho.size(), 14u);
  ASSERT_EQ(model->spectrum.muEnRho.size(), 14u);
  double sum = 0;
  for (double f : model->spectrum.fluence) sum += f;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  // Rebinning moves each 0.25 MeV Mohan bin to the nearest kernel energy: the mean stays within
  // a few percent of 1.899 MeV.
  EXPECT_NEAR(model->spectrum.meanEnergyMeV(), 1.899, 0.06);
  EXPECT_NEAR(model->kernel.energyFraction(), 0.958, 0.005);
  EXPECT_EQ(model->kernel.value.size(), 48u * 24u);
  EXPECT_EQ(model->sadMm, 1000);
  EXPECT_EQ(model->offAxisSofteningPerDeg, 0);
  EXPECT_EQ(model->gyPerMuPerRawDose, 0);
  EXPECT_FALSE(model->name.empty());
}

TEST(PhotonPolyKernel, RejectsSpectrumNotOnKernelEnergies) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const auto mono = MackieKernels::load(dataPath(kKernelDir));
  const Spectrum raw = readEgsSpectrum(dataPath("photon-beam/spectra/egsnrc/mohan6.spectrum"));
  expectError([&] { makePolyenergeticKernel(mono, raw); }, ErrorCode::InvalidArgument, "rebinOnto");
}

TEST(PhotonBeamModel, MissingDataNamesThePath) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const std::string dir = tempPath("no_such_data_dir");
  expectError([&] { PhotonBeamModel::load6MV(dir); }, ErrorCode::Io, dir + "/photon-beam");
}

TEST(PhotonBeamModel, LoadsOtherSpectraAndLoad6MVIsMohan) {
  PENUMBRA_REQUIRE_DATA("photon-beam/spectra/cerr/6MVVarian.spectrum");
  const std::string dir = test::testDataDir();
  const auto mohan = PhotonBeamModel::load6MV(dir);
  const auto alsoMohan =
      PhotonBeamModel::load(dir, "spectra/egsnrc/mohan6.spectrum", "same as load6MV");
  EXPECT_EQ(alsoMohan->name, "same as load6MV");
  EXPECT_EQ(mohan->spectrum.fluence, alsoMohan->spectrum.fluence);
  EXPECT_EQ(mohan->kernel.value, alsoMohan->kernel.value);
  EXPECT_EQ(mohan->name, "6 MV (Mohan 1985 spectrum, Mackie 1988 kernels)");
  // Sheikh-Bagheri and Rogers' Varian 6 MV: softer (README: 1.673 MeV on its own bins; 1.675 MeV
  // on the kernel energies, measured), so a larger share of the TERMA goes to low energies,
  // whose kernels lose less energy: the kernel's energy fraction rises (0.9602 vs 0.9581).
  const auto varian = PhotonBeamModel::load(dir, "spectra/cerr/6MVVarian.spectrum", "Varian");
  EXPECT_EQ(varian->name, "Varian");
  EXPECT_EQ(varian->spectrum.energyMeV, mohan->spectrum.energyMeV);
  EXPECT_NEAR(varian->spectrum.meanEnergyMeV(), 1.675, 0.001);
  EXPECT_NEAR(mohan->spectrum.meanEnergyMeV(), 1.899, 0.01);
  EXPECT_GT(varian->kernel.energyFraction(), mohan->kernel.energyFraction() + 0.001);
  EXPECT_EQ(varian->gyPerMuPerRawDose, 0.0);  // calibrated by the dose engine
}

TEST(PhotonBeamModel, LoadRejectsMissingFilesAndSpectraBeyondTheKernels) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const std::string dir = test::testDataDir();
  expectError([&] { PhotonBeamModel::load(dir, "spectra/none.spectrum", "X"); }, ErrorCode::Io,
              "spectra/none.spectrum");
  // Mohan 10 MV puts most of its energy fluence above 6 MeV, the Mackie kernels' last energy.
  expectError([&] { PhotonBeamModel::load(dir, "spectra/egsnrc/mohan10.spectrum", "10 MV"); },
              ErrorCode::InvalidArgument, "above 6");
}

TEST(PhotonBeamModel, FindDataDirHonoursEnvironment) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  auto saved = [](const char* v) {
    const char* s = std::getenv(v);
    return s ? std::optional<std::string>(s) : std::nullopt;
  };
  const auto oldData = saved("PENUMBRA_DATA");
  const std::string data = test::testDataDir();
  setenv("PENUMBRA_DATA", data.c_str(), 1);
  EXPECT_EQ(findPhotonDataDir(), data);
  // A folder without photon-beam/ is skipped in favour of the next candidate.
  const std::string empty = tempPath("empty_data");
  fs::create_directories(empty);
  setenv("PENUMBRA_DATA", empty.c_str(), 1);
  const std::string found = findPhotonDataDir();
  EXPECT_NE(found, empty);
  EXPECT_TRUE(fs::is_directory(fs::path(found) / "photon-beam")) << found;
  fs::remove_all(empty);
  if (oldData)
    setenv("PENUMBRA_DATA", oldData->c_str(), 1);
  else
    unsetenv("PENUMBRA_DATA");
}

// ---- cone collapse ---------------------------------------------------------------------------

class PhotonConeCollapse : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::haveData("photon-beam")) GTEST_SKIP() << "test data not found: photon-beam";
    model_ = PhotonBeamModel::load6MV(test::testDataDir());
  }
  std::shared_ptr<const PhotonBeamModel> model_;
};

TEST_F(PhotonConeCollapse, ConservesEnergyAndBuildsDirections) {
  for (int nPolar : {1, 4, 8, 12, 48}) {
    const int nAz = 12;
    const ConeSet set = collapseKernel(model_->kernel, nPolar, nAz);
    ASSERT_EQ(static_cast<int>(set.bands.size()), nPolar);
    ASSERT_EQ(static_cast<int>(set.directions.size()), nPolar * nAz);
    EXPECT_EQ(set.nPolar, nPolar);
    EXPECT_EQ(set.nAzimuth, nAz);
    double total = 0;
    for (int b = 0; b < nPolar; ++b) {
      const ConeBand& band = set.bands[b];
      total += band.fraction;
      EXPECT_NEAR(band.A + band.B, band.fraction, 1e-12);
      EXPECT_NEAR(band.cumulative.back(), band.fraction, 1e-12);
      EXPECT_GE(band.A, 0);
      EXPECT_GE(band.B, 0);
      EXPECT_GT(band.a, band.b);
      EXPECT_GT(band.b, 0);
      EXPECT_NEAR(band.polarHiDeg - band.polarLoDeg, 180.0 / nPolar, 1e-4);
      EXPECT_GT(band.axisDeg, band.polarLoDeg);
      EXPECT_LT(band.axisDeg, band.polarHiDeg);
      double w = 0;
      for (int j = 0; j < nAz; ++j) {
        const ConeDirection& d = set.directions[b * nAz + j];
        EXPECT_EQ(d.band, b);
        w += d.weight;
        EXPECT_NEAR(d.x * d.x + d.y * d.y + d.z * d.z, 1.0, 1e-12);
        EXPECT_NEAR(std::acos(d.z) * 180.0 / M_PI, band.axisDeg, 1e-9);
        EXPECT_NEAR(std::atan2(d.y, d.x), std::remainder((j + 0.5) * 2 * M_PI / nAz, 2 * M_PI),
                    1e-9);
      }
      EXPECT_NEAR(w, 1.0, 1e-12);
    }
    EXPECT_NEAR(total, model_->kernel.energyFraction(), 1e-12) << nPolar;
  }
}

TEST_F(PhotonConeCollapse, EightBandFitsReproduceTheCumulativeKernel) {
  const ConeSet set = collapseKernel(model_->kernel, 8, 12);
  const auto& r = model_->kernel.radiusCm;
  for (std::size_t b = 0; b < set.bands.size(); ++b) {
    const ConeBand& band = set.bands[b];
    double maxErr = 0, maxErrAll = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double err = std::abs(fitK(band, r[i]) - band.cumulative[i]) / band.fraction;
      maxErrAll = std::max(maxErrAll, err);
      if (r[i] <= kConeFitMaxRadiusCm) maxErr = std::max(maxErr, err);
    }
    EXPECT_NEAR(maxErr, band.fitMaxRelError, 1e-9) << "band " << b;
    std::printf(
        "band %zu [%6.2f,%6.2f] axis %7.3f deg  fraction %.6f  A %.6f a %.5f /cm  "
        "B %.6f b %.6f /cm  max rel err %.4f (to 20 cm), %.4f (to 60 cm)\n",
        b, band.polarLoDeg, band.polarHiDeg, band.axisDeg, band.fraction, band.A, band.a, band.B,
        band.b, band.fitMaxRelError, maxErrAll);
    // Tolerances: measured max errors within the fit range (radii <= 20 cm) when this test was
    // written were 0.86 % and 0.81 % of the band energy for the two bands within 45 deg (which
    // carry ~68 % of the kernel energy and set the depth dose), 1.5-5.7 % for the others. A sum
    // of two exponentials cannot follow both the knee at the end of the primary-electron range
    // (~2 cm) and the slow scatter tail, so the bound is loose for the small lateral and
    // backward bands.
    EXPECT_LT(band.fitMaxRelError, band.axisDeg < 45 ? 0.01 : 0.07) << "band " << b;
    // Beyond 20 cm the fit deposits more slowly than the table (whose cumulative must reach the
    // band energy at its last radius, 60 cm): measured 3.3 % and 3.4 % of the band energy still
    // undeposited at 60 cm for the forward bands. That energy leaves a patient-sized volume.
    if (band.axisDeg < 45) {
      EXPECT_LT(maxErrAll, 0.04) << "band " << b;
      EXPECT_LT(fitK(band, r.back()), band.cumulative.back());
    }
  }
  // Build-up region: for the forward band the fit follows the primary-electron rise within
  // 1.5 % of the band energy out to 2 cm (measured 0.86 %; the dose maximum of 6 MV lies at
  // ~1.5 cm).
  const ConeBand& fwd = set.bands[0];
  double buildUpErr = 0;
  for (std::size_t i = 0; i < r.size() && r[i] <= 2.0; ++i)
    buildUpErr = std::max(buildUpErr, std::abs(fitK(fwd, r[i]) - fwd.cumulative[i]));
  std::printf("forward band: max error within 2 cm %.4f of the band energy\n",
              buildUpErr / fwd.fraction);
  EXPECT_LT(buildUpErr, 0.015 * fwd.fraction);
  // The fast component is the primary-electron part: its range 1/a is millimetres, the slow one
  // (scattered photons) tens of cm; the slow decay follows the kernel's scatter tail within the
  // fit range (b 0.041 /cm measured), not the 0.046 /cm that a fit out to 60 cm forces (that fit
  // raised PDD(10) of the 10 x 10 cm^2 field by 2.3 points, see cone_collapse.cpp).
  EXPECT_GT(fwd.a, 1.0);
  EXPECT_GT(fwd.b, 0.03);
  EXPECT_LT(fwd.b, 0.044);
}

TEST_F(PhotonConeCollapse, RejectsBadCounts) {
  for (int nPolar : {0, -8, 5, 7, 9, 96})
    expectError([&] { collapseKernel(model_->kernel, nPolar, 12); }, ErrorCode::InvalidArgument,
                "nPolar");
  for (int nAz : {0, -1})
    expectError([&] { collapseKernel(model_->kernel, 8, nAz); }, ErrorCode::InvalidArgument,
                "nAzimuth");
}

}  // namespace
}  // namespace penumbra::photon
