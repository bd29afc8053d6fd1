#include "gui/jobs/import_job.hpp"

#include <cmath>

#include <QtConcurrent/QtConcurrentRun>

#include "core/error.hpp"

namespace penumbra::gui {

QueuedProgressSink::QueuedProgressSink(QObject* receiver, Callback callback)
    : receiver_(receiver), callback_(std::move(callback)) {}

void QueuedProgressSink::report(double fraction, std::string_view stage) {
  if (std::abs(fraction - lastFraction_) < 0.005 && stage == lastStage_) return;
  lastFraction_ = fraction;
  lastStage_ = std::string(stage);
  QMetaObject::invokeMethod(
      receiver_,
      [cb = callback_, fraction, text = QString::fromUtf8(stage.data(), qsizetype(stage.size()))] {
        cb(fraction, text);
      },
      Qt::QueuedConnection);
}

ImportJob::ImportJob(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &ImportJob::onFinished);
}

ImportJob::~ImportJob() {
  if (cancel_) cancel_->requestCancel();
  watcher_.waitForFinished();
}

void ImportJob::setState(State s) {
  if (s == state_) return;
  state_ = s;
  emit stateChanged(s);
}

template <typename Work>
bool ImportJob::start(Work work) {
  if (isBusy()) return false;
  cancel_ = std::make_shared<CancelToken>();
  const int run = ++run_;
  auto sink = std::make_shared<QueuedProgressSink>(this, [this, run](double f, QString stage) {
    if (run == run_ && isBusy()) emit progress(f, stage);
  });
  setState(State::Running);
  emit progress(0.0, tr("starting"));
  watcher_.setFuture(QtConcurrent::run([work = std::move(work), sink, token = cancel_] {
    Outcome out;
    const JobControl job{sink.get(), token.get()};
    try {
      work(job, out);
    } catch (const CancelledError&) {
      out.cancelled = true;
    } catch (const Error& e) {
      out.error = QString::fromStdString(e.message());
      if (!e.detail().empty()) out.error += " (" + QString::fromStdString(e.detail()) + ")";
    } catch (const std::exception& e) {
      out.error = QString::fromUtf8(e.what());
    } catch (...) {
      out.error = QStringLiteral("unknown error");
    }
    if (token->isCancelled()) out.cancelled = true;
    return out;
  }));
  return true;
}

bool ImportJob::startScan(const QString& folder) {
  return start([folder = folder.toStdString()](const JobControl& job, Outcome& out) {
    out.scan = std::make_shared<const io::DicomScan>(io::scanDicomFolder(folder, job));
  });
}

bool ImportJob::startImport(std::shared_ptr<const io::DicomScan> scan, const QString& seriesKey) {
  return start([scan = std::move(scan), key = seriesKey.toStdString()](const JobControl& job,
                                                                       Outcome& out) {
    out.import = std::make_shared<io::PatientImportResult>(io::importPatient(*scan, key, job));
  });
}

void ImportJob::cancel() {
  if (state_ != State::Running || !cancel_) return;
  cancel_->requestCancel();
  setState(State::Cancelling);
}

void ImportJob::onFinished() {
  Outcome out = watcher_.result();
  if (out.cancelled) {
    setState(State::Cancelled);
    emit cancelled();
  } else if (!out.error.isEmpty()) {
    setState(State::Failed);
    emit failed(out.error);
  } else {
    setState(State::Done);
    if (out.scan) emit scanFinished(out.scan);
    if (out.import) emit importFinished(out.import);
  }
}

}  // namespace penumbra::gui
