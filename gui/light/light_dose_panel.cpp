// LightDosePanel: the panel itself (layout, the job's progress and status, run and cancel, the dock).
// Its input form is in light_dose_inputs.cpp, its results view in light_dose_results.cpp and its
// .mci/.mco file actions in light_dose_file_actions.cpp.
#include "gui/light/light_dose_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QDockWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>

#include "gui/jobs/job_runner.hpp"
#include "gui/light/light_dose_controller.hpp"
#include "gui/light/light_dose_panel_parts.hpp"

namespace penumbra::gui {

using namespace light_panel;

LightDosePanel::LightDosePanel(LightDoseController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  setObjectName("lightDosePanel");
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* split = new QSplitter(Qt::Horizontal);
  split->setObjectName("lightDoseSplitter");
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(buildInputs());
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(scroll->widget()->sizeHint().width() + 16);
  split->addWidget(scroll);
  split->addWidget(buildResults());
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  layout->addWidget(split);

  connect(controller_, &LightDoseController::started, this, [this](Job* job) {
    progress_->setValue(0);
    setStatus(tr("Running %1 ...").arg(job->title()));
    connect(job, &Job::progressChanged, this, [this](double f, const QString& stage) {
      progress_->setValue(int(std::lround(f * 1000)));
      setStatus(tr("MCML: %1 (%2 %)").arg(stage).arg(100 * f, 0, 'f', 0));
    });
    updateButtons();
  });
  connect(controller_, &LightDoseController::finished, this, [this](Job* job) {
    switch (job->state()) {
      case Job::State::Done: {
        const auto r = controller_->result();
        progress_->setValue(1000);
        setStatus(
            tr("Done: %1 packets in %2 s on %3%4.")
                .arg(double(r->run.config.packets), 0, 'g', 3)
                .arg(r->seconds, 0, 'f', 2)
                .arg(r->result.backend == Backend::Cuda ? QString::fromStdString(r->result.device)
                                                        : tr("the CPU"))
                .arg(r->backendMessage.isEmpty() ? QString() : " (" + r->backendMessage + ")"));
        break;
      }
      case Job::State::Cancelled:
        progress_->setValue(0);
        setStatus(controller_->result() ? tr("Cancelled; the previous result is kept.")
                                        : tr("Cancelled."));
        break;
      default:
        progress_->setValue(0);
        setStatus(tr("MCML failed: %1").arg(job->errorMessage()), true);
        break;
    }
    updateButtons();
  });
  connect(controller_, &LightDoseController::resultChanged, this, &LightDosePanel::showResult);
  connect(controller_, &LightDoseController::message, this, [this](const QString& m) {
    if (!controller_->isRunning()) setStatus(m, m.startsWith(tr("Cannot")));
  });
  resetToSkinModel();
  setContourLevels(kDefaultLevels);
  updateBackendNote();
  updateButtons();
}

Job* LightDosePanel::run() {
  QString why;
  const io::MciRun r = currentRun(&why);
  if (!why.isEmpty()) {
    setStatus(tr("Cannot run: %1").arg(why), true);
    return nullptr;
  }
  Job* job = controller_->start(r);
  updateButtons();
  return job;
}

void LightDosePanel::cancel() { controller_->cancel(); }

void LightDosePanel::updateButtons() {
  const bool running = controller_->isRunning();
  runButton_->setEnabled(!running);
  cancelButton_->setEnabled(running);
  saveButton_->setEnabled(controller_->result() != nullptr);
}

void LightDosePanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #c62828;" : QString());
}

void LightDosePanel::showError(const QString& title, const QString& text) {
  setStatus(title + ": " + text, true);
  // Non-modal, so the application (and a GUI test) keeps running while it is shown.
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setObjectName("lightDoseErrorBox");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
}

QDockWidget* createLightDoseDock(QMainWindow* window, JobRunner* jobs) {
  auto* dock = new QDockWidget(QObject::tr("Light dose (MCML)"), window);
  dock->setObjectName("lightDoseDock");
  auto* controller = new LightDoseController(jobs, dock);
  dock->setWidget(new LightDosePanel(controller, dock));
  window->addDockWidget(Qt::BottomDockWidgetArea, dock);
  dock->setFloating(true);
  dock->hide();
  return dock;
}

void showLightDoseDock(QDockWidget* dock) {
  if (!dock) return;
  if (dock->isFloating() && !dock->property("placed").toBool()) {
    // First opening: a window of its own over the main window, large enough for the map.
    const QWidget* main = dock->parentWidget();
    const QSize size(1240, 800);
    dock->resize(size);
    if (main) dock->move(main->geometry().center() - QPoint(size.width() / 2, size.height() / 2));
    dock->setProperty("placed", true);
  }
  dock->show();
  dock->raise();
  dock->activateWindow();
}

}  // namespace penumbra::gui
