#pragma once
/// Everything proton planning adds to the main window, in one place so that main_window stays
/// small and later panels (DVH, profiling, export, case files) plug into the same objects:
///   models   PlanModel (beams, spots, prescription), DoseSetStore (dose sets, current one),
///            DoseDisplaySettings, JobRunner (every engine run), PlanController (the logic);
///   displays dose wash, isodose lines and beam projections on the three slice views, beams
///            and isodose surfaces in the 3D view;
///   docks    Plan (beam/spot editor + dose launcher + live-dose toggle), Dose (display),
///            Beam's eye view, Jobs, DVH (DvhStore: one DVH job per dose set), Kernel profiling
///            and Compare (gamma and difference of two dose sets, ComparisonModel; its maps on
///            the slice views), Robustness (error scenarios: table, worst-case and spread dose
///            sets, DVH bands; RobustnessModel);
///   menu     Plan, and the File menu's case and DICOM RT entries (PlanFileActions);
///            the status-bar dose read-out under the cursor and the live dose's state.
/// A new patient cancels running jobs and clears the plan and the dose sets.
#include <array>

#include <QObject>
#include <QPointer>

#include "gui/model/slice_orientation.hpp"

class QAction;
class QDockWidget;
class QLabel;
class QMainWindow;
class QMenu;
class QToolBar;

namespace penumbra::gui {

class BeamEditorPanel;
class BevPanel;
class CompareController;
class ComparePanel;
class CompareViews;
class ComparisonModel;
class ComparisonWashDisplay;
class DoseDisplaySettings;
class DosePanel;
class DvhPanel;
class DvhStore;
class DoseSetStore;
class DoseSurfaceDisplay;
class DoseWashDisplay;
class IsodoseDisplay;
class Job;
class JobPanel;
class JobRunner;
class LiveDoseController;
class PlanController;
class PlanFileActions;
class OptimiseController;
class OptimisePanel;
struct OptimiseSettings;
class ProfilingPanel;
class PatientTree;
class RobustnessController;
class RobustnessModel;
class RobustnessPanel;
class PlanModel;
struct PlannedBeam;
class ProfileModel;
class ProfilePanel;
class SliceView;
class View3D;
class ViewState;

class PlanningWorkspace : public QObject {
  Q_OBJECT
public:
  PlanningWorkspace(QMainWindow* window, ViewState* state, std::array<SliceView*, 3> views,
                    View3D* view3d);
  ~PlanningWorkspace() override;

  PlanModel* plan() const { return plan_; }
  DoseSetStore* doseSets() const { return store_; }
  DoseDisplaySettings* displaySettings() const { return settings_; }
  JobRunner* jobs() const { return jobs_; }
  PlanController* controller() const { return controller_; }
  /// Live dose (issue 15, item 3): its toggle is in the Plan dock and menu (Ctrl+L), its state
  /// in the status bar ("liveDoseLabel").
  LiveDoseController* liveDose() const { return live_; }
  BeamEditorPanel* beamEditor() const { return beamEditor_; }
  DosePanel* dosePanel() const { return dosePanel_; }
  BevPanel* bevPanel() const { return bevPanel_; }
  JobPanel* jobPanel() const { return jobPanel_; }
  DvhStore* dvhs() const { return dvhs_; }
  DvhPanel* dvhPanel() const { return dvhPanel_; }
  ProfilingPanel* profilingPanel() const { return profilingPanel_; }
  /// Spot-weight optimisation (issue 5): the job logic and the "Optimise" dock's panel.
  OptimiseController* optimiser() const { return optimiser_; }
  OptimisePanel* optimisePanel() const { return optimisePanel_; }
  /// Dose comparison (issue 13, item 3): the comparison shown, its job logic, the "Compare"
  /// dock's panel and the gamma / difference map of each slice view.
  ComparisonModel* comparison() const { return comparison_; }
  CompareController* compareController() const { return compareController_; }
  ComparePanel* comparePanel() const { return comparePanel_; }
  ComparisonWashDisplay* comparisonDisplay(SliceOrientation o) const { return compareWash_[index(o)]; }
  /// A | B | map side by side: the main window shows it instead of its planning views while
  /// comparison()->sideBySide() is on.
  CompareViews* compareViews() const { return compareViews_; }
  /// Robustness (issue 16, item 4): the scenario settings and the last evaluation (the DVH
  /// panel draws its bands, the Optimise panel's robust option reads the settings), its job
  /// logic and the "Robustness" dock's panel.
  RobustnessModel* robustness() const { return robustness_; }
  RobustnessController* robustnessController() const { return robustController_; }
  RobustnessPanel* robustnessPanel() const { return robustnessPanel_; }
  /// Line profiles: the line drawn with the Profile tool and the "Profile" dock's chart.
  ProfileModel* profile() const { return profile_; }
  ProfilePanel* profilePanel() const { return profilePanel_; }
  /// Save/Open Case, RT Dose, RT Ion Plan and RT Plan (photons) export, RT Dose import (null
  /// before addFileActions()).
  PlanFileActions* fileActions() const { return fileActions_; }
  /// Adds the case and DICOM RT entries to the window's File menu, before `before`.
  void addFileActions(QMenu* file, QAction* before);
  /// Adds the Profile tool ("actionProfileTool", checkable) to the window's tool bar.
  void addToolBarActions(QToolBar* bar);
  IsodoseDisplay* isodoseDisplay(SliceOrientation o) const { return isodose_[index(o)]; }
  DoseWashDisplay* doseWashDisplay(SliceOrientation o) const { return wash_[index(o)]; }
  DoseSurfaceDisplay* doseSurfaces() const { return surfaces_; }
  /// The dose read-out label of the status bar ("doseInfoLabel").
  QLabel* doseInfoLabel() const { return doseInfo_; }

