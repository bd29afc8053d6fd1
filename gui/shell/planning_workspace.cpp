#include "gui/shell/planning_workspace.hpp"

#include <algorithm>

#include <QAction>
#include <QDockWidget>
#include <QFontMetrics>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QScrollArea>
#include <QStatusBar>
#include <QToolBar>

#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_panel.hpp"
#include "gui/compare/compare_views.hpp"
#include "gui/compare/profile_panel.hpp"
#include "gui/dose/dose_panel.hpp"
#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/dose/profiling_panel.hpp"
#include "gui/jobs/job_panel.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/profile_model.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/overlays/beam_display.hpp"
#include "gui/overlays/comparison_wash_display.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/overlays/profile_line_display.hpp"
#include "gui/plan/beam_editor_panel.hpp"
#include "gui/plan/bev_panel.hpp"
#include "gui/plan/live_dose_controller.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/robust/robustness_controller.hpp"
#include "gui/robust/robustness_panel.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/views/patient_tree.hpp"
#include "gui/views/slice_view.hpp"
#include "gui/views/view3d.hpp"

namespace penumbra::gui {

namespace {
/// The right column's width while the Robustness dock is raised from the menu, and the
/// beam's-eye view's height under it [px].
constexpr int kRobustnessDockWidth = 440;
constexpr int kBevHeightBesideRobustness = 200;
}  // namespace

PlanningWorkspace::PlanningWorkspace(QMainWindow* window, ViewState* state,
                                     std::array<SliceView*, 3> views, View3D* view3d)
    : QObject(window),
      state_(state),
      plan_(new PlanModel(this)),
      store_(new DoseSetStore(this)),
      settings_(new DoseDisplaySettings(this)),
      jobs_(new JobRunner(this)),
      controller_(new PlanController(state, plan_, store_, jobs_, window, this)),
      dvhs_(new DvhStore(state, store_, plan_, jobs_, this)),
      optimiser_(new OptimiseController(state, plan_, store_, jobs_, controller_, this)),
      comparison_(new ComparisonModel(this)),
      compareController_(new CompareController(state, store_, jobs_, comparison_, this)),
      profile_(new ProfileModel(this)),
      robustness_(new RobustnessModel(this)) {
  for (SliceView* v : views) {
    const SliceOrientation o = v->orientation();
    auto* wash = new DoseWashDisplay(v->renderer(), state, o, store_, settings_, plan_);
    wash->setComparisonModel(comparison_);  // steps aside while a gamma / A - B map is shown
    auto* compareWash = new ComparisonWashDisplay(v->renderer(), state, o, comparison_);
    auto* iso = new IsodoseDisplay(v->renderer(), state, o, store_, settings_, plan_);
    v->addOverlay(wash);
    v->addOverlay(compareWash);
    v->addOverlay(iso);
    v->addOverlay(new BeamSliceDisplay(v->renderer(), state, o, plan_));
    v->addOverlay(new ProfileLineDisplay(v->renderer(), state, o, profile_));
    v->setProfileModel(profile_);
    v->setPlanModel(plan_);  // the current beam's isocentre and axis handles
    wash_[index(o)] = wash;
    compareWash_[index(o)] = compareWash;
    isodose_[index(o)] = iso;
    connect(v, &SliceView::cursorIndexChanged, this, &PlanningWorkspace::showDoseAt);
  }
  // The 3D displays are children of the view, whose renderer they hold (vtkSmartPointer).
  auto* beams = new BeamDisplay3D(view3d->renderer(), state, plan_, view3d);
  connect(beams, &BeamDisplay3D::renderRequested, view3d, &VtkView::requestRender);
  beams3d_ = beams;
  surfaces_ = new DoseSurfaceDisplay(view3d->renderer(), state, store_, settings_, plan_, view3d);
  connect(surfaces_, &DoseSurfaceDisplay::renderRequested, view3d, &VtkView::requestRender);

  doseInfo_ = new QLabel;
  doseInfo_->setObjectName("doseInfoLabel");
  doseInfo_->setMinimumWidth(190);
  window->statusBar()->addPermanentWidget(doseInfo_);
  // The prescription every % on screen refers to, and where it came from (an imported dose's
  // RT Plan, typed by the user, or the default).
  prescriptionInfo_ = new QLabel;
  prescriptionInfo_->setObjectName("prescriptionLabel");
  window->statusBar()->addPermanentWidget(prescriptionInfo_);
  connect(plan_, &PlanModel::prescriptionChanged, this, &PlanningWorkspace::showPrescription);
  showPrescription();

  buildDocks(window);
  buildMenu(window);
  // What the live dose is doing ("live: 14 ms (GPU)", "live: preview 4 mm, refining..."); empty
  // (and hidden) while live dose is off.
  liveInfo_ = new QLabel;
  liveInfo_->setObjectName("liveDoseLabel");
  liveInfo_->hide();
  window->statusBar()->addPermanentWidget(liveInfo_);
  connect(live_, &LiveDoseController::statusChanged, this, [this](const QString& text) {
    liveInfo_->setText(text);
    liveInfo_->setVisible(!text.isEmpty());
  });
  connect(live_, &LiveDoseController::message, this, &PlanningWorkspace::message);
  for (SliceView* v : views) connect(v, &SliceView::beamDragFinished, live_, &LiveDoseController::editsFinished);
  connect(state, &ViewState::sceneChanged, this, &PlanningWorkspace::onSceneChanged);
  connect(controller_, &PlanController::message, this, &PlanningWorkspace::message);
  connect(dvhs_, &DvhStore::message, this, &PlanningWorkspace::message);
  connect(optimiser_, &OptimiseController::message, this, &PlanningWorkspace::message);
  connect(compareController_, &CompareController::message, this, &PlanningWorkspace::message);
  connect(robustController_, &RobustnessController::message, this, &PlanningWorkspace::message);
  compareViews_ = new CompareViews(state, comparison_, store_, settings_, plan_, profile_);
  connect(store_, &DoseSetStore::currentDoseSetChanged, this, [this] {
    lastCursor_ = {-1e9, -1e9, -1e9};
    doseInfo_->clear();
  });
  tree_ = window->findChild<PatientTree*>("patientTree");
  connect(plan_, &PlanModel::planChanged, this, &PlanningWorkspace::refreshPlanBranch);
  connect(store_, &DoseSetStore::doseSetAdded, this, &PlanningWorkspace::refreshPlanBranch);
  connect(store_, &DoseSetStore::doseSetChanged, this, &PlanningWorkspace::refreshPlanBranch);
  connect(store_, &DoseSetStore::doseSetRemoved, this, &PlanningWorkspace::refreshPlanBranch);
}

QString PlanningWorkspace::beamSummary(const PlannedBeam& beam) {
  const auto& p = beam.beam;
  if (!beam.isPhoton())
    return tr("G%1 C%2, %3, %4").arg(p.gantryDeg).arg(p.couchDeg).arg(countOf(qsizetype(p.layers.size()), "layer"),
                                                                    countOf(qsizetype(p.spotCount()), "spot"));
  // The field: the jaw opening, or the aperture's target when a conformal aperture shapes it.
  const PhotonField& f = beam.photon;
  const QString field = !f.beam.aperture.empty()
                            ? tr("aperture %1").arg(f.apertureTarget.isEmpty() ? tr("(custom)") : f.apertureTarget)
                            : tr("%1 x %2 mm").arg(f.beam.x2Mm - f.beam.x1Mm).arg(f.beam.y2Mm - f.beam.y1Mm);
  return tr("G%1 C%2 Col%3, %4, %5 MU")
      .arg(p.gantryDeg)
      .arg(p.couchDeg)
      .arg(f.beam.collimatorDeg)
      .arg(field)
      .arg(f.beam.monitorUnits, 0, 'g', 5);
}

void PlanningWorkspace::refreshPlanBranch() {
  QTreeWidgetItem* branch = tree_ ? tree_->planBranch() : nullptr;
  if (!branch) return;
  qDeleteAll(branch->takeChildren());
  for (int b = 0; b < plan_->beamCount(); ++b) {
    const auto& p = plan_->beam(b).beam;
    auto* item = new QTreeWidgetItem(branch, {QString::fromStdString(p.name), beamSummary(plan_->beam(b))});
    const auto c = beamColor(b);
    item->setIcon(0, colorSwatch(QColor::fromRgbF(c[0], c[1], c[2])));
  }
  for (int i = 0; i < store_->count(); ++i) {
    const auto set = store_->at(i);
    new QTreeWidgetItem(branch, {set->name, tr("max %1 Gy").arg(set->maxGy, 0, 'f', 2)});
  }
  branch->setText(1, plan_->beamCount() == 0 ? tr("no beams yet")
                                             : tr("%1, %2").arg(countOf(plan_->beamCount(), "beam"), countOf(store_->count(), "dose")));
  branch->setExpanded(true);
}

PlanningWorkspace::~PlanningWorkspace() = default;

void PlanningWorkspace::buildDocks(QMainWindow* window) {
  auto dock = [window](const QString& title, const char* name, QWidget* content, bool scroll) {
    auto* d = new QDockWidget(title, window);
    d->setObjectName(name);
    if (scroll) {
      auto* area = new QScrollArea;
      area->setWidgetResizable(true);
      area->setWidget(content);
      area->setFrameShape(QFrame::NoFrame);
      d->setWidget(area);
    } else {
      d->setWidget(content);
    }
    return d;
  };
  beamEditor_ = new BeamEditorPanel(state_, controller_);
  // Live dose (Ctrl+L): recomputes at every plan edit with the Plan dock's dose settings.
  live_ = new LiveDoseController(controller_, [this] { return beamEditor_->doseOptions(); }, this);
  beamEditor_->setLiveDoseAction(live_->action());
  dosePanel_ = new DosePanel(store_, settings_, controller_);
  bevPanel_ = new BevPanel(plan_);
  jobPanel_ = new JobPanel(jobs_);
  dvhPanel_ = new DvhPanel(state_, dvhs_, plan_);
  dvhPanel_->setRobustnessModel(robustness_);
  profilingPanel_ = new ProfilingPanel(store_);
  optimisePanel_ = new OptimisePanel(optimiser_, plan_, state_, [this] { return beamEditor_->doseOptions(); });
  optimisePanel_->setRobustnessModel(robustness_);  // the robust option's scenarios
  QDockWidget* planDock = dock(tr("Plan"), "planDock", beamEditor_, true);
  QDockWidget* doseDock = dock(tr("Dose"), "doseDock", dosePanel_, true);
  QDockWidget* bevDock = dock(tr("Beam's eye view"), "bevDock", bevPanel_, false);
  QDockWidget* jobsDock = dock(tr("Jobs"), "jobsDock", jobPanel_, false);
  QDockWidget* dvhDock = dock(tr("DVH"), "dvhDock", dvhPanel_, false);
  QDockWidget* profilingDock = dock(tr("Kernel profiling"), "profilingDock", profilingPanel_, false);
  // Right: Plan and Dose as tabs above the beam's-eye view. Left, under the patient tree
  // and the messages: the jobs (progress bar and Cancel always in sight).
  window->addDockWidget(Qt::RightDockWidgetArea, planDock);
  window->addDockWidget(Qt::RightDockWidgetArea, bevDock);
  window->splitDockWidget(planDock, bevDock, Qt::Vertical);
  window->tabifyDockWidget(planDock, doseDock);
  // Scrolled like Plan and Dose: its table and chart would otherwise set the right column's
  // minimum height (527 px) and, with the beam's-eye view under it, push a 1280 x 800 window
  // to 966 px.
  QDockWidget* optimiseDock = dock(tr("Optimise"), "optimiseDock", optimisePanel_, true);
  window->tabifyDockWidget(doseDock, optimiseDock);
  // Compare: a tall column (form, pass rate, histogram, tables), scrolled like Optimise.
  comparePanel_ = new ComparePanel(compareController_, dvhs_, plan_, controller_);
  // The report's pictures: the slice views of the central area on screen (the planning views or
  // the side-by-side ones), as they are drawn.
  comparePanel_->setViewGrabber([window] {
    std::vector<std::pair<QString, QImage>> out;
    for (SliceView* v : window->centralWidget()->findChildren<SliceView*>())
      if (v->isVisible())
        out.emplace_back(tr("%1 (%2)").arg(QString::fromUtf8(displayName(v->orientation())), v->objectName()),
                         v->grabFramebuffer());
    return out;
  });
  QDockWidget* compareDock = dock(tr("Compare"), "compareDock", comparePanel_, true);
  window->tabifyDockWidget(optimiseDock, compareDock);
  // Robustness: the Plan dock's dose settings, the Optimise panel's objectives as limits, live
  // refresh after each edit with live dose on a GPU.
  robustController_ = new RobustnessController(
      controller_, robustness_, [this] { return beamEditor_->doseOptions(); },
      [this] { return optimisePanel_->rows(); }, this);
  robustController_->setLiveDose(live_);
  robustnessPanel_ = new RobustnessPanel(robustController_);
  // Not scrolled: its table scrolls itself, and its minimum height (about 270 px: Run, the tabs)
  // keeps a 1280 x 800 window at its size with the beam's-eye view under it.
  QDockWidget* robustnessDock = dock(tr("Robustness"), "robustnessDock", robustnessPanel_, false);
  window->tabifyDockWidget(compareDock, robustnessDock);
  planDock->raise();
  if (auto* messages = window->findChild<QDockWidget*>("messagesDock"))
    window->splitDockWidget(messages, jobsDock, Qt::Vertical);
  else
    window->addDockWidget(Qt::LeftDockWidgetArea, jobsDock);
  // Bottom, under the views only (the side docks keep the full height): DVH and kernel
  // profiling as tabs (wide tables and charts).
  window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  window->addDockWidget(Qt::BottomDockWidgetArea, dvhDock);
  window->tabifyDockWidget(dvhDock, profilingDock);
  profilePanel_ = new ProfilePanel(state_, profile_, store_, comparison_);
  QDockWidget* profileDock = dock(tr("Profile"), "profileDock", profilePanel_, false);
  window->tabifyDockWidget(profilingDock, profileDock);
  dvhDock->raise();
  window->resizeDocks({planDock}, {340}, Qt::Horizontal);
  window->resizeDocks({planDock, bevDock}, {500, 330}, Qt::Vertical);
  window->resizeDocks({dvhDock}, {240}, Qt::Vertical);
}

void PlanningWorkspace::buildMenu(QMainWindow* window) {
  QMenu* menu = window->menuBar()->addMenu(tr("&Plan"));
  menu->setObjectName("menuPlan");
  auto* add = menu->addAction(tr("&Add beam on target"), beamEditor_, &BeamEditorPanel::addBeam);
  add->setObjectName("actionAddBeam");
  add->setToolTip(tr("Add a proton beam (pencil-beam scanning) on the target"));
  // The editor's "Add photon beam" button: target, gantry, couch, collimator and field size
  // from the Plan panel.
  auto* addPhoton = menu->addAction(tr("Add p&hoton beam"), beamEditor_, &BeamEditorPanel::addPhotonBeam);
  addPhoton->setObjectName("actionAddPhotonBeam");
  addPhoton->setToolTip(tr("Add a 6 MV photon beam on the target (jaws or conformal aperture)"));
  auto* spots = menu->addAction(tr("&Generate spots"), beamEditor_, &BeamEditorPanel::generateSpots);
  spots->setObjectName("actionGenerateSpots");
  auto* dose = menu->addAction(tr("&Compute dose"), beamEditor_, &BeamEditorPanel::computeDose);
  dose->setObjectName("actionComputeDose");
  dose->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
  menu->addAction(live_->action());
  auto* cancel = menu->addAction(tr("C&ancel jobs"), jobs_, &JobRunner::cancelAll);
  cancel->setObjectName("actionCancelJobs");
  cancel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
  menu->addSeparator();
  auto* norm = menu->addAction(tr("&Normalise dose to prescription"), dosePanel_, &DosePanel::normalise);
  norm->setObjectName("actionNormaliseDose");
  auto* compare = menu->addAction(tr("Co&mpare doses..."), this, [window] {
    if (auto* d = window->findChild<QDockWidget*>("compareDock")) {
      d->show();
      d->raise();
    }
  });
  compare->setObjectName("actionCompareDoses");
  compare->setToolTip(tr("Gamma index and dose difference of two dose sets (Compare dock)"));
  auto* backends = menu->addAction(tr("Compare &backends"), this, [this, compare] {
    compare->trigger();
    comparePanel_->compareBackends();
  });
  backends->setObjectName("actionCompareBackends");
  backends->setToolTip(tr("Recompute the current dose on the other backend (CPU / CUDA) or ray-tracing variant "
                          "and compare the two doses"));
  auto* robustness = menu->addAction(tr("&Robustness..."), this, [window] {
    if (auto* d = window->findChild<QDockWidget*>("robustnessDock")) {
      d->show();
      d->raise();
      if (d->isFloating()) return;
      // Its table (seven columns) needs a wider right column than the plan editor does, and
      // rows in sight: the beam's-eye view under it gives up height (the user may drag back).
      if (d->width() < kRobustnessDockWidth) window->resizeDocks({d}, {kRobustnessDockWidth}, Qt::Horizontal);
      auto* bev = window->findChild<QDockWidget*>("bevDock");
      if (bev && bev->isVisible() && !bev->isFloating()) {
        const int total = d->height() + bev->height();
        const int bevHeight = std::max(bev->minimumSizeHint().height(), kBevHeightBesideRobustness);
        if (bev->height() > bevHeight) window->resizeDocks({d, bev}, {total - bevHeight, bevHeight}, Qt::Vertical);
      }
    }
  });
  robustness->setObjectName("actionRobustness");
  robustness->setToolTip(tr("The plan under range and setup errors: table, DVH bands, worst-case dose "
                            "(Robustness dock)"));
}

void PlanningWorkspace::addFileActions(QMenu* file, QAction* before) {
  fileActions_ = new PlanFileActions(qobject_cast<MainWindow*>(parent()), this);
  fileActions_->addTo(file, before);
  connect(fileActions_, &PlanFileActions::message, this, &PlanningWorkspace::message);
}

void PlanningWorkspace::addToolBarActions(QToolBar* bar) {
  // Line profiles: a left drag on a slice view draws the line while this is on (Profile dock).
  auto* profile = bar->addAction(tr("Profile"));
  profile->setObjectName("actionProfileTool");
  profile->setCheckable(true);
  profile->setToolTip(tr("Profile tool: drag a line on a slice view to plot the dose (and gamma) along it"));
  connect(profile, &QAction::toggled, profile_, &ProfileModel::setToolActive);
  connect(profile_, &ProfileModel::toolActiveChanged, profile, &QAction::setChecked);
  connect(profile_, &ProfileModel::toolActiveChanged, this, [bar](bool on) {
    auto* dock = on ? bar->window()->findChild<QDockWidget*>("profileDock") : nullptr;
    if (!dock) return;
    dock->show();
    dock->raise();
  });
}

void PlanningWorkspace::onSceneChanged() {
  jobs_->cancelAll();
  plan_->clear();
  store_->clear();
  doseInfo_->clear();
  // The value carries over to the next patient; the file it came from does not.
  plan_->setPrescription(plan_->prescriptionGy(), {});
}

void PlanningWorkspace::showPrescription() {
  const QString source = plan_->prescriptionSource();
  const QString gy = QString::number(plan_->prescriptionGy(), 'f', 2);
  const QFontMetrics fm(prescriptionInfo_->font());
  prescriptionInfo_->setText(source.isEmpty() ? tr("Rx %1 Gy").arg(gy)
                                              : tr("Rx %1 Gy: %2").arg(gy, fm.elidedText(source, Qt::ElideMiddle, 260)));
  prescriptionInfo_->setToolTip(source.isEmpty()
                                    ? tr("Prescription (Dose panel): isodose levels, V95/V107 and the read-out are % of it")
                                    : tr("Prescription %1 Gy from %2").arg(gy, source));
}

void PlanningWorkspace::showDoseAt(double i, double j, double k) {
  const auto& scene = state_->scene();
  const auto set = store_->current();
  if (!scene || !set) return doseInfo_->clear();
  lastCursor_ = {i, j, k};
  double gy = 0;
  if (!sampleDose(set->dose.dose, scene->worldOf(Vec3{i, j, k}), gy)) {
    doseInfo_->setText(tr("Dose: outside the dose grid"));
    return;
  }
  const double rx = plan_->prescriptionGy();
  doseInfo_->setText(tr("Dose %1 Gy (%2 % of %3 Gy)").arg(gy, 0, 'f', 3).arg(100 * gy / rx, 0, 'f', 1).arg(rx, 0, 'f', 2));
}

}  // namespace penumbra::gui
