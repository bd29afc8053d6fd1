#include "gui/light/light_dose_controller.hpp"

#include <chrono>

#include <QFileInfo>
#include <QSaveFile>

#include "core/device.hpp"
#include "core/error.hpp"
#include "gui/jobs/job_runner.hpp"

namespace penumbra::gui {

LightDoseController::LightDoseController(JobRunner* jobs, QObject* parent)
    : QObject(parent), jobs_(jobs) {}

io::MciRun LightDoseController::skinModel633nm() {
  io::MciRun run;
  run.outputFile = "skin_633nm.mco";
  run.medium.nAbove = 1.0;
  run.medium.nBelow = 1.0;
  // n, mua [cm^-1], mus [cm^-1], g, d [cm]: epidermis, dermis, dermis with plexus
  // superficialis, dermis, dermis plexus profundus (Tuchin 1997, Table 1, 633 nm).
  run.medium.layers = {{1.5, 4.3, 107, 0.79, 0.01},
                       {1.4, 2.7, 187, 0.82, 0.02},
                       {1.4, 3.3, 192, 0.82, 0.02},
                       {1.4, 2.7, 187, 0.82, 0.09},
                       {1.4, 3.4, 194, 0.82, 0.06}};
  run.config.packets = 100000;
  run.config.dr = 0.01;
  run.config.dz = 0.002;
  run.config.nr = 256;
  run.config.nz = 256;
  run.config.na = 30;
  return run;
}

QString LightDoseController::check(const io::MciRun& run) {
  try {
    mcml::validate(run.medium, run.config);
  } catch (const Error& e) {
    return QString::fromStdString(e.message());
  }
  return {};
}

bool LightDoseController::isRunning() const { return job_ && !job_->isFinished(); }

Job* LightDoseController::start(const io::MciRun& run) {
  if (isRunning()) {
    emit message(tr("A light-dose simulation is already running."));
    return nullptr;
  }
  if (const QString why = check(run); !why.isEmpty()) {
    emit message(tr("Cannot run MCML: %1").arg(why));
    return nullptr;
  }
  // Shared between the worker (writes, no Qt) and the GUI thread (reads after succeeded()).
  auto out = std::make_shared<LightDoseResult>();
  out->run = run;
  auto backendMessage = std::make_shared<std::string>();
  Job* job = jobs_->submit(
      tr("Light dose (MCML, %1 packets)").arg(double(run.config.packets), 0, 'g', 3),
      [out, backendMessage](const JobControl& control) {
        const auto t0 = std::chrono::steady_clock::now();
        // runMcml falls back to the CPU silently; when CUDA was asked for by name, ask first
        // so the user learns why (Auto on the CPU is what Auto means, not news).
        if (out->run.config.backend == Backend::Cuda)
          *backendMessage = selectBackend(Backend::Cuda).message;
        out->result = mcml::runMcml(out->run.medium, out->run.config, control);
        out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });
  job_ = job;
  connect(job, &Job::finished, this, [this, job, out, backendMessage] {
    if (job->state() == Job::State::Done) {
      out->backendMessage = QString::fromStdString(*backendMessage);
      result_ = out;
      if (!out->backendMessage.isEmpty()) emit message(out->backendMessage);
      emit resultChanged();
    } else if (job->state() == Job::State::Failed) {
      emit message(tr("MCML failed: %1").arg(job->errorMessage()));
    }
    emit finished(job);
  });
  emit started(job);
  return job;
}

void LightDoseController::cancel() {
  if (job_) job_->cancel();
}

std::vector<io::MciRun> LightDoseController::readMci(const QString& path, QString* error) {
  try {
    auto runs = io::readMciFile(path.toStdString());
    if (runs.empty() && error) *error = tr("%1 holds no run").arg(path);
    return runs;
  } catch (const Error& e) {
    if (error) *error = QString::fromStdString(e.message());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
  }
  return {};
}

bool LightDoseController::saveMco(const QString& path, QString* error) const {
  if (!result_) {
    if (error) *error = tr("no result to save: run the simulation first");
    return false;
  }
  io::MciRun run = result_->run;
  run.outputFile = QFileInfo(path).fileName().toStdString();
  std::string text;
  try {
    text = io::formatMco(run, result_->result, result_->seconds);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  // QSaveFile writes a temporary file next to the target and renames it on commit().
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) ||
      file.write(text.data(), qint64(text.size())) != qint64(text.size()) || !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

}  // namespace penumbra::gui
