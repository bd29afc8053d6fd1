#pragma once
/// Runs the DICOM scan and the patient import on a worker thread (QtConcurrent) with
/// progress and cancel. States follow DESIGN.md: idle -> running -> (cancelling ->) done,
/// failed or cancelled. The worker touches no widget and no VTK object; its result is handed
/// to the GUI thread through a QFutureWatcher and the signals below.
#include <memory>

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include "core/progress.hpp"
#include "dicom/dicom_import.hpp"

namespace penumbra::gui {

/// Adapts the toolkit-free ProgressSink to Qt: report() runs on the worker and forwards to the
/// receiver's thread through queued calls, at most once per 0.5 % of progress or stage change.
class QueuedProgressSink : public ProgressSink {
public:
  using Callback = std::function<void(double, QString)>;
  QueuedProgressSink(QObject* receiver, Callback callback);
  void report(double fraction, std::string_view stage) override;

private:
  QObject* receiver_;
  Callback callback_;
  double lastFraction_ = -1;
  std::string lastStage_;
};

class ImportJob : public QObject {
  Q_OBJECT
public:
  enum class State { Idle, Running, Cancelling, Cancelled, Done, Failed };
  Q_ENUM(State)

  explicit ImportJob(QObject* parent = nullptr);
  /// Cancels a running job and waits for the worker to return.
  ~ImportJob() override;

  State state() const { return state_; }
  bool isBusy() const { return state_ == State::Running || state_ == State::Cancelling; }

  /// Scans `folder` (io::scanDicomFolder). Returns false when a job is already running.
  bool startScan(const QString& folder);
  /// Imports one series of a scan (io::importPatient). Returns false when busy.
  bool startImport(std::shared_ptr<const io::DicomScan> scan, const QString& seriesKey);

public slots:
  /// Asks the worker to stop at its next cancel check.
  void cancel();

signals:
  void stateChanged(penumbra::gui::ImportJob::State state);
  void progress(double fraction, const QString& stage);
  void scanFinished(std::shared_ptr<const penumbra::io::DicomScan> scan);
  /// The import returned (the result may still carry errors: check result->ok()).
  void importFinished(std::shared_ptr<penumbra::io::PatientImportResult> result);
  /// The worker threw: the message is for the user.
  void failed(const QString& message);
  void cancelled();

private:
  struct Outcome {
    std::shared_ptr<const io::DicomScan> scan;
    std::shared_ptr<io::PatientImportResult> import;
    bool cancelled = false;
    QString error;
  };
  template <typename Work>
  bool start(Work work);
  void onFinished();
  void setState(State s);

  QFutureWatcher<Outcome> watcher_;
  std::shared_ptr<CancelToken> cancel_;
  State state_ = State::Idle;
  int run_ = 0;
};

}  // namespace penumbra::gui
