#include "gui/shell/main_window.hpp"

#include <algorithm>
#include <vector>

#include <QAction>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QStackedWidget>
#include <QStatusBar>
#include <QToolBar>

#include "dicom/synthetic_phantom.hpp"
#include "gui/jobs/import_dialog.hpp"
#include "gui/compare/compare_views.hpp"
#include "gui/light/light_dose_panel.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/shell/about_dialog.hpp"
#include "gui/shell/app_paths.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/patient_tree.hpp"
#include "gui/views/slice_view.hpp"
#include "gui/views/view3d.hpp"

namespace penumbra::gui {

namespace {
const char* kInteractionHint =
    "Slices: click = crosshair, shift+drag = move crosshair, left-drag = window/level, "
    "wheel / PgUp / PgDn = slice, ctrl+wheel or right-drag = zoom, middle-drag = pan, R = reset; "
    "drag the current beam's isocentre cross to move it, its axis (axial view) to turn the gantry.  "
    "3D: drag = rotate.";

QString joinLines(const std::vector<std::string>& lines) {
  QStringList out;
  for (const auto& l : lines) out << QString::fromStdString(l);
  return out.join('\n');
}
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), state_(new ViewState(this)), job_(new ImportJob(this)) {
  setObjectName("PenumbraMainWindow");
  setWindowTitle(tr("Penumbra"));
  resize(1280, 880);
  buildViews();
  buildDocks();
  buildActions();
  buildStatusBar();

  connect(job_, &ImportJob::scanFinished, this, &MainWindow::onScanFinished);
  connect(job_, &ImportJob::importFinished, this, &MainWindow::onImportFinished);
  connect(job_, &ImportJob::failed, this, &MainWindow::onJobFailed);
  connect(job_, &ImportJob::cancelled, this, &MainWindow::onJobCancelled);
  connect(job_, &ImportJob::progress, this, &MainWindow::onJobProgress);
  connect(state_, &ViewState::windowLevelChanged, this, &MainWindow::syncPresetCombo);
  connect(state_, &ViewState::sceneChanged, this, &MainWindow::onSceneChanged);
  connect(view3d_, &View3D::surfacesBuilt, this, [this](bool ok, const QString& message) {
    log(message);
    statusBar()->showMessage(message, 5000);
    if (state_->scene()) emit sceneReady();
  });
  statusBar()->showMessage(tr("No patient: use File > Open DICOM folder."));
}

MainWindow::~MainWindow() {
  // Views and panels observe state_; the job's worker may still run. Tear down in the
  // reverse order of dependence rather than in QObject child order.
  delete takeCentralWidget();
  for (auto* dock : findChildren<QDockWidget*>()) delete dock;
  delete planning_;  // cancels its jobs and waits for their workers
  delete job_;  // cancels and waits for the worker
}

const Patient* MainWindow::patient() const {
  return state_->scene() ? &state_->scene()->patient() : nullptr;
}

SliceView* MainWindow::sliceView(SliceOrientation o) const {
  return o == SliceOrientation::Axial ? axial_ : (o == SliceOrientation::Coronal ? coronal_ : sagittal_);
}

ImportDialog* MainWindow::importDialog() const { return importDialog_.data(); }

bool MainWindow::isBusy() const { return job_->isBusy() || importDialog_; }

void MainWindow::setBatchMode(bool on) {
  batchMode_ = on;
  if (PlanFileActions* files = planning_->fileActions()) files->setShowDialogs(!on);
}

void MainWindow::onSceneChanged() {
  // Any patient, a CT or a dose shown without one (--open-dose): the status bar stops saying
  // "No patient".
  if (!state_->scene()) {
    cursorInfo_->setText(tr("No patient"));
    return;
  }
  cursorInfo_->setText(tr("Move the mouse over a slice view"));
  if (statusBar()->currentMessage().startsWith(tr("No patient"))) statusBar()->clearMessage();
}

void MainWindow::buildViews() {
  auto* central = new QWidget;
  central->setObjectName("viewArea");
  auto* grid = new QGridLayout(central);
  grid->setContentsMargins(2, 2, 2, 2);
  grid->setSpacing(2);
  axial_ = createStandardSliceView(SliceOrientation::Axial, state_, central);
  sagittal_ = createStandardSliceView(SliceOrientation::Sagittal, state_, central);
  coronal_ = createStandardSliceView(SliceOrientation::Coronal, state_, central);
  view3d_ = new View3D(state_, central);
  grid->addWidget(axial_, 0, 0);
  grid->addWidget(sagittal_, 0, 1);
  grid->addWidget(coronal_, 1, 0);
  grid->addWidget(view3d_, 1, 1);
  setCentralWidget(central);
  for (SliceView* v : {axial_, sagittal_, coronal_})
    connect(v, &SliceView::cursorInfoChanged, this, [this](const QString& t) { cursorInfo_->setText(t); });
}

void MainWindow::buildDocks() {
  auto* treeDock = new QDockWidget(tr("Patient"), this);
  treeDock->setObjectName("patientDock");
  tree_ = new PatientTree(state_, treeDock);
  treeDock->setWidget(tree_);
  addDockWidget(Qt::LeftDockWidgetArea, treeDock);

  auto* logDock = new QDockWidget(tr("Messages"), this);
  logDock->setObjectName("messagesDock");
  log_ = new QPlainTextEdit(logDock);
  log_->setObjectName("messageLog");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  logDock->setWidget(log_);
  addDockWidget(Qt::LeftDockWidgetArea, logDock);
  splitDockWidget(treeDock, logDock, Qt::Vertical);
  resizeDocks({treeDock}, {260}, Qt::Horizontal);
  resizeDocks({treeDock, logDock}, {560, 200}, Qt::Vertical);
  // Planning docks (Plan, Dose, Beam's eye view, Jobs), its overlays and its Plan menu.
  planning_ = new PlanningWorkspace(this, state_, {axial_, sagittal_, coronal_}, view3d_);
  // The central area: the four planning views, or A | B | map side by side while the Compare
  // panel asks for it (ComparisonModel::sideBySide).
  auto* stack = new QStackedWidget;
  stack->setObjectName("centralStack");
  stack->addWidget(takeCentralWidget());
  stack->addWidget(planning_->compareViews());
  setCentralWidget(stack);
  connect(planning_->comparison(), &ComparisonModel::sideBySideChanged, stack,
          [stack](bool on) { stack->setCurrentIndex(on ? 1 : 0); });
  connect(planning_, &PlanningWorkspace::message, this, [this](const QString& m) {
    log(m);
    statusBar()->showMessage(m, 6000);
  });
  // Light dose (MCML, issue 6): a floating dock, hidden until Tools > Light dose (MCML)...
  createLightDoseDock(this, planning_->jobs());
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->setObjectName("menuFile");
  auto* open = file->addAction(tr("&Open DICOM folder..."), this, &MainWindow::chooseAndOpenFolder);
  open->setObjectName("actionOpenDicom");
  open->setShortcut(QKeySequence::Open);
  auto* demo = file->addAction(tr("Open &demo case (BOXPHANTOM)"), this, &MainWindow::openDemoCase);
  demo->setObjectName("actionOpenDemo");
  recentMenu_ = file->addMenu(tr("&Recent folders"));
  recentMenu_->setObjectName("menuRecentFolders");
  QAction* quitSeparator = file->addSeparator();
  auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setObjectName("actionQuit");
  quit->setShortcut(QKeySequence::Quit);
  // Case files, DICOM RT export and import (plan_file_actions.hpp), above Quit.
  planning_->addFileActions(file, quitSeparator);
  rebuildRecentMenu();

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->setObjectName("menuView");
  auto* reset = view->addAction(tr("&Reset views"), this, &MainWindow::resetViews);
  reset->setObjectName("actionResetViews");
  for (auto* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());

  // The planning workspace added its Plan menu when it was built (before File): move it after
  // View, so that the bar reads File, View, Plan, Tools, Help as in every desktop application.
  if (auto* plan = menuBar()->findChild<QMenu*>("menuPlan")) {
    menuBar()->removeAction(plan->menuAction());
    menuBar()->addAction(plan->menuAction());
  }

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  tools->setObjectName("menuTools");
  auto* light = tools->addAction(tr("&Light dose (MCML)..."), this,
                                 [this] { showLightDoseDock(findChild<QDockWidget*>("lightDoseDock")); });
  light->setObjectName("actionLightDose");

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->setObjectName("menuHelp");
  auto* controls = help->addAction(tr("Mouse and keys"), this, [this] {
    QMessageBox::information(this, tr("Mouse and keys"), tr(kInteractionHint));
  });
  controls->setObjectName("actionShowControls");
  help->addSeparator();
  auto* about = help->addAction(tr("&About Penumbra..."), this, [this] { showAboutDialog(this); });
  about->setObjectName("actionAbout");
  about->setMenuRole(QAction::AboutRole);

  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName("mainToolBar");
  bar->addAction(open);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Window/level: ")));
  presetCombo_ = new QComboBox(bar);
  presetCombo_->setObjectName("windowPresetCombo");
  for (const auto& p : kWindowLevelPresets)
    presetCombo_->addItem(tr(p.name), QVariant::fromValue(QPointF(p.value.window, p.value.level)));
  presetCombo_->addItem(tr("Custom"));
  connect(presetCombo_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0 && index < int(kWindowLevelPresets.size()))
      state_->setWindowLevel(kWindowLevelPresets[index].value);
  });
  bar->addWidget(presetCombo_);
  bar->addSeparator();
  bar->addAction(reset);
  planning_->addToolBarActions(bar);  // the Profile tool
  syncPresetCombo();
}

