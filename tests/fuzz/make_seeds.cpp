// penumbra_fuzz_seeds OUT [SOURCE_DIR] [DATA_DIR]: writes the seed corpus of every harness into
// OUT/<target>/: small files made by Penumbra's own writers (so the seeds follow the formats
// exactly as the app writes them), the hand-written seeds of tests/fuzz/seeds, and a few small
// files of the shared test data when DATA_DIR (PENUMBRA_TEST_DATA) exists. Nothing is copied
// into the repository; the corpus lives in the build folder.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "matrix/matrix_io.hpp"
#include "mcml/mcml_files.hpp"
#ifdef PENUMBRA_HAVE_CASE_FILES
#include "case/case_file.hpp"
#endif
#ifdef PENUMBRA_HAVE_DICOM
#include "dicom/rt_dose_writer.hpp"
#include "dicom/synthetic_phantom.hpp"
#include "fuzz_phantom.hpp"
#endif

namespace fs = std::filesystem;
using namespace penumbra;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

/// Copies the listed files of `from` that exist and are at most `maxBytes` (large seeds slow
/// every execution; libFuzzer's -max_len keeps inputs near the seeds' size).
int copySome(const fs::path& from, const std::vector<std::string>& names, const fs::path& to,
             std::uintmax_t maxBytes = 48 * 1024) {
  int n = 0;
  for (const auto& name : names) {
    std::error_code ec;
    const fs::path p = from / name;
    if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) > maxBytes) continue;
    fs::create_directories(to);
    fs::copy_file(p, to / fs::path(name).filename(), fs::copy_options::overwrite_existing, ec);
    n += !ec;
  }
  return n;
}

/// Joins the files of a multi-file input (fuzz_support.hpp, kNextFile).
std::string joined(const std::vector<std::string>& files) {
  std::string all;
  for (std::size_t i = 0; i < files.size(); ++i)
    all += (i ? std::string(fuzz::kNextFile) : std::string()) + slurp(files[i]);
  return all;
}

#ifdef PENUMBRA_HAVE_DICOM
void dicomSeeds(const fs::path& out, const fs::path& work) {
  // CT: a 3-slice series (whole and slice by slice) and a 4-slice one with a missing slice, at
  // non-square pixels; their structure sets (a box, a box with a hole, a sphere).
  io::SyntheticPhantomSpec spec = fuzz::tinyCtSpec(3);
  spec.writeStructureSet = true;
  auto files = io::writeSyntheticPhantom((work / "ct3").string(), spec);
  put(out / "ct", "series3.dcm", joined(files.ctFiles));
  for (std::size_t i = 0; i < files.ctFiles.size(); ++i)
    put(out / "ct", "slice" + std::to_string(i) + ".dcm", slurp(files.ctFiles[i]));
  put(out / "rtstruct", "synthetic_box.dcm", slurp(files.structureSetFile));

  spec.slices = 4;
  spec.omitSlices = {2};
  spec.structures = io::defaultSyntheticStructures(spec);
  io::SyntheticStructureSpec ring;
  ring.name = "Ring";
  ring.shape = io::SyntheticStructureSpec::Shape::BoxWithHole;
  ring.center = {4, 5, 3};
  ring.halfSize = {4, 4, 3};
  ring.holeHalfSize = {2, 2, 0};
  io::SyntheticStructureSpec ball;
  ball.name = "Ball";
  ball.interpretedType = "PTV";
  ball.shape = io::SyntheticStructureSpec::Shape::Sphere;
  ball.center = {4, 5, 3};
  ball.radius = 3;
  spec.structures.push_back(ring);
  spec.structures.push_back(ball);
  files = io::writeSyntheticPhantom((work / "ct4").string(), spec);
  put(out / "ct", "series4_missing_slice.dcm", joined(files.ctFiles));
  put(out / "rtstruct", "synthetic_ring_ball.dcm", slurp(files.structureSetFile));

  // RT Dose: 16- and 32-bit exports of a 4 x 3 x 2 dose.
  DoseVolume dose;
  Grid g;
  g.dims = {4, 3, 2};
  g.spacing = {2.5, 2.0, 3.0};
  g.origin = {-4, -2, 1};
  dose.dose = Volume<float>(g, 0.0f);
  for (std::size_t i = 0; i < dose.dose.data.size(); ++i) dose.dose.data[i] = 0.25f * float(i);
  for (const int bits : {16, 32}) {
    io::RtDoseWriteOptions o;
    o.bitsAllocated = bits;
    o.frameOfReferenceUid = "1.2.826.0.1.3680043.8.498.1";
    o.referencedPlanSopInstanceUid = "1.2.826.0.1.3680043.8.498.2";
    const std::string path = (work / ("RD" + std::to_string(bits) + ".dcm")).string();
    io::writeRtDose(path, dose, o);
    put(out / "rtdose", "synthetic_" + std::to_string(bits) + "bit.dcm", slurp(path));
  }
}
#endif

