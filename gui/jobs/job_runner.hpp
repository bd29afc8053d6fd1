#pragma once
/// Engine runs as jobs on worker threads (DESIGN.md section 5; Slicer's CLI job states).
///
/// A Job is one unit of work: a callable run on a worker thread with a JobControl (progress and
/// cancel, no Qt) that either returns, throws CancelledError, or throws an error. Its states:
///
///   Queued -> Running -> Done | Failed | Cancelled
///                 \-> Cancelling -> Cancelled (or Done/Failed when the work ended first)
///   Queued -> Cancelled (cancelled before it started)
///
/// The JobRunner runs its jobs one at a time in submission order (every engine uses all CPU
/// cores or the whole GPU, so running two at once gains nothing). Each job gets its own
/// QThread: the worker lowers its own scheduling priority (nice +10, inherited by the engine's
/// std::threads) so that the GUI thread keeps the CPU it needs to stay responsive while a CPU
/// dose job saturates every core. Workers touch no widget and no VTK object: results go into
/// objects the caller captured, and the caller reads them on the GUI thread after succeeded().
#include <chrono>
#include <functional>
#include <memory>

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include "core/error.hpp"
#include "core/progress.hpp"

class QThread;

namespace penumbra::gui {

class Job : public QObject {
  Q_OBJECT
public:
  enum class State { Queued, Running, Cancelling, Cancelled, Done, Failed };
  Q_ENUM(State)
  /// Runs on the worker thread. Throws CancelledError (via JobControl::checkCancel) to stop.
  using Work = std::function<void(const JobControl&)>;

  Job(QString title, Work work, QObject* parent = nullptr);
  ~Job() override;

  QString title() const { return title_; }
  State state() const { return state_; }
  bool isFinished() const {
    return state_ == State::Done || state_ == State::Failed || state_ == State::Cancelled;
  }
  bool isActive() const { return state_ == State::Running || state_ == State::Cancelling; }
  /// Last progress report: fraction in [0, 1] and the engine's stage text.
  double fraction() const { return fraction_; }
  QString stage() const { return stage_; }
  /// Estimated seconds left (linear extrapolation of the progress), or -1 when unknown.
  double secondsLeft() const;
  /// Seconds since the job started running (to its end once finished).
  double elapsedSeconds() const;
  /// Milliseconds from cancel() to the Cancelled state; -1 when not cancelled.
  double cancelLatencyMs() const { return cancelLatencyMs_; }
  /// For a failed job: the user-facing message and the typed error code.
  QString errorMessage() const { return error_; }
  ErrorCode errorCode() const { return errorCode_; }

  static QString stateName(State s);

public slots:
  /// Asks the job to stop: a queued job is cancelled at once, a running one at the engine's
  /// next cancel check (engines check every few tens of ms).
  void cancel();

signals:
  void stateChanged(penumbra::gui::Job::State state);
  /// Throttled to the engine's reports (at most one per 0.5 % or stage change).
  void progressChanged(double fraction, const QString& stage, double secondsLeft);
  /// The work returned normally; emitted before finished().
  void succeeded();
  void failed(const QString& message);
  void cancelled();
  /// Emitted once, on reaching Done, Failed or Cancelled.
  void finished();

private:
  friend class JobRunner;
  void start();
  void onWorkerDone();
  void setState(State s);
  void finish(State s);

  QString title_;
  Work work_;
  State state_ = State::Queued;
  double fraction_ = 0;
  QString stage_;
  QString error_;
  ErrorCode errorCode_ = ErrorCode::Internal;
  double cancelLatencyMs_ = -1;
  std::shared_ptr<CancelToken> token_ = std::make_shared<CancelToken>();
  std::chrono::steady_clock::time_point started_, ended_, cancelAt_;
  std::chrono::steady_clock::time_point progressAt_;  // when fraction_ was first > 0
  double progressAtFraction_ = 0;
  std::chrono::steady_clock::time_point lastEmit_;
  QThread* thread_ = nullptr;
  // Written by the worker before it returns, read on the GUI thread after the thread finished.
  struct Outcome {
    bool cancelled = false;
    QString error;
    ErrorCode code = ErrorCode::Internal;
  };
  std::shared_ptr<Outcome> outcome_ = std::make_shared<Outcome>();
};

class JobRunner : public QObject {
  Q_OBJECT
public:
  explicit JobRunner(QObject* parent = nullptr);
  /// Cancels every job and waits for the running one's worker to return.
  ~JobRunner() override;

  /// Queues `work` as a job (owned by the runner) and starts it when no other job runs.
  Job* submit(const QString& title, Job::Work work);
  /// Starts `work` at once beside the serial queue (short jobs that must not wait for a long
  /// one, e.g. the DVHs of a running optimisation's live dose). Never becomes activeJob().
  Job* submitBeside(const QString& title, Job::Work work);
  /// The running (or cancelling) job, or null.
  Job* activeJob() const { return active_; }
  bool isBusy() const { return active_ != nullptr || !queue_.isEmpty(); }
  /// Every job submitted, oldest first (finished ones are kept for the job list).
  const QList<Job*>& jobs() const { return all_; }

public slots:
  void cancelAll();

signals:
  void jobSubmitted(penumbra::gui::Job* job);
  void jobStarted(penumbra::gui::Job* job);
  void jobFinished(penumbra::gui::Job* job);

private:
  void startNext();

  QList<Job*> queue_;
  QList<Job*> all_;
  Job* active_ = nullptr;
};

}  // namespace penumbra::gui