void MainWindow::buildStatusBar() {
  auto* hint = new QLabel(tr("Click: crosshair | drag: window/level | wheel: slice | "
                             "ctrl+wheel: zoom | middle-drag: pan"));
  hint->setObjectName("interactionHintLabel");
  hint->setToolTip(tr(kInteractionHint));
  cursorInfo_ = new QLabel(tr("No patient"));
  cursorInfo_->setObjectName("cursorInfoLabel");
  cursorInfo_->setMinimumWidth(300);
  statusBar()->setObjectName("statusBar");
  statusBar()->addPermanentWidget(cursorInfo_, 1);
  statusBar()->addPermanentWidget(hint);
}

void MainWindow::syncPresetCombo() {
  const WindowLevel wl = state_->windowLevel();
  int index = int(kWindowLevelPresets.size());  // "Custom"
  for (std::size_t i = 0; i < kWindowLevelPresets.size(); ++i)
    if (kWindowLevelPresets[i].value == wl) index = int(i);
  presetCombo_->setCurrentIndex(index);
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList folders = recentFolders();
  for (const QString& f : folders) {
    auto* a = recentMenu_->addAction(f, this, [this, f] { openFolder(f); });
    a->setObjectName("actionRecentFolder");
  }
  if (folders.isEmpty()) recentMenu_->addAction(tr("(none)"))->setEnabled(false);
  recentMenu_->addSeparator();
  auto* clear = recentMenu_->addAction(tr("Clear list"), this, [this] {
    clearRecentFolders();
    rebuildRecentMenu();
  });
  clear->setObjectName("actionClearRecentFolders");
}

