#include "gui/jobs/import_dialog.hpp"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "gui/model/plural.hpp"

namespace penumbra::gui {

namespace {
constexpr int kKeyRole = Qt::UserRole;
}

ImportDialog::ImportDialog(std::shared_ptr<const io::DicomScan> scan, QWidget* parent)
    : QDialog(parent), scan_(std::move(scan)) {
  setObjectName("importDialog");
  setWindowTitle(tr("Import DICOM"));
  resize(760, 560);
  auto* layout = new QVBoxLayout(this);

  auto* folder = new QLabel(tr("<b>Folder:</b> %1 &nbsp; (%2, %3, %4)")
                                .arg(QString::fromStdString(scan_->folder).toHtmlEscaped(),
                                     countOf(scan_->filesSeen, "file"),
                                     countOf(qsizetype(scan_->series.size()), "image series", "image series"),
                                     countOf(qsizetype(scan_->structureSets.size()), "structure set")));
  folder->setObjectName("importFolderLabel");
  folder->setWordWrap(true);
  layout->addWidget(folder);

  layout->addWidget(new QLabel(tr("Image series (choose the CT to plan on):")));
  series_ = new QListWidget;
  series_->setObjectName("seriesList");
  for (const io::SeriesInfo& s : scan_->series) {
    QString text = QString::fromStdString(s.description);
    if (text.isEmpty())
      text = QStringLiteral("%1, %2, %3x%4").arg(QString::fromStdString(s.modality), countOf(s.slices, "slice")).arg(s.columns).arg(s.rows);
    if (!s.problems.empty()) text += tr("  [%1]").arg(countOf(qsizetype(s.problems.size()), "problem"));
    auto* item = new QListWidgetItem(text, series_);
    item->setData(kKeyRole, QString::fromStdString(s.key));
    item->setToolTip(QString::fromStdString(s.seriesInstanceUid));
    // Only CT can be planned on; other modalities are listed for information.
    if (s.modality != "CT") item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
  }
  for (int r = 0; r < series_->count(); ++r)
    if (series_->item(r)->flags() & Qt::ItemIsEnabled) {
      series_->setCurrentRow(r);
      break;
    }
  series_->setMaximumHeight(140);
  layout->addWidget(series_);

  layout->addWidget(new QLabel(tr("DICOM doctor report:")));
  report_ = new QPlainTextEdit;
  report_->setObjectName("doctorReportText");
  report_->setReadOnly(true);
  report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  report_->setPlainText(QString::fromStdString(io::dicomDoctorReport(*scan_)));
  layout->addWidget(report_, 1);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
  importButton_ = buttons->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
  importButton_->setObjectName("importButton");
  importButton_->setDefault(true);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  connect(series_, &QListWidget::currentRowChanged, this, &ImportDialog::updateButtons);
  connect(series_, &QListWidget::itemDoubleClicked, this, [this] {
    if (importButton_->isEnabled()) accept();
  });
  updateButtons();
}

QString ImportDialog::selectedSeriesKey() const {
  const QListWidgetItem* item = series_->currentItem();
  return item && (item->flags() & Qt::ItemIsEnabled) ? item->data(kKeyRole).toString() : QString();
}

bool ImportDialog::selectSeries(const QString& key) {
  for (int r = 0; r < series_->count(); ++r)
    if (series_->item(r)->data(kKeyRole).toString() == key) {
      series_->setCurrentRow(r);
      return true;
    }
  return false;
}

void ImportDialog::updateButtons() { importButton_->setEnabled(!selectedSeriesKey().isEmpty()); }

}  // namespace penumbra::gui
