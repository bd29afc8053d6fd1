// LightDosePanel, its results view: the fluence map with isofluence lines, Rd(r), A(z) and the
// summary table of the last finished run.
#include "gui/light/light_dose_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRegularExpression>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include "gui/light/fluence_map_view.hpp"
#include "gui/light/light_dose_controller.hpp"
#include "gui/light/light_dose_panel_parts.hpp"

namespace penumbra::gui {

using namespace light_panel;

namespace {

/// Log axis range: whole decades around the positive values; a label every 10, 100 or 1000
/// so that at most about five labels share the height (Qt Charts elides crowded labels).
void fitLogAxis(QLogValueAxis* axis, double lo, double hi) {
  if (!(lo > 0) || !(hi >= lo)) return axis->setRange(1e-3, 1);
  int a = int(std::floor(std::log10(lo))), b = int(std::ceil(std::log10(hi * 1.0001)));
  const int step = std::max(1, (b - a + 4) / 5);
  a = int(std::floor(double(a) / step)) * step;
  b = int(std::ceil(double(b) / step)) * step;
  axis->setBase(std::pow(10.0, step));
  axis->setRange(std::pow(10.0, a), std::pow(10.0, b));
}

QChartView* logChart(const QString& title, const QString& xTitle, const QString& yTitle,
                     const char* name, QLineSeries*& series, QValueAxis*& x, QLogValueAxis*& y) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->hide();
  chart->setMargins(QMargins(2, 2, 2, 2));
  series = new QLineSeries;
  chart->addSeries(series);
  x = new QValueAxis;
  x->setTitleText(xTitle);
  x->setLabelFormat("%.3g");
  y = new QLogValueAxis;
  y->setTitleText(yTitle);
  y->setLabelFormat("%.0e");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  auto* view = new QChartView(chart);
  view->setObjectName(name);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(220, 200);
  return view;
}

}  // namespace

QWidget* LightDosePanel::buildResults() {
  auto* split = new QSplitter(Qt::Vertical);
  auto* top = new QWidget;
  auto* tv = new QVBoxLayout(top);
  tv->setContentsMargins(0, 0, 0, 0);
  map_ = new FluenceMapView;
  tv->addWidget(map_, 1);
  auto* levelRow = new QHBoxLayout;
  levelRow->addWidget(new QLabel(tr("Isofluence levels [cm\u207b\u00b2]")));
  levels_ = new QLineEdit(kDefaultLevels);
  levels_->setObjectName("contourLevelsEdit");
  levels_->setToolTip(
      tr("Comma-separated fluence levels per launched photon weight; Lo et al. "
         "(2009), Fig. 6 use 1000, 100, 10, 1, 0.01, 1e-5"));
  levelRow->addWidget(levels_, 1);
  tv->addLayout(levelRow);
  contourInfo_ = new QLabel;
  contourInfo_->setObjectName("contourInfoLabel");
  contourInfo_->setWordWrap(true);
  tv->addWidget(contourInfo_);
  readout_ = new QLabel(tr("Move the mouse over the map for values."));
  readout_->setObjectName("fluenceReadoutLabel");
  tv->addWidget(readout_);
  connect(levels_, &QLineEdit::editingFinished, this,
          [this] { setContourLevels(levels_->text()); });
  connect(map_, &FluenceMapView::hovered, this, [this](const QString& t) {
    readout_->setText(t.isEmpty() ? tr("Move the mouse over the map for values.") : t);
  });

  auto* plots = new QWidget;
  auto* ph = new QHBoxLayout(plots);
  ph->setContentsMargins(0, 0, 0, 0);
  ph->addWidget(logChart(tr("Diffuse reflectance Rd(r)"), tr("r [cm]"), tr("Rd [cm\u207b\u00b2]"),
                         "rdChart", rdSeries_, rdX_, rdY_));
  ph->addWidget(logChart(tr("Absorption A(z)"), tr("z [cm]"), tr("A [cm\u207b\u00b9]"), "azChart",
                         azSeries_, azX_, azY_));
  rdSeries_->setObjectName("rdSeries");
  azSeries_->setObjectName("azSeries");
  auto* numbers = new QVBoxLayout;
  summary_ = new QTableWidget(kLayerRows, 2);
  summary_->setObjectName("lightSummaryTable");
  summary_->setHorizontalHeaderLabels({tr("Value"), tr("Std. error")});
  summary_->setVerticalHeaderLabels({tr("Rsp (specular)"), tr("Rd (diffuse refl.)"),
                                     tr("A (absorbed)"), tr("Tt (transmitted)"),
                                     tr("Rsp + Rd + A + Tt"), tr("Roulette gain")});
  summary_->verticalHeaderItem(kRoulette)->setToolTip(
      tr("Net weight added by Russian roulette per packet (zero in expectation): the sum above "
         "equals 1 plus this gain"));
  summary_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  summary_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  summary_->verticalHeader()->setDefaultSectionSize(20);
  summary_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  summary_->setMinimumWidth(330);
  numbers->addWidget(summary_, 1);
  runInfo_ = new QLabel;
  runInfo_->setObjectName("lightRunInfoLabel");
  runInfo_->setWordWrap(true);
  runInfo_->setMaximumWidth(360);
  numbers->addWidget(runInfo_);
  ph->addLayout(numbers);
  split->addWidget(top);
  split->addWidget(plots);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  return split;
}