void MainWindow::log(const QString& line) {
  log_->appendPlainText(QDateTime::currentDateTime().toString("HH:mm:ss  ") + line);
}

void MainWindow::showError(const QString& title, const QString& text, const QString& details) {
  log(title + ": " + text);
  if (batchMode_) {
    statusBar()->showMessage(title, 8000);
    emit importFailed(text);
    return;
  }
  // Non-modal so that the application (and a GUI test) keeps running while it is shown.
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setObjectName("errorMessageBox");
  if (!details.isEmpty()) box->setDetailedText(details);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
  statusBar()->showMessage(title, 8000);
  emit importFailed(text);
}

void MainWindow::chooseAndOpenFolder() {
  const QStringList recent = recentFolders();
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open DICOM folder"),
                                                        recent.isEmpty() ? QString() : recent.first());
  if (!dir.isEmpty()) openFolder(dir);
}

bool MainWindow::openDemoCase() {
  const QString demo = findDemoCase();
  if (demo.isEmpty()) {
    log(tr("BOXPHANTOM not found (looked in: %1); opening a synthetic phantom instead.")
            .arg(demoCaseCandidates().join(", ")));
    return openSyntheticDemoCase();
  }
  return openFolder(demo, {}, ImportConfirm::Auto);
}

bool MainWindow::openSyntheticDemoCase() {
  const QString folder = syntheticDemoFolder();
  if (!QFileInfo::exists(QDir(folder).filePath("RS.dcm"))) {
    try {
      // A few dozen small files: written on the GUI thread (tens of ms).
      io::writeSyntheticPhantom(folder.toStdString(), io::SyntheticPhantomSpec{});
    } catch (const std::exception& e) {
      const QString msg = tr("No demo case: BOXPHANTOM not found and the synthetic phantom could "
                             "not be written to %1 (%2). Use File > Open DICOM folder.")
                              .arg(folder, QString::fromUtf8(e.what()));
      statusBar()->showMessage(msg);
      log(msg);
      return false;
    }
  }
  return openFolder(folder, {}, ImportConfirm::Auto);
}

