#include "gui/dose/profiling_panel.hpp"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include "gui/model/dose_set_store.hpp"
#include "gui/model/plural.hpp"

namespace penumbra::gui {

namespace {

QTableWidgetItem* textItem(const QString& text) { return new QTableWidgetItem(text); }

/// Widest the kernel column starts (the user can widen it).
constexpr int kKernelColumnMaxPx = 120;

QTableWidgetItem* numberItem(double value, int decimals, bool known = true) {
  auto* item = new QTableWidgetItem(known ? QString::number(value, 'f', decimals) : QString("-"));
  item->setData(Qt::UserRole, known ? QVariant(value) : QVariant());
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

/// Bar label: kernel over variant (axis labels are rich text), so long names stay readable.
QString categoryOf(const KernelProfile& p) {
  return QString::fromStdString(p.kernel).toHtmlEscaped() + "<br><i>" + QString::fromStdString(p.variant).toHtmlEscaped() + "</i>";
}

QString csvField(QString s) {
  if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace("\"", "\"\"") + '"';
  return s;
}

}  // namespace

ProfilingPanel::ProfilingPanel(DoseSetStore* store, QWidget* parent) : QWidget(parent), store_(store) {
  setObjectName("profilingPanel");
  table_ = new QTableWidget(0, kColumns);
  table_->setObjectName("profileTable");
  table_->setHorizontalHeaderLabels({tr("Run"), tr("Kernel"), tr("Variant"), tr("Backend"), tr("Device"), tr("Grid"),
                                     tr("Block"), tr("Registers"), tr("Reps"), tr("Time (ms)"), tr("GB/s"),
                                     tr("GFLOP/s"), tr("% peak BW")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  // What ran and what it cost first, launch details after: time, GB/s and % of peak stay in
  // sight in a docked panel at 1280 px (they used to sit right of Registers, off screen). The
  // columns move only on screen: the Column enum, the item indices and the CSV keep their order.
  QHeaderView* header = table_->horizontalHeader();
  const int order[] = {kRun,     kKernel,  kMedianMs, kGBs, kPctPeak, kGflops,   kReps,
                       kVariant, kBackend, kDevice,   kGrid, kBlock,  kRegisters};
  for (int v = 0; v < kColumns; ++v) header->moveSection(header->visualIndex(order[v]), v);
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  // Kernel names can be long ("proton: spot superposition"): elided, full name in the tooltip.
  header->setSectionResizeMode(kKernel, QHeaderView::Interactive);
  table_->setTextElideMode(Qt::ElideMiddle);
  table_->horizontalHeaderItem(kPctPeak)->setToolTip(
      tr("Achieved GB/s in % of the device's bandwidth measured by the engine (GPU runs only)"));

  chart_ = new QChart;
  chart_->setTitle(tr("Median time per kernel and variant"));
  chart_->setMargins(QMargins(4, 4, 4, 4));
  view_ = new QChartView(chart_);
  view_->setObjectName("profileChartView");
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(160);

  summary_ = new QLabel(tr("No engine run yet."));
  summary_->setObjectName("profileSummaryLabel");
  export_ = new QPushButton(tr("Export CSV..."));
  export_->setObjectName("exportProfilesCsv");
  export_->setEnabled(false);
  connect(export_, &QPushButton::clicked, this, &ProfilingPanel::chooseAndExportCsv);

  auto* bar = new QHBoxLayout;
  bar->addWidget(summary_, 1);
  bar->addWidget(export_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_);
  split->addWidget(view_);
  // The table first: at 1280 px the docked panel is ~620 px wide, and the cost columns need
  // about 420 of them; the chart takes what is left (at least 180).
  view_->setMinimumWidth(180);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({720, 240});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(store, &DoseSetStore::doseSetAdded, this, &ProfilingPanel::refresh);
  connect(store, &DoseSetStore::doseSetChanged, this, &ProfilingPanel::refresh);
  connect(store, &DoseSetStore::doseSetRemoved, this, &ProfilingPanel::refresh);
  refresh();
}

void ProfilingPanel::refresh() {
  rows_.clear();
  for (int i = 0; i < store_->count(); ++i) {
    const auto set = store_->at(i);
    // "Dose 2: 1 beams, CPU, 12:03" -> "Dose 2" keeps the table and the bars readable.
    const QString run = set->name.section(':', 0, 0);
    for (const auto& p : set->profiles) rows_.push_back({run, p});
  }
  table_->setRowCount(int(rows_.size()));
  for (int r = 0; r < int(rows_.size()); ++r) {
    const Row& row = rows_[std::size_t(r)];
    const KernelProfile& p = row.profile;
    const bool gpu = p.backend != "cpu";
    table_->setItem(r, kRun, textItem(row.run));
    QTableWidgetItem* kernel = textItem(QString::fromStdString(p.kernel));
    kernel->setToolTip(QString::fromStdString(p.kernel + " (" + p.variant + ")"));
    table_->setItem(r, kKernel, kernel);
    table_->setItem(r, kVariant, textItem(QString::fromStdString(p.variant)));
    table_->setItem(r, kBackend, textItem(QString::fromStdString(p.backend)));
    table_->setItem(r, kDevice, textItem(QString::fromStdString(p.device)));
    table_->setItem(r, kGrid, numberItem(p.gridX, 0, gpu && p.gridX > 0));
    table_->setItem(r, kBlock, numberItem(p.blockX, 0, gpu && p.blockX > 0));
    table_->setItem(r, kRegisters, numberItem(p.registersPerThread, 0, gpu && p.registersPerThread > 0));
    table_->setItem(r, kReps, numberItem(p.repetitions, 0));
    table_->setItem(r, kMedianMs, numberItem(p.medianMs, 3));
    table_->setItem(r, kGBs, numberItem(p.gbPerS(), 1, p.bytes > 0));
    table_->setItem(r, kGflops, numberItem(p.gflopPerS(), 1, p.flops > 0));
    table_->setItem(r, kPctPeak, numberItem(p.pctPeakBandwidth(), 1, p.peakBandwidthGBs > 0 && p.bytes > 0));
  }

  table_->resizeColumnToContents(kKernel);
  table_->setColumnWidth(kKernel, std::min(table_->columnWidth(kKernel), kKernelColumnMaxPx));

  // Bars: categories "kernel (variant)" in first-seen order, one bar set per run.
  chart_->removeAllSeries();
  for (QAbstractAxis* a : chart_->axes()) {
    chart_->removeAxis(a);
    delete a;
  }
  QStringList categories, runs;
  for (const Row& row : rows_) {
    const QString c = categoryOf(row.profile);
    if (!categories.contains(c)) categories << c;
    if (!runs.contains(row.run)) runs << row.run;
  }
  if (!rows_.empty()) {
    auto* series = new QHorizontalBarSeries;
    double maxMs = 0;
    for (const QString& run : runs) {
      auto* set = new QBarSet(run);
      QList<qreal> values(categories.size(), 0.0);
      for (const Row& row : rows_)
        if (row.run == run) {
          const int c = int(categories.indexOf(categoryOf(row.profile)));
          values[c] += row.profile.medianMs;
          maxMs = std::max(maxMs, values[c]);
        }
      set->append(values);
      series->append(set);
    }
    chart_->addSeries(series);
    auto* axisY = new QBarCategoryAxis;
    axisY->append(categories);
    auto* axisX = new QValueAxis;
    axisX->setTitleText(tr("Median time (ms)"));
    axisX->setRange(0, maxMs > 0 ? maxMs * 1.05 : 1.0);
    axisX->applyNiceNumbers();
    axisX->setLabelFormat("%g");
    chart_->addAxis(axisY, Qt::AlignLeft);
    chart_->addAxis(axisX, Qt::AlignBottom);
    series->attachAxis(axisY);
    series->attachAxis(axisX);
    chart_->legend()->setVisible(runs.size() > 1);
    chart_->legend()->setAlignment(Qt::AlignBottom);
  }
  summary_->setText(rows_.empty() ? tr("No engine run yet.")
                                  : tr("%1 from %2").arg(countOf(qsizetype(rows_.size()), "record"), countOf(runs.size(), "run")));
  export_->setEnabled(!rows_.empty());
}

QString ProfilingPanel::csv() const {
  QStringList lines;
  lines << "run,kernel,variant,backend,device,grid_x,block_x,registers_per_thread,shared_bytes_per_block,"
           "theoretical_occupancy,repetitions,median_ms,min_ms,bytes,flops,gb_per_s,gflop_per_s,"
           "peak_bandwidth_gb_per_s,pct_peak_bandwidth";
  for (const Row& row : rows_) {
    const KernelProfile& p = row.profile;
    QStringList f;
    f << csvField(row.run) << csvField(QString::fromStdString(p.kernel)) << csvField(QString::fromStdString(p.variant))
      << csvField(QString::fromStdString(p.backend)) << csvField(QString::fromStdString(p.device))
      << QString::number(p.gridX) << QString::number(p.blockX) << QString::number(p.registersPerThread)
      << QString::number(p.sharedBytesPerBlock) << QString::number(p.theoreticalOccupancy, 'g', 6)
      << QString::number(p.repetitions) << QString::number(p.medianMs, 'g', 9) << QString::number(p.minMs, 'g', 9)
      << QString::number(p.bytes, 'g', 12) << QString::number(p.flops, 'g', 12) << QString::number(p.gbPerS(), 'g', 9)
      << QString::number(p.gflopPerS(), 'g', 9) << QString::number(p.peakBandwidthGBs, 'g', 9)
      << QString::number(p.pctPeakBandwidth(), 'g', 6);
    lines << f.join(',');
  }
  return lines.join('\n') + '\n';
}

bool ProfilingPanel::exportCsv(const QString& path, QString* error) const {
  // QSaveFile writes a temporary file and renames it on commit(): an existing file is never
  // left half written.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(csv().toUtf8()) < 0 || !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

void ProfilingPanel::chooseAndExportCsv() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString path = QFileDialog::getSaveFileName(this, tr("Export kernel profiles"),
                                                    dir + "/penumbra-kernel-profiles.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportCsv(path, &error)) {
    auto* box = new QMessageBox(QMessageBox::Critical, tr("Export failed"),
                                tr("Could not write %1: %2").arg(path, error), QMessageBox::Ok, this);
    box->setObjectName("fileErrorDialog");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
  }
}

}  // namespace penumbra::gui