bool LightDosePanel::setContourLevels(const QString& text) {
  std::vector<double> levels;
  for (const QString& t : text.split(QRegularExpression("[,;\\s]+"), Qt::SkipEmptyParts)) {
    bool ok = false;
    const double x = t.toDouble(&ok);
    if (!ok || !(x > 0) || !std::isfinite(x)) {
      setStatus(tr("Isofluence levels: '%1' is not a positive number; levels unchanged.").arg(t),
                true);
      return false;
    }
    levels.push_back(x);
  }
  if (levels_->text() != text) levels_->setText(text);
  map_->setLevels(levels);
  updateContourInfo();
  return true;
}

void LightDosePanel::showResult() {
  const auto res = controller_->result();
  if (!res) {
    map_->clear();
    contourInfo_->setText(tr("No result yet."));
    return updateButtons();
  }
  const mcml::McmlResult& r = res->result;
  const mcml::McmlConfig& c = res->run.config;
  std::vector<double> interfaces;
  double z = 0;
  for (const auto& l : res->run.medium.layers) interfaces.push_back(z += l.d);
  map_->setData(r.fluence, c.nr, c.nz, c.dr, c.dz, interfaces);
  updateContourInfo();

  // Rd(r) and A(z) without MCML's overflow bins; zeros cannot go on a log axis.
  auto fill = [](QLineSeries* s, QValueAxis* x, QLogValueAxis* y, const std::vector<double>& v,
                 double d) {
    QList<QPointF> pts;
    double lo = 0, hi = 0;
    const int n = int(v.size()) > 1 ? int(v.size()) - 1 : int(v.size());
    for (int i = 0; i < n; ++i)
      if (v[std::size_t(i)] > 0) {
        pts.append(QPointF((i + 0.5) * d, v[std::size_t(i)]));
        lo = lo == 0 ? v[std::size_t(i)] : std::min(lo, v[std::size_t(i)]);
        hi = std::max(hi, v[std::size_t(i)]);
      }
    s->replace(pts);
    x->setRange(0, n * d);
    x->applyNiceNumbers();
    fitLogAxis(y, lo, hi);
  };
  fill(rdSeries_, rdX_, rdY_, r.Rd_r, c.dr);
  // A(z) down to the bottom of the tissue: nothing is absorbed in the medium below.
  const std::size_t tissueBins = std::size_t(std::max(1.0, std::ceil(z / c.dz - 1e-9))) + 1;
  fill(azSeries_, azX_, azY_,
       std::vector<double>(r.A_z.begin(),
                           r.A_z.begin() + std::ptrdiff_t(std::min(tissueBins, r.A_z.size()))),
       c.dz);
  showSummary();
}