bool MainWindow::openFolder(const QString& folder, const QString& seriesKey, ImportConfirm confirm) {
  if (isBusy()) {
    statusBar()->showMessage(tr("An import is already running."), 5000);
    return false;
  }
  pending_ = {folder, seriesKey, confirm};
  log(tr("Scanning %1").arg(folder));
  if (!progress_) {
    progress_ = new QProgressDialog(this);
    progress_->setObjectName("importProgressDialog");
    progress_->setWindowTitle(tr("Import"));
    progress_->setRange(0, 1000);
    progress_->setAutoClose(false);
    progress_->setAutoReset(false);
    progress_->setMinimumDuration(400);
    progress_->setWindowModality(Qt::WindowModal);
    connect(progress_, &QProgressDialog::canceled, job_, &ImportJob::cancel);
  }
  progress_->setLabelText(tr("Scanning %1").arg(folder));
  progress_->setValue(0);
  return job_->startScan(folder);
}

void MainWindow::onJobProgress(double fraction, const QString& stage) {
  if (!progress_) return;
  progress_->setLabelText(stage);
  progress_->setValue(std::clamp(int(fraction * 1000), 0, 999));
}

void MainWindow::onScanFinished(std::shared_ptr<const io::DicomScan> scan) {
  endProgress();  // shown again by the import's progress when it takes long
  for (const auto& w : scan->messages.warnings) log(tr("scan: %1").arg(QString::fromStdString(w)));
  int ctSeries = 0;
  for (const auto& s : scan->series) ctSeries += s.modality == "CT";
  if (ctSeries == 0) {
    QString text = tr("No DICOM CT series found in %1 (%2 looked at).")
                       .arg(pending_.folder, countOf(scan->filesSeen, "file"));
    // RT Doses and a structure set without their CT (a planning system's export): they open
    // on a blank image on the dose grid.
    const bool hasDose = std::any_of(scan->otherObjects.begin(), scan->otherObjects.end(),
                                     [](const std::string& o) { return o.rfind("RTDOSE", 0) == 0; });
    if (hasDose)
      text += tr(" It holds RT Dose%1 files: open it with File > Open RT Dose and structures without CT "
                 "(penumbra --open-dose %2).")
                  .arg(scan->structureSets.empty() ? QString() : tr(" and RT Structure Set"), pending_.folder);
    return showError(tr("Cannot open folder"), text, QString::fromStdString(io::dicomDoctorReport(*scan)));
  }
  bool ask = pending_.confirm == ImportConfirm::Ask || (pending_.seriesKey.isEmpty() && ctSeries > 1);
  if (ask && batchMode_) {
    // No one to answer a dialog: the given series, else the first CT series that can be
    // imported (the scan lists CT first), and say which.
    if (pending_.seriesKey.isEmpty()) {
      const auto first = std::find_if(scan->series.begin(), scan->series.end(),
                                      [](const io::SeriesInfo& s) { return s.modality == "CT" && s.importable; });
      if (first == scan->series.end())
        return showError(tr("Cannot open folder"),
                         tr("None of the %1 in %2 can be imported (see penumbra-cli inspect).")
                             .arg(countOf(ctSeries, "CT series", "CT series"), pending_.folder),
                         QString::fromStdString(io::dicomDoctorReport(*scan)));
      QStringList keys;
      for (const auto& s : scan->series)
        if (s.modality == "CT") keys << QString::fromStdString(s.key);
      pending_.seriesKey = QString::fromStdString(first->key);
      emit notice(tr("%1 in %2: importing the first, %3 (%4); choose another with --series KEY (%5)")
                      .arg(countOf(ctSeries, "CT series", "CT series"), pending_.folder, pending_.seriesKey,
                           QString::fromStdString(first->description), keys.join(", ")));
    }
    ask = false;
  }
  if (!ask) {
    progress_->setLabelText(tr("Importing"));
    job_->startImport(scan, pending_.seriesKey);
    return;
  }
  auto* dialog = new ImportDialog(scan, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  if (!pending_.seriesKey.isEmpty()) dialog->selectSeries(pending_.seriesKey);
  importDialog_ = dialog;
  connect(dialog, &QDialog::accepted, this, [this, dialog, scan] {
    const QString key = dialog->selectedSeriesKey();
    pending_.seriesKey = key;
    progress_->setLabelText(tr("Importing"));
    progress_->setValue(0);
    job_->startImport(scan, key);
  });
  connect(dialog, &QDialog::rejected, this, [this] {
    log(tr("Import cancelled."));
    statusBar()->showMessage(tr("Import cancelled."), 5000);
    emit importCancelled();
  });
  dialog->open();  // window-modal, non-blocking
}

void MainWindow::endProgress() {
  // reset() hides the dialog only with autoClose, which is off (the dialog stays up between the
  // scan and the import). A dialog that QProgressDialog::setValue had shown during the import
  // (it counts from the scan's start) stayed up, window-modal, after the patient opened: seen
  // in gui.live_dose as the Plan menu's shortcuts doing nothing.
  progress_->reset();
  progress_->hide();
}

void MainWindow::onImportFinished(std::shared_ptr<io::PatientImportResult> result) {
  endProgress();
  for (const auto& w : result->messages.warnings) log(tr("warning: %1").arg(QString::fromStdString(w)));
  if (!result->ok()) {
    QString text = joinLines(result->messages.errors);
    if (text.isEmpty()) text = tr("The import produced no CT volume.");
    return showError(tr("Import failed"), text, joinLines(result->messages.warnings));
  }
  auto patient = std::make_shared<const Patient>(std::move(result->patient));
  auto scene = std::make_shared<const PatientScene>(patient);
  if (scene->isReoriented())
    log(tr("The CT is not stored head-first supine (direction is not the identity): it is "
           "displayed re-indexed to patient LPS (exact, no interpolation)."));
  else if (!scene->displayIsLps())
    log(tr("warning: oblique CT: the views show its voxel grid, not patient axes."));
  loaded_ = pending_;
  state_->setScene(std::move(scene));
  addRecentFolder(pending_.folder);
  rebuildRecentMenu();
  const QString name = QString::fromStdString(patient->name);
  setWindowTitle(tr("Penumbra - %1").arg(name.isEmpty() ? pending_.folder : name));
  const QString summary = tr("Opened %1: %2, %3, %4")
                              .arg(name, QString::fromStdString(patient->ctDescription),
                                   countOf(qsizetype(patient->structures.structures.size()), "structure"),
                                   countOf(qsizetype(result->messages.warnings.size()), "warning"));
  log(summary);
  statusBar()->showMessage(summary, 8000);
  cursorInfo_->setText(tr("Move the mouse over a slice view"));
  emit patientLoaded();
}

void MainWindow::onJobFailed(const QString& message) {
  endProgress();
  showError(tr("Cannot open folder"), message);
}

void MainWindow::onJobCancelled() {
  endProgress();
  log(tr("Cancelled."));
  statusBar()->showMessage(tr("Cancelled; the previous patient is kept."), 5000);
  emit importCancelled();
}

void MainWindow::resetViews() {
  for (SliceView* v : {axial_, sagittal_, coronal_}) v->resetCamera();
  view3d_->resetCamera();
}

}  // namespace penumbra::gui
