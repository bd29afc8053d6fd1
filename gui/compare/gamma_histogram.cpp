#include "gui/compare/gamma_histogram.hpp"

#include <algorithm>
#include <cmath>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include "compare/compare.hpp"
#include "gui/compare/chart_colours.hpp"

namespace penumbra::gui {

GammaHistogram::GammaHistogram(QWidget* parent)
    : QWidget(parent),
      chart_(new QChart),
      bars_(new QStackedBarSeries),
      passSet_(new QBarSet(tr("pass (\u2264 1)"))),
      failSet_(new QBarSet(tr("fail (> 1)"))),
      threshold_(new QLineSeries),
      categories_(new QBarCategoryAxis),
      axisX_(new QValueAxis),
      axisY_(new QValueAxis) {
  setObjectName("gammaHistogram");
  // The middle of each colour map's half: the bars match what the slice views show.
  passSet_->setColor(gammaPassChartColour());
  failSet_->setColor(gammaFailChartColour());
  passSet_->setBorderColor(Qt::transparent);
  failSet_->setBorderColor(Qt::transparent);
  bars_->append(passSet_);
  bars_->append(failSet_);
  bars_->setBarWidth(1.0);
  threshold_->setName(tr("\u03b3 = 1"));
  QPen pen(Qt::black);
  pen.setStyle(Qt::DashLine);
  pen.setWidthF(1.5);
  threshold_->setPen(pen);
  chart_->addSeries(bars_);
  chart_->addSeries(threshold_);
  // The bars sit on a hidden category axis (one category per bar); the visible x axis is a
  // value axis 0..cap over the same width, so bar k spans [k, k + 1] x cap / kBins and the
  // threshold line is drawn at its true gamma.
  QStringList names;
  for (int i = 0; i < kBins; ++i) names << QString::number(i);
  categories_->append(names);
  categories_->setVisible(false);
  chart_->addAxis(categories_, Qt::AlignBottom);
  chart_->addAxis(axisX_, Qt::AlignBottom);
  chart_->addAxis(axisY_, Qt::AlignLeft);
  bars_->attachAxis(categories_);
  bars_->attachAxis(axisY_);
  threshold_->attachAxis(axisX_);
  threshold_->attachAxis(axisY_);
  axisX_->setTitleText(tr("gamma"));
  axisX_->setLabelFormat("%.1f");
  axisY_->setTitleText(tr("points"));
  axisY_->setLabelFormat("%.0f");
  chart_->legend()->setAlignment(Qt::AlignTop);
  chart_->setMargins(QMargins(2, 2, 12, 2));  // room for the last x label
  chart_->layout()->setContentsMargins(0, 0, 0, 0);
  view_ = new QChartView(chart_);
  view_->setObjectName("gammaHistogramView");
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(190);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
  clear();
}

void GammaHistogram::clear() {
  pass_.clear();
  fail_.clear();
  passSet_->remove(0, passSet_->count());
  failSet_->remove(0, failSet_->count());
  threshold_->clear();
  axisX_->setRange(0, 2);
  axisY_->setRange(0, 1);
}

void GammaHistogram::setStatistics(const compare::GammaStatistics& stats, double cap) {
  clear();
  const int fine = int(stats.histogram.size());
  if (fine == 0 || !(cap > 0)) return;
  pass_.assign(kBins, 0);
  fail_.assign(kBins, 0);
  // The engine passes gamma <= 1 (GammaStatistics::passedPoints). Its fine bins are in
  // increasing gamma, so the passing points are the first passedPoints ones: the pass part
  // takes them bin by bin, and the bin that holds 1 is split where they end. (Deciding by each
  // bin's upper edge put gamma == 1, a pass, in the fail bar.)
  double passing = double(stats.passedPoints);
  for (int f = 0; f < fine; ++f) {
    const int bar = std::min(kBins - 1, int(double(f) * kBins / fine));
    const double n = double(stats.histogram[std::size_t(f)]);
    const double passes = std::clamp(passing, 0.0, n);
    pass_[bar] += passes;
    fail_[bar] += n - passes;
    passing -= passes;
  }
  double top = 1;
  for (int i = 0; i < kBins; ++i) {
    passSet_->append(pass_[i]);
    failSet_->append(fail_[i]);
    top = std::max(top, pass_[i] + fail_[i]);
  }
  top *= 1.05;
  axisX_->setRange(0, cap);
  axisX_->setTickCount(int(std::lround(cap / 0.5)) + 1 <= 9 ? int(std::lround(cap / 0.5)) + 1 : 5);
  axisY_->setRange(0, top);
  axisY_->applyNiceNumbers();
  threshold_->append(1.0, 0);
  threshold_->append(1.0, axisY_->max());
}

}  // namespace penumbra::gui
