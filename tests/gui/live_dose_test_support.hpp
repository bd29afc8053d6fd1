#pragma once
// Shared by the live-dose GUI tests (test_live_dose.cpp, test_live_dose_edits.cpp): the
// BOXPHANTOM case with one open 10 x 10 cm photon field at gantry 0 on OuterTarget, the CPU
// backend, a coarse dose grid and few cones, so that a live run takes a fraction of a second on
// two shared cores.
#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>

#include "core/volume.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/plan/beam_editor_panel.hpp"
#include "gui/plan/live_dose_controller.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

namespace penumbra::test {

constexpr int kImportTimeoutMs = 120000;
// The first live run also calibrates the photon beam model (a 10 x 10 field in water, once).
constexpr int kLiveTimeoutMs = 300000;
constexpr double kGridMm = 8;      // the plan's dose grid: coarse, for two shared cores
constexpr double kPreviewMm = 12;  // the preview grid while edits come

/// The test data the live-dose tests need, or a reason to skip ("" when all are there).
inline QString missingLiveDoseData() {
  for (const char* rel : {"phantoms/BOXPHANTOM", "photon-beam"})
    if (!haveData(rel)) return "test data not found: " + QString::fromStdString(dataPath(rel)) + " (set PENUMBRA_TEST_DATA)";
  return {};
}

/// Opens BOXPHANTOM in `window`, sets the coarse CPU settings and adds the photon beam (index 0).
inline bool setUpLiveDoseCase(gui::MainWindow& window) {
  using namespace penumbra::gui;
  QStandardPaths::setTestModeEnabled(true);
  window.show();
  if (!QTest::qWaitForWindowExposed(&window) || !openBoxPhantom(window, kImportTimeoutMs)) return false;
  PlanningWorkspace* ws = window.planning();
  ws->controller()->setShowErrorDialogs(false);
  auto* backend = find<QComboBox>(&window, "backendCombo");
  backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
  find<QDoubleSpinBox>(&window, "doseGridSpin")->setValue(kGridMm);
  auto* polar = find<QComboBox>(&window, "photonPolarConesCombo");
  polar->setCurrentIndex(polar->findData(4));
  find<QSpinBox>(&window, "photonAzimuthSpin")->setValue(6);
  ws->liveDose()->setPreviewSpacingMm(kPreviewMm);
  find<QComboBox>(&window, "targetCombo")->setCurrentText("OuterTarget");
  find<QDoubleSpinBox>(&window, "gantrySpin")->setValue(0);
  return ws->beamEditor()->addPhotonBeam() == 0;
}

/// The generation a live dose set was computed for (its parameters' "generation=N").
inline int generationOf(const gui::DoseSet& set) {
  static const QRegularExpression re("generation=(\\d+)");
  const auto m = re.match(QString::fromStdString(set.dose.parameters));
  return m.hasMatch() ? m.captured(1).toInt() : -1;
}

/// The newest edit's dose is on screen on the full grid, and nothing more is coming.
inline bool fullShown(const gui::LiveDoseController* live) {
  return !live->isBusy() && live->published().generation == live->generation() &&
         live->published().grid == gui::LiveGrid::Full;
}

/// Largest |a - b| and largest a [Gy]; a.size() must equal b.size().
inline std::pair<double, double> maxDifference(const Volume<float>& a, const Volume<float>& b) {
  double diff = 0, peak = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    peak = std::max(peak, double(a.data[i]));
    diff = std::max(diff, double(std::abs(a.data[i] - b.data[i])));
  }
  return {diff, peak};
}

}  // namespace penumbra::test
