#pragma once
// Helpers of the Compare workspace's GUI tests (test_compare.cpp, test_compare_views.cpp):
// RayStation's brain SRS doses opened without CT, a gamma run through the panel, and pixel
// classes of the gamma map. Waits on signals, never on sleeps.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include <QColor>
#include <QComboBox>
#include <QSignalSpy>

#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_panel.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"

namespace penumbra::test {

constexpr int kCompareTimeoutMs = 300000;
inline const char* kBrain = "patients/brain-srs-raystation";

inline bool haveBrainCase() { return haveData(std::string(kBrain) + "/imrt") && haveData(std::string(kBrain) + "/vmat"); }

/// Opens the brain SRS folder's two RT Doses and structures without CT; IMRT (max 61.97 Gy) and
/// VMAT (52.50 Gy) told apart by their maxima. False on failure or timeout.
inline bool openBrainDoses(gui::PlanningWorkspace* ws, std::shared_ptr<const gui::DoseSet>& imrt,
                           std::shared_ptr<const gui::DoseSet>& vmat) {
  QSignalSpy opened(ws->fileActions(), &gui::PlanFileActions::doseOnlyOpened);
  if (!ws->fileActions()->openDoseWithoutCt(QString::fromStdString(dataPath(kBrain)))) return false;
  if (opened.isEmpty() && !opened.wait(kCompareTimeoutMs)) return false;
  gui::DoseSetStore* store = ws->doseSets();
  if (store->count() != 2) return false;
  const bool firstIsImrt = store->at(0)->maxGy > store->at(1)->maxGy;
  imrt = store->at(firstIsImrt ? 0 : 1);
  vmat = store->at(firstIsImrt ? 1 : 0);
  return true;
}

/// Runs the panel's comparison of `a` against `b` on the CPU; the comparison or null.
inline std::shared_ptr<const gui::Comparison> compareOnCpu(gui::PlanningWorkspace* ws, int a, int b) {
  gui::ComparePanel* panel = ws->comparePanel();
  if (!panel->setDoseSets(a, b)) return nullptr;
  auto* backend = panel->findChild<QComboBox*>("compareBackendCombo");
  backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
  QSignalSpy finished(ws->compareController(), &gui::CompareController::finished);
  panel->compute();
  if (finished.isEmpty() && !finished.wait(kCompareTimeoutMs)) return nullptr;
  return finished.first().at(0).toBool() ? ws->comparison()->current() : nullptr;
}

/// The display-grid index of `dose`'s maximum voxel (where the slices show the most).
inline Vec3 displayIndexOfMax(const gui::PatientScene& scene, const Volume<float>& dose) {
  const std::size_t at = std::size_t(std::max_element(dose.data.begin(), dose.data.end()) - dose.data.begin());
  const auto& d = dose.grid.dims;
  const Vec3 ijk{double(at % std::size_t(d[0])), double(at / std::size_t(d[0]) % std::size_t(d[1])),
                 double(at / (std::size_t(d[0]) * std::size_t(d[1])))};
  return scene.grid().worldToIndex(dose.grid.indexToWorld(ijk));
}

inline bool warm(QColor c) { return c.red() > 120 && c.red() > c.blue() + 80; }
inline bool cool(QColor c) { return c.blue() > c.red() + 10 && c.blue() > 60; }

/// Reference voxels on slice k whose 3 x 3 in-plane neighbourhood is all failing (fail) or all
/// passing: their pixels cannot be blurred into the other class by rounding.
inline std::vector<std::array<int, 3>> interiorVoxels(const Volume<float>& gamma, int k, bool fail, std::size_t most) {
  std::vector<std::array<int, 3>> out;
  const auto& d = gamma.grid.dims;
  auto is = [&](int i, int j) {
    const float g = gamma.at(i, j, k);
    return std::isfinite(g) && (fail ? g > 1.0f : g <= 1.0f);
  };
  for (int j = 2; j + 2 < d[1] && out.size() < most; j += 2)
    for (int i = 2; i + 2 < d[0] && out.size() < most; i += 2) {
      bool all = true;
      for (int dj = -1; dj <= 1 && all; ++dj)
        for (int di = -1; di <= 1 && all; ++di) all = is(i + di, j + dj);
      if (all) out.push_back({i, j, k});
    }
  return out;
}

}  // namespace penumbra::test
