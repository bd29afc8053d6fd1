#pragma once
/// The Penumbra main window: patient tree, three slice views and a 3D view around a shared
/// ViewState, File > Open DICOM folder through a worker job, window/level presets, cursor
/// read-out. Tests drive it through the public slots and signals below and the objectNames.
#include <memory>

#include <QMainWindow>
#include <QPointer>

#include "gui/jobs/import_job.hpp"
#include "gui/model/slice_orientation.hpp"
#include "gui/model/view_state.hpp"

class QComboBox;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressDialog;

namespace penumbra::gui {

class ImportDialog;
class PatientTree;
class PlanningWorkspace;
class SliceView;
class View3D;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  /// When openFolder() shows the import dialog: Ask always (the menu path: the user sees the
  /// DICOM doctor report), Auto only when several CT series leave a choice.
  enum class ImportConfirm { Ask, Auto };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  ViewState* viewState() const { return state_; }
  /// The patient shown, as imported (see PatientScene for the display copy), or null.
  const Patient* patient() const;
  SliceView* sliceView(SliceOrientation o) const;
  View3D* view3D() const { return view3d_; }
  PatientTree* patientTree() const { return tree_; }
  ImportJob* importJob() const { return job_; }
  /// Folder and CT series key the shown patient was imported from (empty: none).
  QString patientFolder() const { return loaded_.folder; }
  QString patientSeriesKey() const { return loaded_.seriesKey; }
  /// Beams, spots, dose jobs, dose sets and their displays and docks (planning_workspace.hpp).
  PlanningWorkspace* planning() const { return planning_; }
  /// The import dialog while it is open (non-modal), else null.
  ImportDialog* importDialog() const;
  bool isBusy() const;

  /// Batch mode (`penumbra --screenshot ...`): nothing ever waits on a dialog. A folder with
  /// several CT series imports the first importable one and says so (notice()); errors are
  /// logged and reported through importFailed() without a message box; the planning file
  /// actions keep their defaults instead of asking.
  void setBatchMode(bool on);
  bool batchMode() const { return batchMode_; }

  /// Renders every view now and returns the whole window as an image, GL views included
  /// (composited from each view's framebuffer, which QWidget::grab() may miss).
  QImage grabWindowImage();
  /// Renders a slice view `renders` times synchronously; returns the median ms per render.
  /// With `changeSlice` each render first steps to another slice (texture upload and contour
  /// extraction included).
  double benchmarkSliceRender(SliceOrientation o, int renders, bool changeSlice);

public slots:
  /// Opens a DICOM folder: scan on a worker, import dialog (see ImportConfirm), import on a
  /// worker. Returns false when a job is already running. Outcome: patientLoaded() or
  /// importFailed() or importCancelled().
  bool openFolder(const QString& folder, const QString& seriesKey = {},
                  penumbra::gui::MainWindow::ImportConfirm confirm = ImportConfirm::Ask);
  /// Opens the BOXPHANTOM demo case if found (see app_paths.hpp); false otherwise.
  bool openDemoCase();
  /// Writes (once) and opens a small synthetic phantom (io::writeSyntheticPhantom): the demo
  /// when BOXPHANTOM is absent. False when it cannot be written.
  bool openSyntheticDemoCase();
  void chooseAndOpenFolder();
  void resetViews();

signals:
  /// A new patient is shown in all views.
  void patientLoaded();
  /// The patient is shown and its 3D surfaces are built: everything is on screen.
  void sceneReady();
  /// An open failed; the message was shown to the user; the previous patient is kept.
  void importFailed(const QString& message);
  void importCancelled();
  /// Something a batch run should print (a choice made for the user, e.g. which CT series).
  void notice(const QString& text);

private:
  struct PendingOpen {
    QString folder;
    QString seriesKey;
    ImportConfirm confirm = ImportConfirm::Ask;
  };

  void buildActions();
  void buildViews();
  void buildDocks();
  void buildStatusBar();
  void rebuildRecentMenu();
  void onScanFinished(std::shared_ptr<const io::DicomScan> scan);
  void onImportFinished(std::shared_ptr<io::PatientImportResult> result);
  /// Resets and hides the import progress dialog.
  void endProgress();
  void onJobFailed(const QString& message);
  void onJobCancelled();
  void onJobProgress(double fraction, const QString& stage);
  void showError(const QString& title, const QString& text, const QString& details = {});
  void log(const QString& line);
  void syncPresetCombo();
  void onSceneChanged();

  ViewState* state_;
  ImportJob* job_;
  PlanningWorkspace* planning_ = nullptr;
  PatientTree* tree_ = nullptr;
  SliceView* axial_ = nullptr;
  SliceView* sagittal_ = nullptr;
  SliceView* coronal_ = nullptr;
  View3D* view3d_ = nullptr;
  QComboBox* presetCombo_ = nullptr;
  QLabel* cursorInfo_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QProgressDialog* progress_ = nullptr;
  QPointer<ImportDialog> importDialog_;
  PendingOpen pending_;
  PendingOpen loaded_;
  bool batchMode_ = false;
};

}  // namespace penumbra::gui
