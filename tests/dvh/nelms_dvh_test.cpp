// Acceptance: the analytical DVH benchmark of Nelms et al. (Med Phys 42:4435, 2015), all 40
// reference rows of reference/analytical_dvh_points.csv, each its own test. Each row maps to
// its structure set (RS_<2|3>mm/<name>.dcm) and dose (RD/Linear_<AntPost|SupInf>_<n>mm_Aligned:
// Z(AP) = AntPost, Y(SI) = SupInf). Tolerances (issue 4): volume 2 %, Dmean 0.1 Gy,
// Dmin/Dmax/D99/D95/D5/D1 0.5 Gy, cumulative curve within 2 % of the volume at every
// tabulated dose, for every row with no exception (the shape-based interpolation between the
// contour planes reconstructs the round ends of the shapes lying across the planes, which the
// slab model missed by up to 4.6 %). Each test logs one line of our errors next to
// dicompyler-core's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "dicom/rt_dose_reader.hpp"
#include "dicom/rtstruct_reader.hpp"
#include "dvh/dvh.hpp"
#include "test_data.hpp"

using namespace penumbra;

namespace {

const std::string kRoot = "patients/nelms-dvh-phantom";

using Table = std::vector<std::map<std::string, std::string>>;

// Minimal CSV reader (quoted cells with commas, as in "X,Z=1mm"); blank cells stay "".
Table readCsv(const std::string& path) {
  Table rows;
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) cells.push_back(std::exchange(cell, {}));
      else cell += ch;
    }
    cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = i < cells.size() ? cells[i] : "";
    rows.push_back(std::move(row));
  }
  return rows;
}

double num(const std::string& s) { return s.empty() ? 0.0 : std::stod(s); }

struct NelmsRow {
  std::string structure, ctSpacing, gradient;  // "Sphere_20_0", "2mm", "AP" | "SI"
  int doseVoxel = 0;
  std::map<std::string, std::string> values;
  std::string rsFile() const { return kRoot + "/RS_" + ctSpacing + "/" + structure + ".dcm"; }
  std::string rdFile() const {
    return kRoot + "/RD/Linear_" + (gradient == "AP" ? "AntPost" : "SupInf") + "_" +
           std::to_string(doseVoxel) + "mm_Aligned.dcm";
  }
  std::string shape() const { return structure.substr(0, structure.find('_')); }
};

// Readable test parameter in gtest's failure messages.
void PrintTo(const NelmsRow& row, std::ostream* os) {
  *os << row.structure << " " << row.gradient << " (" << row.rdFile() << ")";
}

std::vector<NelmsRow> nelmsRows() {
  std::vector<NelmsRow> out;
  for (auto& r : readCsv(test::dataPath(kRoot + "/reference/analytical_dvh_points.csv"))) {
    NelmsRow n;
    n.structure = r["structure_name"];
    n.ctSpacing = r["ct_slice_spacing"];
    n.gradient = r["gradient_direction"].find("AP") != std::string::npos ? "AP" : "SI";
    n.doseVoxel = int(num(r["dose_voxel_mm"]));
    n.values = r;
    out.push_back(std::move(n));
  }
  return out;
}

std::string rowName(const testing::TestParamInfo<NelmsRow>& info) {
  return info.param.structure + "_" + info.param.gradient;
}

const DoseVolume& cachedDose(const std::string& rel) {
  static std::map<std::string, DoseVolume> cache;
  auto it = cache.find(rel);
  if (it != cache.end()) return it->second;
  io::RtDoseImport d = io::readRtDose(test::dataPath(rel));
  EXPECT_TRUE(d.ok()) << rel;
  return cache.emplace(rel, std::move(d.dose)).first->second;
}

class DvhNelms : public testing::TestWithParam<NelmsRow> {};

}  // namespace

