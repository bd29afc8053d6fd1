// DvhPanel: the CSV export of the shown curves ("exportDvhCsv", File > Export DVH)
// (dvh_panel.hpp), written atomically.
#include <QFileDialog>
#include <QMessageBox>
#include <QSaveFile>
#include <QStandardPaths>

#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

QString DvhPanel::csv() const {
  QStringList lines{QStringLiteral("structure,dose_set,dose_gy,volume_percent,volume_cc")};
  auto field = [](QString f) {
    if (f.contains(',') || f.contains('"') || f.contains('\n')) f = '"' + f.replace("\"", "\"\"") + '"';
    return f;
  };
  forEachShownResult([&](int, const DoseSet& set, const DoseSetDvhs&, const dvh::DvhResult& r) {
    const QString name = QString::fromStdString(r.structureName);
    // The dose set by its short name, as in the table ("Dose 2", "Optimised 1").
    const QString prefix = field(name) + ',' + field(set.name.section(':', 0, 0)) + ',';
    const auto& c = r.curve;
    for (std::size_t k = 0; k < c.doseGy.size(); ++k)
      lines << prefix + QString::number(c.doseGy[k], 'g', 10) + ',' + QString::number(c.volumePercent[k], 'g', 10) +
                   ',' + QString::number(c.volumeCc[k], 'g', 10);
  });
  return lines.join('\n') + '\n';
}

bool DvhPanel::exportCsv(const QString& path, QString* error) const {
  // QSaveFile writes a temporary file and renames it on commit(): never a half-written file.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(csv().toUtf8()) < 0 || !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

void DvhPanel::chooseAndExportCsv() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export DVH"), dir + "/penumbra-dvh.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportCsv(path, &error)) {
    auto* box = new QMessageBox(QMessageBox::Critical, tr("Export failed"), tr("Could not write %1: %2").arg(path, error),
                                QMessageBox::Ok, this);
    box->setObjectName("fileErrorDialog");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
  }
}

}  // namespace penumbra::gui
