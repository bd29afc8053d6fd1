#include "gui/jobs/job_runner.hpp"

#include <QThread>

#include "gui/jobs/import_job.hpp"  // QueuedProgressSink

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace penumbra::gui {

namespace {
using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Lowers the calling thread's priority (Linux: nice is per thread and inherited by the
/// threads it creates, so the engine's std::thread pool runs niced too). Measured on the
/// 2-core CI machine with `penumbra --bench-latency`: without it the GUI thread competes with
/// two busy engine threads and event-loop latency spikes reach the scheduler's time slice.
void lowerWorkerPriority() {
#ifdef __linux__
  setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), 10);
#endif
}
}  // namespace

Job::Job(QString title, Work work, QObject* parent)
    : QObject(parent), title_(std::move(title)), work_(std::move(work)) {}

Job::~Job() {
  token_->requestCancel();
  if (thread_) {
    thread_->wait();
    delete thread_;
  }
}

QString Job::stateName(State s) {
  switch (s) {
    case State::Queued: return tr("queued");
    case State::Running: return tr("running");
    case State::Cancelling: return tr("cancelling");
    case State::Cancelled: return tr("cancelled");
    case State::Done: return tr("done");
    case State::Failed: return tr("failed");
  }
  return {};
}

double Job::elapsedSeconds() const {
  if (state_ == State::Queued) return 0;
  return secondsBetween(started_, isFinished() ? ended_ : Clock::now());
}

double Job::secondsLeft() const {
  if (state_ != State::Running || fraction_ <= 0.02 || fraction_ >= 1) return -1;
  // Extrapolate from the first progress report on, so that set-up time before the engine's
  // first report (tables, SPR) does not inflate the rate.
  const double df = fraction_ - progressAtFraction_;
  const double dt = secondsBetween(progressAt_, Clock::now());
  if (df <= 0.01 || dt < 0.2) return -1;
  return dt / df * (1.0 - fraction_);
}

void Job::setState(State s) {
  if (s == state_) return;
  state_ = s;
  emit stateChanged(s);
}

void Job::cancel() {
  if (state_ == State::Queued) {
    cancelAt_ = Clock::now();
    started_ = cancelAt_;
    return finish(State::Cancelled);
  }
  if (state_ != State::Running) return;
  cancelAt_ = Clock::now();
  token_->requestCancel();
  setState(State::Cancelling);
}

void Job::start() {
  if (state_ != State::Queued) return;
  started_ = Clock::now();
  setState(State::Running);
  auto sink = std::make_shared<QueuedProgressSink>(this, [this](double f, QString stage) {
    if (!isActive()) return;
    if (fraction_ <= 0 && f > 0) {
      progressAt_ = Clock::now();
      progressAtFraction_ = f;
    }
    const bool newStage = stage != stage_;
    fraction_ = f;
    stage_ = stage;
    // At most ~8 repaints a second: under software GL every repaint of the window composites
    // all GL views, which costs the event loop tens of ms (measured with --bench-latency).
    const auto now = Clock::now();
    if (!newStage && now - lastEmit_ < std::chrono::milliseconds(120)) return;
    lastEmit_ = now;
    emit progressChanged(f, stage, secondsLeft());
  });
  thread_ = QThread::create([work = work_, sink, token = token_, out = outcome_] {
    lowerWorkerPriority();
    const JobControl job{sink.get(), token.get()};
    try {
      work(job);
    } catch (const CancelledError&) {
      out->cancelled = true;
    } catch (const Error& e) {
      out->error = QString::fromStdString(e.message());
      if (!e.detail().empty()) out->error += " (" + QString::fromStdString(e.detail()) + ")";
      out->code = e.code();
    } catch (const std::exception& e) {
      out->error = QString::fromUtf8(e.what());
    } catch (...) {
      out->error = QStringLiteral("unknown error");
    }
    // A cancel that arrived after the engine's last check still ends as cancelled: the user
    // asked for no result, and the GUI must not add one behind their back.
    if (token->isCancelled() && out->error.isEmpty()) out->cancelled = true;
  });
  thread_->setObjectName("penumbra-job");
  connect(thread_, &QThread::finished, this, &Job::onWorkerDone, Qt::QueuedConnection);
  thread_->start();
}

void Job::onWorkerDone() {
  if (thread_) {
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
  }
  const Outcome& out = *outcome_;
  if (out.cancelled) return finish(State::Cancelled);
  if (!out.error.isEmpty()) {
    error_ = out.error;
    errorCode_ = out.code;
    return finish(State::Failed);
  }
  finish(State::Done);
}

void Job::finish(State s) {
  ended_ = Clock::now();
  if (s == State::Cancelled)
    cancelLatencyMs_ = 1000.0 * secondsBetween(cancelAt_, ended_);
  if (s == State::Done) fraction_ = 1;
  setState(s);
  if (s == State::Done) emit succeeded();
  if (s == State::Failed) emit failed(error_);
  if (s == State::Cancelled) emit cancelled();
  emit finished();
}

JobRunner::JobRunner(QObject* parent) : QObject(parent) {}

JobRunner::~JobRunner() {
  for (Job* j : queue_) j->token_->requestCancel();
  for (Job* j : all_)
    if (j->isActive()) j->token_->requestCancel();
  // ~Job (children) waits for the worker.
}

Job* JobRunner::submit(const QString& title, Job::Work work) {
  auto* job = new Job(title, std::move(work), this);
  all_.append(job);
  queue_.append(job);
  connect(job, &Job::finished, this, [this, job] {
    queue_.removeAll(job);
    if (active_ == job) active_ = nullptr;
    emit jobFinished(job);
    startNext();
  });
  emit jobSubmitted(job);
  startNext();
  return job;
}

Job* JobRunner::submitBeside(const QString& title, Job::Work work) {
  auto* job = new Job(title, std::move(work), this);
  all_.append(job);
  connect(job, &Job::finished, this, [this, job] { emit jobFinished(job); });
  emit jobSubmitted(job);
  emit jobStarted(job);
  job->start();
  return job;
}

void JobRunner::startNext() {
  if (active_) return;
  while (!queue_.isEmpty()) {
    Job* job = queue_.takeFirst();
    if (job->state() != Job::State::Queued) continue;
    active_ = job;
    emit jobStarted(job);
    job->start();
    return;
  }
}

void JobRunner::cancelAll() {
  const QList<Job*> queued = queue_;
  for (Job* j : queued) j->cancel();
  if (active_) active_->cancel();
  for (Job* j : all_)
    if (j != active_ && j->isActive()) j->cancel();  // jobs started beside the queue
}

}  // namespace penumbra::gui
