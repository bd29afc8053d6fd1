#pragma once
/// The DVH panel (dock "DVH", widget "dvhPanel"): cumulative DVHs (Qt Charts; x dose in Gy,
/// y volume in % of the structure) of the checked structures for every checked dose set (one
/// line style per set, the structure's colour per line), and a statistics table per
/// structure and dose set: volume (cc), Dmin, Dmean, Dmax, D98, D95, D50, D2 (Gy) and V95 %,
/// V107 % (of the prescription). Structures and dose sets are toggled in two checkable lists.
/// The numbers come from DvhStore (computed as jobs); table items hold the exact value in
/// Qt::UserRole and show it rounded.
///
/// Queries ("dvhQueryEdit"): the user types "D0.03cc, V20Gy, D95%, V95%" (engines/dvh/
/// dvh_query.hpp) and each query becomes one more table column (logically after V107, shown
/// right after the dose set), read off the same cumulative curves by linear interpolation. "exportDvhCsv" (and File > Export DVH) writes
/// the shown curves as CSV: structure, dose set, dose bin (Gy), volume (% and cc).
///
/// Robustness bands (issue 16, item 4; setRobustnessModel()): for each shown structure the
/// envelope of its DVH over the error scenarios of the last robustness evaluation, a
/// translucent area in the structure's colour under the curves ("dvhBandsCheck" toggles it).
/// The bands belong to the plan they were computed for: the first plan edit removes them
/// (RobustnessModel::bands()).
#include <functional>
#include <vector>

#include <QHash>
#include <QWidget>

#include "dvh/dvh_query.hpp"

class QLabel;
class QLineEdit;
class QPushButton;
class QListWidget;
class QListWidgetItem;
class QTableWidget;

class QAreaSeries;
class QChart;
class QChartView;
class QCheckBox;
class QLineSeries;
class QValueAxis;

namespace penumbra::gui {

class DvhStore;
struct DoseSet;
struct DoseSetDvhs;
class PlanModel;
class RobustnessModel;
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
  /// Draws the bands of `model`'s evaluation (null: none).
  void setRobustnessModel(RobustnessModel* model);
  /// A structure's robustness band (null when none is drawn), visible or not.
  QAreaSeries* band(const QString& structure) const;
  /// Number of bands currently visible.
  int visibleBandCount() const;
  /// Checks or unchecks a structure in the list (as the user's click).
  void setStructureChecked(const QString& structure, bool on);
  /// Checks or unchecks a dose set (by id) in the list.
  void setDoseSetChecked(int doseSetId, bool on);
  /// Table row of a structure and dose set (-1 when absent).
  int statisticsRow(const QString& structure, int doseSetId) const;
  /// Structures unchecked in the panel (saved in case files).
  QStringList hiddenStructures() const;
  void setHiddenStructures(const QStringList& names);

  /// Replaces the query columns with those of `text` (as typed in "dvhQueryEdit"); false when
  /// a token is not a query (queryErrors() says which; the valid ones are still shown).
  bool setQueries(const QString& text);
  const std::vector<dvh::DvhQuery>& queries() const { return queries_; }
  QStringList queryErrors() const { return queryErrors_; }
  /// Table column of a query by its label ("D95%", "V20Gy"), -1 when absent.
  int queryColumn(const QString& label) const;

  /// The shown cumulative DVHs (checked dose sets and structures) as CSV, one line per dose
  /// bin edge: structure,dose_set,dose_gy,volume_percent,volume_cc (header line first; the
  /// dose set by its short name, as in the table: "Dose 2").
  QString csv() const;
  /// Writes csv() to `path` atomically; false (and `error` set) when it cannot be written.
  bool exportCsv(const QString& path, QString* error = nullptr) const;

public slots:
  /// Asks for a file name and exports (errors in a dialog).
  void chooseAndExportCsv();

signals:
  /// The chart and table were rebuilt (after new DVHs or a toggle).
  void refreshed();

private:
  /// Calls fn(index in the dose-set store, dose set, its DVHs, one structure's result) for
  /// every shown curve: checked dose sets that have DVHs, structures not hidden; nothing
  /// without a scene. The statistics table and the CSV export list the same curves.
  void forEachShownResult(
      const std::function<void(int, const DoseSet&, const DoseSetDvhs&, const dvh::DvhResult&)>& fn)
      const;
  void rebuildStructureList();
  void rebuildDoseSetList();
  void refresh();
  void refreshTable();
  /// Adds the bands to the chart; returns the highest dose they reach [Gy].
  double addBands();
  void onItemChanged(QListWidgetItem* item);

  ViewState* state_;
  DvhStore* dvhs_;
  PlanModel* plan_;
  QListWidget* structures_ = nullptr;
  QListWidget* doseSets_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* status_ = nullptr;
  QLineEdit* queryEdit_ = nullptr;
  QPushButton* export_ = nullptr;
  std::vector<dvh::DvhQuery> queries_;
  QStringList queryErrors_;
  QString curveStatus_;  ///< the status line of the last refresh (shown again once queries parse)
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QValueAxis* axisX_ = nullptr;
  QValueAxis* axisY_ = nullptr;
  /// Curves by structure name.
  QHash<QString, QList<QLineSeries*>> series_;
  RobustnessModel* robustness_ = nullptr;
  QCheckBox* bandsCheck_ = nullptr;
  QHash<QString, QAreaSeries*> bands_;
  QStringList hidden_;
  QList<int> uncheckedSets_;  ///< dose-set ids the user unchecked (new sets start checked)
  bool updating_ = false;
};

}  // namespace penumbra::gui
