#pragma once
/// The kernel profiling panel (dock "Kernel profiling", widget "profilingPanel"; issue 4 item 6,
/// DESIGN.md section 3): every KernelProfile record of every dose set's engine run in a table
/// (kernel, variant, backend, device, grid/block, registers, repetitions, median time, GB/s,
/// GFLOP/s, % of the GPU's measured bandwidth when the engine knew it; on screen the cost
/// columns come right after the kernel, the launch details after them), a bar chart of the
/// median time per kernel and variant (one bar set per run), and CSV export (button
/// "exportProfilesCsv"; written atomically through QSaveFile). On the CPU backend the records
/// are the engine's CPU stages (grid/block and registers do not apply and show "-").
#include <vector>

#include <QString>
#include <QWidget>

#include "core/kernel_profile.hpp"

class QChart;
class QChartView;
class QLabel;
class QPushButton;
class QTableWidget;

namespace penumbra::gui {

class DoseSetStore;

class ProfilingPanel : public QWidget {
  Q_OBJECT
public:
  enum Column {
    kRun, kKernel, kVariant, kBackend, kDevice, kGrid, kBlock, kRegisters, kReps, kMedianMs, kGBs, kGflops,
    kPctPeak, kColumns
  };

  explicit ProfilingPanel(DoseSetStore* store, QWidget* parent = nullptr);

  QTableWidget* table() const { return table_; }
  QChart* chart() const { return chart_; }
  /// The CSV text of every record (header line first).
  QString csv() const;
  /// Writes csv() to `path` atomically; false (and `error` set) when it cannot be written.
  bool exportCsv(const QString& path, QString* error = nullptr) const;

public slots:
  /// Asks for a file name and exports (errors in a dialog).
  void chooseAndExportCsv();

private:
  struct Row {
    QString run;
    KernelProfile profile;
  };
  void refresh();

  DoseSetStore* store_;
  std::vector<Row> rows_;
  QTableWidget* table_ = nullptr;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLabel* summary_ = nullptr;
  QPushButton* export_ = nullptr;
};

}  // namespace penumbra::gui