void LightDosePanel::updateContourInfo() {
  if (!map_->hasData()) return contourInfo_->setText(tr("No result yet."));
  // Which levels got a line, and why not the others.
  QStringList drawn, missing;
  for (std::size_t i = 0; i < map_->levels().size(); ++i) {
    const double l = map_->levels()[i];
    (map_->contourSegmentCount(int(i)) > 0 ? drawn : missing) << formatLevel(l);
  }
  double maxPhi = 0;
  for (int u = 0; u < map_->drawnRadialBins(); ++u)
    for (int v = 0; v < map_->drawnDepthBins(); ++v) maxPhi = std::max(maxPhi, map_->value(u, v));
  contourInfo_->setText(
      tr("Lines at %1 cm\u207b\u00b2%2. Maximum %3 cm\u207b\u00b2. Units: per launched photon "
         "weight "
         "(J cm\u207b\u00b2 per J). The last r and z bins (beyond the grid) are not drawn.")
          .arg(drawn.isEmpty() ? tr("no level") : drawn.join(", "))
          .arg(missing.isEmpty() ? QString()
                                 : tr("; none at %1 (outside the data)").arg(missing.join(", ")))
          .arg(maxPhi, 0, 'g', 4));
}

void LightDosePanel::showSummary() {
  const auto res = controller_->result();
  const mcml::McmlResult& r = res->result;
  const mcml::McmlConfig& c = res->run.config;
  // Value (exact in UserRole) and standard error.
  const double sum = r.Rsp + r.Rd + r.A + r.Tt;
  const double values[kLayerRows][2] = {{r.Rsp, 0},      {r.Rd, r.RdErr}, {r.A, r.AErr},
                                        {r.Tt, r.TtErr}, {sum, 0},        {r.rouletteGain, 0}};
  summary_->setRowCount(kLayerRows + int(r.A_l.size()));
  for (int row = 0; row < kLayerRows + int(r.A_l.size()); ++row) {
    const bool layer = row >= kLayerRows;
    const double value = layer ? r.A_l[std::size_t(row - kLayerRows)] : values[row][0];
    auto* item = numberItem(value, row == kSum ? 10 : 6);
    item->setData(Qt::UserRole, value);
    summary_->setItem(row, 0, item);
    const bool hasErr = !layer && (row == kRd || row == kA || row == kTt);
    auto* err = hasErr ? numberItem(values[row][1], 3) : new QTableWidgetItem;
    if (hasErr) err->setData(Qt::UserRole, values[row][1]);
    summary_->setItem(row, 1, err);
    if (layer)
      summary_->setVerticalHeaderItem(
          row, new QTableWidgetItem(tr("  A in layer %1").arg(row - kLayerRows + 1)));
  }
  const QString where = r.backend == Backend::Cuda ? tr("on %1 x %2 (%3 tally)")
                                                         .arg(r.devicesUsed)
                                                         .arg(QString::fromStdString(r.device),
                                                              QString(mcml::toString(r.tally)))
                                                   : tr("on the CPU (double tally)");
  runInfo_->setText(
      tr("%1 packets %2, %3 x %4 bins of %5 x %6 cm; standard errors from %7 batches. "
         "Energy: Rsp + Rd + A + Tt - 1 - roulette gain = %8.")
          .arg(double(c.packets), 0, 'g', 4)
          .arg(where)
          .arg(c.nr)
          .arg(c.nz)
          .arg(c.dr)
          .arg(c.dz)
          .arg(c.batches)
          .arg(r.energyBalance(), 0, 'g', 3));
  updateButtons();
}

}  // namespace penumbra::gui
