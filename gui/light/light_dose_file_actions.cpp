// LightDosePanel, its file actions: open a .mci (choice of run) and save the last result as .mco.
#include "gui/light/light_dose_panel.hpp"

#include <algorithm>

#include <QComboBox>
#include <QFileInfo>

#include "gui/light/light_dose_controller.hpp"
#include "gui/light/light_dose_panel_parts.hpp"
#include "gui/model/plural.hpp"

namespace penumbra::gui {

using namespace light_panel;

bool LightDosePanel::openMci(const QString& path) {
  QString error;
  std::vector<io::MciRun> runs = LightDoseController::readMci(path, &error);
  if (runs.empty()) {
    showError(tr("Cannot open .mci"), error);
    return false;
  }
  mciRuns_ = std::move(runs);
  mciPath_ = path;
  runCombo_->clear();
  for (std::size_t i = 0; i < mciRuns_.size(); ++i)
    runCombo_->addItem(tr("Run %1: %2, %3, %4 packets")
                           .arg(i + 1)
                           .arg(QString::fromStdString(mciRuns_[i].outputFile),
                                countOf(qsizetype(mciRuns_[i].medium.layers.size()), "layer"))
                           .arg(double(mciRuns_[i].config.packets), 0, 'g', 3));
  runCombo_->setEnabled(mciRuns_.size() > 1);
  runCombo_->setCurrentIndex(0);
  setRun(mciRuns_.front());
  setStatus(
      tr("%1: %2 run(s); run 1 loaded.").arg(QFileInfo(path).fileName()).arg(mciRuns_.size()));
  return true;
}

void LightDosePanel::selectMciRun(int index) {
  if (index < 0 || index >= int(mciRuns_.size())) return;
  if (runCombo_->currentIndex() != index) runCombo_->setCurrentIndex(index);
  setRun(mciRuns_[std::size_t(index)]);
  setStatus(tr("Run %1 of %2 loaded.").arg(index + 1).arg(QFileInfo(mciPath_).fileName()));
}

bool LightDosePanel::saveMco(const QString& path) {
  QString error;
  if (!controller_->saveMco(path, &error)) {
    showError(tr("Cannot save .mco"), tr("%1: %2").arg(path, error));
    return false;
  }
  setStatus(tr("Saved %1.").arg(path));
  return true;
}

}  // namespace penumbra::gui
