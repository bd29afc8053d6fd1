#pragma once
/// The DVH panel (dock "DVH", widget "dvhPanel"): cumulative DVHs (Qt Charts; x dose in Gy,
/// y volume in % of the structure) of the checked structures for every checked dose set (one
/// line style per set, the structure's colour per line), and a statistics table per
/// structure and dose set: volume (cc), Dmin, Dmean, Dmax, D98, D95, D50, D2 (Gy) and V95 %,
/// V107 % (of the prescription). Structures and dose sets are toggled in two checkable lists.
/// The numbers come from DvhStore (computed as jobs); table items hold the exact value in
/// Qt::UserRole and show it rounded.
#include <QHash>
#include <QWidget>

class QLabel;
class QListWidget;
class QListWidgetItem;
class QTableWidget;

class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;

namespace penumbra::gui {

class DvhStore;
class PlanModel;
class ViewState;

class DvhPanel : public QWidget {
  Q_OBJECT
public:
  enum StatColumn {
    kStructure, kDoseSet, kVolumeCc, kDmin, kDmean, kDmax, kD98, kD95, kD50, kD2, kV95, kV107, kStatColumns
  };

  DvhPanel(ViewState* state, DvhStore* dvhs, PlanModel* plan, QWidget* parent = nullptr);

  QChart* chart() const { return chart_; }
  QTableWidget* statisticsTable() const { return table_; }
  /// Curves drawn for a structure (one per checked dose set that has its DVH), visible or not.
  QList<QLineSeries*> series(const QString& structure) const;
  /// Number of curves currently visible.
  int visibleSeriesCount() const;
  /// Checks or unchecks a structure in the list (as the user's click).
  void setStructureChecked(const QString& structure, bool on);
  /// Checks or unchecks a dose set (by id) in the list.
  void setDoseSetChecked(int doseSetId, bool on);
  /// Table row of a structure and dose set (-1 when absent).
  int statisticsRow(const QString& structure, int doseSetId) const;
  /// Structures unchecked in the panel (saved in case files).
  QStringList hiddenStructures() const;
  void setHiddenStructures(const QStringList& names);

signals:
  /// The chart and table were rebuilt (after new DVHs or a toggle).
  void refreshed();

private:
  void rebuildStructureList();
  void rebuildDoseSetList();
  void refresh();
  void refreshTable();
  void onItemChanged(QListWidgetItem* item);

  ViewState* state_;
  DvhStore* dvhs_;
  PlanModel* plan_;
  QListWidget* structures_ = nullptr;
  QListWidget* doseSets_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* status_ = nullptr;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QValueAxis* axisX_ = nullptr;
  QValueAxis* axisY_ = nullptr;
  /// Curves by structure name.
  QHash<QString, QList<QLineSeries*>> series_;
  QStringList hidden_;
  QList<int> uncheckedSets_;  ///< dose-set ids the user unchecked (new sets start checked)
  bool updating_ = false;
};

}  // namespace penumbra::gui