  /// The demo plan (used by `penumbra --demo-plan` and the README screenshots): one beam at
  /// gantry `gantryDeg` on the first target structure, spots with the panel's options
  /// (depth-weighted start), spot weights optimised with the Optimise panel's default
  /// objectives and demoOptimiseSettings() on the CPU path, and the final dose of the full
  /// engine on the CPU. Emits demoPlanFinished(ok) when that dose set is in the store (or
  /// something failed), with the time it took.
  bool runDemoPlan(double gantryDeg = 90);
  /// The optimiser settings of the demo plan (see the measurements in the .cpp).
  static OptimiseSettings demoOptimiseSettings();

  /// A beam's line in the patient tree's Plan branch: "G90 C0, 12 layers, 345 spots" for
  /// protons, "G0 C0 Col15, 100 x 100 mm, 100 MU" (jaw opening) or "..., aperture PTV, 100 MU"
  /// (conformal aperture) for photons.
  static QString beamSummary(const PlannedBeam& beam);

signals:
  void message(const QString& text);
  void demoPlanFinished(bool ok, const QString& message);

private:
  static int index(SliceOrientation o) { return o == SliceOrientation::Axial ? 0 : (o == SliceOrientation::Sagittal ? 1 : 2); }
  void buildDocks(QMainWindow* window);
  void buildMenu(QMainWindow* window);
  void onSceneChanged();
  void showDoseAt(double i, double j, double k);
  void showPrescription();
  /// Beams and dose sets listed under the patient tree's Plan branch.
  void refreshPlanBranch();

  ViewState* state_;
  PlanModel* plan_;
  DoseSetStore* store_;
  DoseDisplaySettings* settings_;
  JobRunner* jobs_;
  PlanController* controller_;
  BeamEditorPanel* beamEditor_ = nullptr;
  DosePanel* dosePanel_ = nullptr;
  BevPanel* bevPanel_ = nullptr;
  JobPanel* jobPanel_ = nullptr;
  DvhStore* dvhs_;
  DvhPanel* dvhPanel_ = nullptr;
  ProfilingPanel* profilingPanel_ = nullptr;
  OptimiseController* optimiser_;
  OptimisePanel* optimisePanel_ = nullptr;
  ComparisonModel* comparison_;
  CompareController* compareController_;
  ComparePanel* comparePanel_ = nullptr;
  CompareViews* compareViews_ = nullptr;
  ProfileModel* profile_;
  ProfilePanel* profilePanel_ = nullptr;
  RobustnessModel* robustness_;
  RobustnessController* robustController_ = nullptr;
  RobustnessPanel* robustnessPanel_ = nullptr;
  std::array<ComparisonWashDisplay*, 3> compareWash_{};
  PlanFileActions* fileActions_ = nullptr;
  std::array<IsodoseDisplay*, 3> isodose_{};
  std::array<DoseWashDisplay*, 3> wash_{};
  DoseSurfaceDisplay* surfaces_ = nullptr;
  QObject* beams3d_ = nullptr;
  QLabel* doseInfo_ = nullptr;
  QLabel* prescriptionInfo_ = nullptr;
  QLabel* liveInfo_ = nullptr;
  LiveDoseController* live_ = nullptr;
  QPointer<PatientTree> tree_;
  std::array<double, 3> lastCursor_{-1e9, -1e9, -1e9};
};

}  // namespace penumbra::gui
