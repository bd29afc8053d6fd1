#pragma once
/// The jobs panel (dock "Jobs"): the active job's title, state, progress bar with the time
/// left and a Cancel button, and the list of every job of the session with its outcome.
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace penumbra::gui {

class Job;
class JobRunner;

class JobPanel : public QWidget {
  Q_OBJECT
public:
  explicit JobPanel(JobRunner* runner, QWidget* parent = nullptr);

  /// The job the progress bar follows (the active one, else the last finished), or null.
  Job* shownJob() const { return shown_.data(); }

private:
  void follow(Job* job);
  void refresh();
  void refreshList();
  /// refreshList() soon (coalesced).
  void scheduleList();

  JobRunner* runner_;
  QPointer<Job> shown_;
  QLabel* title_ = nullptr;
  QLabel* state_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* timeLeft_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QListWidget* list_ = nullptr;
  QTimer listTimer_;
};

/// "1 min 05 s", "12 s", or "" for an unknown (negative) time.
QString formatSecondsLeft(double seconds);

}  // namespace penumbra::gui
