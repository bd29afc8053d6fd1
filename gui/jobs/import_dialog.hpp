#pragma once
/// The dialog between the scan and the import: the DICOM doctor report of the folder and,
/// when there are several image series, the list to choose from.
#include <memory>

#include <QDialog>

#include "dicom/dicom_import.hpp"

class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace penumbra::gui {

class ImportDialog : public QDialog {
  Q_OBJECT
public:
  ImportDialog(std::shared_ptr<const io::DicomScan> scan, QWidget* parent = nullptr);

  /// Key of the chosen series (io::SeriesInfo::key); empty when none is selectable.
  QString selectedSeriesKey() const;
  /// Selects a series by key; false when the scan has no such series.
  bool selectSeries(const QString& key);

  const io::DicomScan& scan() const { return *scan_; }

private:
  void updateButtons();

  std::shared_ptr<const io::DicomScan> scan_;
  QPlainTextEdit* report_;
  QListWidget* series_;
  QPushButton* importButton_;
};

}  // namespace penumbra::gui