TEST_P(DvhNelms, MatchesAnalyticalValues) {
  PENUMBRA_REQUIRE_DATA(kRoot);
  const NelmsRow& row = GetParam();
  io::RtStructContents rs;
  io::ImportMessages messages;
  ASSERT_TRUE(io::readRtStructFile(test::dataPath(row.rsFile()), rs, messages)) << row.rsFile();
  const Structure* shape = nullptr;
  for (const auto& s : rs.set.structures)
    if (s.contours.size() > 1) shape = &s;  // skip POI_1, a marker without contours
  ASSERT_NE(shape, nullptr);
  const DoseVolume& dose = cachedDose(row.rdFile());
  ASSERT_FALSE(dose.empty());

  const dvh::DvhResult r = dvh::computeContourDvh(*shape, dose);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  const auto& v = row.values;
  const double refVol = num(v.at("volume_cc"));
  const double volPct = 100.0 * (r.stats.volumeCc - refVol) / refVol;
  struct Metric {
    const char* name;
    double ours, ref, tol;
  };
  const Metric metrics[] = {
      {"Dmean", r.stats.meanGy, num(v.at("Dmean_cGy")) / 100, 0.1},
      {"Dmin", r.stats.minGy, num(v.at("Dmin_cGy")) / 100, 0.5},
      {"Dmax", r.stats.maxGy, num(v.at("Dmax_cGy")) / 100, 0.5},
      {"D99", r.stats.d99Gy, num(v.at("D99_cGy")) / 100, 0.5},
      {"D95", r.stats.d95Gy, num(v.at("D95_cGy")) / 100, 0.5},
      {"D5", r.stats.d5Gy, num(v.at("D5_cGy")) / 100, 0.5},
      {"D1", r.stats.d1Gy, num(v.at("D1_cGy")) / 100, 0.5},
  };
  EXPECT_NEAR(volPct, 0.0, 2.0) << "volume " << r.stats.volumeCc << " cc vs " << refVol;
  for (const auto& m : metrics) EXPECT_NEAR(m.ours, m.ref, m.tol) << m.name;

  // Cumulative curve against the analytical table (cGy every 0.5 cGy; blank = 0 cc).
  const std::string column = "volume_cc_" + row.gradient + "_" + std::to_string(row.doseVoxel) + "_mm";
  double curveMax = 0, curveAt = 0;
  for (auto& c : readCsv(test::dataPath(kRoot + "/reference/analytical_cdvh_" + row.shape() + ".csv"))) {
    const double d = num(c["dose_cGy"]) / 100;
    const double diff = std::abs(dvh::volumeAtDoseCc(r.curve, d) - num(c[column]));
    if (diff > curveMax) {
      curveMax = diff;
      curveAt = d;
    }
  }
  const double curvePct = 100 * curveMax / refVol;
  EXPECT_LE(curvePct, 2.0) << "largest curve difference at " << curveAt << " Gy";

  // dicompyler-core 0.5.5 (default settings) on the same pair, for the log.
  std::string dpy = "dicompyler: n/a";
  const std::string rsName = row.structure + ".dcm";
  const std::string rdName = row.rdFile().substr(row.rdFile().rfind('/') + 1);
  for (auto& c : readCsv(test::dataPath(kRoot + "/dvh_dicompyler/comparison_vs_analytical.csv")))
    if (c["settings"] == "default" && c["rs"] == rsName && c["rd"] == rdName) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "dicompyler: vol %+6.2f%% mean %+5.2f min %+5.2f max %+5.2f D99 %+5.2f D95 "
                    "%+5.2f D5 %+5.2f D1 %+5.2f curve %s%%",
                    100 * num(c["diff_volume_cc"]) / refVol, num(c["diff_mean_Gy"]),
                    num(c["diff_min_Gy"]), num(c["diff_max_Gy"]), num(c["diff_D99_Gy"]),
                    num(c["diff_D95_Gy"]), num(c["diff_D5_Gy"]), num(c["diff_D1_Gy"]),
                    c["curve_max_abs_dV_pct"].empty() ? "-" : c["curve_max_abs_dV_pct"].c_str());
      dpy = buf;
    }
  std::printf("NELMS %-20s %s | ours: vol %+6.2f%% mean %+5.2f min %+5.2f max %+5.2f D99 %+5.2f "
              "D95 %+5.2f D5 %+5.2f D1 %+5.2f curve %5.2f%% (%.0f ms, %zu samples, step %.3f mm)"
              " | %s\n",
              row.structure.c_str(), row.gradient.c_str(), volPct, metrics[0].ours - metrics[0].ref,
              metrics[1].ours - metrics[1].ref, metrics[2].ours - metrics[2].ref,
              metrics[3].ours - metrics[3].ref, metrics[4].ours - metrics[4].ref,
              metrics[5].ours - metrics[5].ref, metrics[6].ours - metrics[6].ref, curvePct,
              1000 * r.seconds, r.samples, r.stepMm[0], dpy.c_str());
}

INSTANTIATE_TEST_SUITE_P(AllRows, DvhNelms,
                         testing::ValuesIn(test::haveData(kRoot) ? nelmsRows()
                                                                 : std::vector<NelmsRow>{}),
                         rowName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DvhNelms);

TEST(DvhNelmsData, HasAllFortyReferenceRows) {
  PENUMBRA_REQUIRE_DATA(kRoot);
  EXPECT_EQ(nelmsRows().size(), 40u);
}
