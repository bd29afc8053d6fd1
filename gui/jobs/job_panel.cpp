#include "gui/jobs/job_panel.hpp"

#include <cmath>

#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>

#include "gui/jobs/job_runner.hpp"

namespace penumbra::gui {

QString formatSecondsLeft(double s) {
  if (s < 0) return {};
  const int total = int(std::ceil(s));
  if (total < 60) return QObject::tr("%1 s left").arg(total);
  return QObject::tr("%1 min %2 s left").arg(total / 60).arg(total % 60, 2, 10, QChar('0'));
}

JobPanel::JobPanel(JobRunner* runner, QWidget* parent) : QWidget(parent), runner_(runner) {
  setObjectName("jobPanel");
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel(tr("No job"));
  title_->setObjectName("jobTitleLabel");
  title_->setWordWrap(true);
  state_ = new QLabel;
  state_->setObjectName("jobStateLabel");
  progress_ = new QProgressBar;
  progress_->setObjectName("jobProgressBar");
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setTextVisible(true);
  timeLeft_ = new QLabel;
  timeLeft_->setObjectName("jobTimeLeftLabel");
  timeLeft_->setMinimumWidth(110);
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setObjectName("cancelJobButton");
  cancel_->setEnabled(false);
  list_ = new QListWidget;
  list_->setObjectName("jobList");
  grid->addWidget(title_, 0, 0, 1, 2);
  grid->addWidget(state_, 0, 2);
  grid->addWidget(progress_, 1, 0);
  grid->addWidget(timeLeft_, 1, 1);
  grid->addWidget(cancel_, 1, 2);
  grid->addWidget(list_, 2, 0, 1, 3);
  grid->setColumnStretch(0, 1);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (shown_) shown_->cancel();
  });
  // The list is rebuilt at most every 150 ms: live dose submits a job per edit, and under
  // software GL every repaint of the list composites the whole window (~30 ms measured in
  // gui.live_dose), so one rebuild per job stacked up to a quarter of a second of repaints.
  listTimer_.setSingleShot(true);
  listTimer_.setInterval(150);
  connect(&listTimer_, &QTimer::timeout, this, &JobPanel::refreshList);
  connect(runner, &JobRunner::jobSubmitted, this, &JobPanel::scheduleList);
  connect(runner, &JobRunner::jobStarted, this, &JobPanel::follow);
  connect(runner, &JobRunner::jobFinished, this, &JobPanel::scheduleList);
}

void JobPanel::scheduleList() {
  if (!listTimer_.isActive()) listTimer_.start();
}

void JobPanel::follow(Job* job) {
  if (shown_) disconnect(shown_, nullptr, this, nullptr);
  shown_ = job;
  if (job) {
    connect(job, &Job::stateChanged, this, [this] {
      refresh();
      scheduleList();
    });
    connect(job, &Job::progressChanged, this, &JobPanel::refresh);
  }
  refresh();
}

void JobPanel::refresh() {
  Job* job = shown_;
  if (!job) {
    title_->setText(tr("No job"));
    state_->clear();
    progress_->setValue(0);
    timeLeft_->clear();
    cancel_->setEnabled(false);
    return;
  }
  title_->setText(job->title() + (job->stage().isEmpty() ? QString() : QString(": ") + job->stage()));
  state_->setText(Job::stateName(job->state()));
  progress_->setValue(int(std::lround(1000 * job->fraction())));
  if (job->isActive())
    timeLeft_->setText(job->state() == Job::State::Cancelling ? tr("cancelling...")
                                                               : formatSecondsLeft(job->secondsLeft()));
  else
    timeLeft_->setText(tr("%1 s").arg(job->elapsedSeconds(), 0, 'f', 1));
  cancel_->setEnabled(job->state() == Job::State::Running || job->state() == Job::State::Queued);
}

void JobPanel::refreshList() {
  list_->clear();
  const auto& jobs = runner_->jobs();
  for (int i = int(jobs.size()) - 1; i >= 0; --i) {  // newest first
    const Job* j = jobs[i];
    QString line = QString("%1 - %2").arg(j->title(), Job::stateName(j->state()));
    if (j->isFinished()) line += QString(" (%1 s)").arg(j->elapsedSeconds(), 0, 'f', 1);
    if (j->state() == Job::State::Failed) line += ": " + j->errorMessage();
    if (j->state() == Job::State::Cancelled && j->cancelLatencyMs() >= 0)
      line += tr(", stopped %1 ms after cancel").arg(j->cancelLatencyMs(), 0, 'f', 0);
    list_->addItem(line);
  }
}

}  // namespace penumbra::gui