void otherSeeds(const fs::path& out, const fs::path& work) {
  // .mci: two runs written by formatMci.
  io::MciRun run;
  run.outputFile = "two.mco";
  run.medium.nAbove = 1.0;
  run.medium.nBelow = 1.4;
  run.medium.layers = {{1.37, 1.0, 100.0, 0.9, 0.1}, {1.4, 0.3, 50.0, 0.8, 0.2}};
  run.config.packets = 1000;
  run.config.nz = 10;
  run.config.nr = 12;
  run.config.na = 5;
  io::MciRun second = run;
  second.outputFile = "one.mco";
  second.outputFormat = 'B';
  second.medium.layers.resize(1);
  put(out / "mci", "two_runs.mci", io::formatMci({run, second}));

  // Matrices: 3 x 4 with an empty row, written in both formats; an empty 0 x 0 matrix.
  spmv::HalfCsr m;
  m.rows = 3;
  m.cols = 4;
  m.rowPtr = {0, 2, 2, 4};
  m.colIdx = {0, 3, 1, 2};
  m.values = {io::doubleToHalfBits(1.5), io::doubleToHalfBits(-0.25), io::doubleToHalfBits(1e-3),
              io::doubleToHalfBits(700.0)};
  m.scale = 0.125;
  spmv::HalfCsr empty;
  empty.rowPtr = {0};
  for (const auto& [name, mat] : {std::pair{"3x4", &m}, std::pair{"empty", &empty}}) {
    const std::string mtx = (work / (std::string(name) + ".mtx")).string();
    const std::string pcsr = (work / (std::string(name) + ".pcsr")).string();
    io::writeMatrixMarket(*mat, mtx);
    io::writeBinaryCsr(*mat, pcsr);
    put(out / "mtx", std::string(name) + ".mtx", slurp(mtx));
    put(out / "pcsr", std::string(name) + ".pcsr", slurp(pcsr));
  }

#ifdef PENUMBRA_HAVE_CASE_FILES
  // Case: a proton beam with two layers, a photon beam with an aperture, every section.
  io::CaseFile c;
  c.data.dicomFolder = "../data/BOXPHANTOM";
  c.data.seriesKey = "1.2.3";
  c.prescription = {"PTV", 2.0, 30};
  proton::ProtonBeam pb;
  pb.name = "G90";
  pb.gantryDeg = 90;
  pb.isocenter = {1, 2, 3};
  pb.layers = {{120.5, {{0, 0, 1}, {5, -5, 0.5}}}, {130, {{2.5, 0, 2}}}};
  c.beams.push_back(pb);
  io::CasePhotonBeam xb;
  xb.beam.name = "X G0";
  xb.beam.aperture = {{{-10, -10}, {10, -10}, {0, 12}}};
  xb.apertureTarget = "PTV";
  xb.apertureMarginMm = 5;
  c.photonBeams.push_back(xb);
  c.displayJson = R"({"window":[400,40],"isodose":[95,50],"clip":true})";
  c.doseSets.push_back({"run 1", "dose1.mhd"});
  c.optimisation.objectives = {
      {"PTV", optimise::StructureRole::Target, {{optimise::TermType::MinDose, 1.94, 20}}},
      {"Cord", optimise::StructureRole::OrganAtRisk, {{optimise::TermType::MeanDose, 0, 0.5}}}};
  c.optimisation.options = io::CaseOptimiserOptions{};
  c.optimisation.options->robustMode = optimise::RobustMode::CompositeWorstCase;
  c.robustness = io::CaseRobustness{};
  c.robustness->scenarios.sphereDirections = 26;
  put(out / "case", "full.json", io::formatCaseFile(c));
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT [SOURCE_DIR] [DATA_DIR]\n", argv[0]);
    return 2;
  }
  try {
    const fs::path out = argv[1];
    const fs::path work = out / ".work";
    fs::create_directories(out);
#ifdef PENUMBRA_HAVE_DICOM
    dicomSeeds(out, work);
#endif
    otherSeeds(out, work);
    if (argc > 2) {
      // Hand-written seeds (tests/fuzz/seeds/<target>/) and the MCML test inputs.
      const fs::path src = argv[2];
      std::error_code ec;
      for (const auto& dir : fs::directory_iterator(src / "tests/fuzz/seeds", ec))
        for (const auto& f : fs::directory_iterator(dir.path()))
          copySome(dir.path(), {f.path().filename().string()}, out / dir.path().filename());
      copySome(src / "tests/mcml/data", {"skin_633nm.mci", "slab_matched.mci"}, out / "mci");
    }
    if (argc > 3 && fs::is_directory(argv[3])) {
      const fs::path data = argv[3];
      const fs::path samples = data / "dicom-samples";
      int n = copySome(
          samples,
          {"CT_small.dcm", "MR_small_RLE.dcm", "MR_small_bigendian.dcm", "MR_small_implicit.dcm",
           "MR_small_jpeg_ls_lossless.dcm", "no_meta.dcm", "JPEG-lossy.dcm"},
          out / "ct");
      n += copySome(samples, {"rtstruct.dcm"}, out / "rtstruct");
      n += copySome(samples,
                    {"rtdose.dcm", "rtdose_1frame.dcm", "rtdose_expb_1frame.dcm",
                     "rtdose_rle_1frame.dcm", "rtdose_rle.dcm"},
                    out / "rtdose");
      n += copySome(data / "patients/nelms-dvh-phantom/RD", {"Linear_AntPost_3mm_Aligned.dcm"},
                    out / "rtdose");
      std::printf("penumbra_fuzz_seeds: %d files from %s\n", n, data.c_str());
    } else {
      std::printf("penumbra_fuzz_seeds: no shared data; generated seeds only\n");
    }
    fs::remove_all(work);
    for (const auto& d : fs::directory_iterator(out)) {
      int files = 0;
      for ([[maybe_unused]] const auto& f : fs::directory_iterator(d.path())) ++files;
      std::printf("  %-10s %d seed(s)\n", d.path().filename().c_str(), files);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "penumbra_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
