#pragma once
/// MCML light transport as a job (issue 6, item 5): the logic behind the light-dose panel, with
/// no widget in it. It checks a run (medium + grid + packets) before anything starts, runs
/// mcml::runMcml on the JobRunner's worker (progress and cancel between the engine's batches),
/// keeps the last finished result (a failed or cancelled run leaves it in place), and reads
/// .mci / writes .mco files (io/mcml). The worker touches no Qt object: it fills a shared
/// result that the GUI thread takes over after Job::succeeded.
#include <memory>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>

#include "mcml/mcml.hpp"
#include "mcml/mcml_files.hpp"

// QPointer<Job> needs the complete type wherever this header's moc output is compiled.
#include "gui/jobs/job_runner.hpp"

namespace penumbra::gui {

/// One finished simulation: what was asked (as a .mci run) and what the engine returned.
struct LightDoseResult {
  io::MciRun run;           ///< medium and config as run (packets, grid, tally, backend, seed)
  mcml::McmlResult result;  ///< MCML-scaled outputs; fluence [cm^-2] per launched packet weight
  double seconds = 0;       ///< wall time of the job's work
  QString backendMessage;   ///< non-empty when CUDA was requested and not available
};

class LightDoseController : public QObject {
  Q_OBJECT
 public:
  explicit LightDoseController(JobRunner* jobs, QObject* parent = nullptr);

  /// The five-layer skin model at 633 nm: Tuchin, "Light scattering study of tissues",
  /// Physics-Uspekhi 40 (1997) 495, Table 1 (the 633 nm rows of
  /// data/reference/skin_5layer_tuchin1997.csv), n = 1 above and below, on the grid of Lo et
  /// al. (GPU-MCML for PDT, 2009): dr 0.01 cm, dz 0.002 cm, 256 x 256, 30 angles; 10^5 packets.
  static io::MciRun skinModel633nm();

  /// Empty when the run can start; else the reason (the engine's own validation included).
  static QString check(const io::MciRun& run);

  /// Starts the simulation; null when check() refuses the run or a light job is running (the
  /// reason goes out as message()).
  Job* start(const io::MciRun& run);
  /// Cancels the running simulation (it ends at the engine's next batch boundary).
  void cancel();
  Job* job() const { return job_.data(); }
  bool isRunning() const;
  /// The last successful run, or null.
  std::shared_ptr<const LightDoseResult> result() const { return result_; }

  /// Reads a .mci file; on failure returns {} and sets `error` (the reader names the line).
  static std::vector<io::MciRun> readMci(const QString& path, QString* error);
  /// Writes the last result as .mco through a temporary file renamed on success, so a failed
  /// write leaves an existing file untouched. False (and `error`) on failure or without result.
  bool saveMco(const QString& path, QString* error) const;

 signals:
  void started(penumbra::gui::Job* job);
  /// The job ended in any state; result() is the new one after a success.
  void finished(penumbra::gui::Job* job);
  void resultChanged();
  void message(const QString& text);

 private:
  JobRunner* jobs_;
  QPointer<Job> job_;
  std::shared_ptr<const LightDoseResult> result_;
};

}  // namespace penumbra::gui
