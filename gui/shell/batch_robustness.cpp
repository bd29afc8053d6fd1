// BatchRunner, --robustness-run (issue 16, item 4): the demo plan's robustness evaluated from the
// Robustness panel (its settings: the default 21 scenarios, and --robustness-grid MM), the
// summary and the table printed on stdout, the Robustness dock raised in the right column and the
// DVH dock (bands around the curves) raised at the bottom, so that --screenshot shows both.
#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QTableWidget>
#include <cstdio>

#include "gui/model/robustness_model.hpp"
#include "gui/robust/robustness_controller.hpp"
#include "gui/robust/robustness_panel.hpp"
#include "gui/robust/robustness_table.hpp"
#include "gui/shell/batch_runner.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

void BatchRunner::runRobustness(std::function<void()> then) {
  PlanningWorkspace* ws = window_->planning();
  RobustnessPanel* panel = ws->robustnessPanel();
  RobustnessSettings settings = panel->settings();
  settings.doseGridMm = options_.robustnessGridMm;
  panel->setSettings(settings);
  // As Plan > Robustness... does it (the right column widened for the table), and the DVH.
  if (auto* action = window_->findChild<QAction*>("actionRobustness")) action->trigger();
  if (auto* dock = window_->findChild<QDockWidget*>("dvhDock")) {
    dock->show();
    dock->raise();
  }
  auto* once = new QObject(this);  // this run's connection only
  connect(ws->robustnessController(), &RobustnessController::finished, once,
          [this, panel, once, then](bool ok, const QString& message) {
            once->deleteLater();
            std::printf("robustness: %s\n", qPrintable(message));
            if (!ok) {
              std::fflush(stdout);
              return emit done(6);
            }
            const QTableWidget* t = panel->table();
            for (int r = 0; r < t->rowCount(); ++r) {
              std::printf("  %-16s %-6s", qPrintable(t->item(r, kRobStructure)->text()),
                          qPrintable(t->item(r, kRobMetric)->text()));
              for (int c : {kRobNominal, kRobWorst, kRobBest, kRobLimit})
                std::printf(" %8s", qPrintable(t->item(r, c)->text()));
              std::printf("  %s%s\n", qPrintable(t->item(r, kRobScenario)->text()),
                          t->item(r, kRobStructure)->background().style() != Qt::NoBrush
                              ? "  (flagged)"
                              : "");
            }
            std::fflush(stdout);
            QCoreApplication::processEvents();
            then();
          });
  panel->run();  // one that cannot start says why through finished(false, ...)
}

}  // namespace penumbra::gui
