// DvhPanel: the chart (dvh_panel.hpp): one cumulative DVH curve per shown structure and dose
// set, and under them the robustness bands of the last evaluation (the areas are made in
// dvh_bands.cpp). refresh() rebuilds both and then the table.
#include <algorithm>

#include <QAreaSeries>
#include <QChart>
#include <QCheckBox>
#include <QLabel>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include "gui/dose/dvh_bands.hpp"
#include "gui/dose/dvh_line_style.hpp"
#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

namespace {

/// At most this many points per curve: a 60 Gy curve in 0.01 Gy bins has 6000.
constexpr int kMaxPointsPerCurve = 1500;

}  // namespace

void DvhPanel::refresh() {
  for (QAbstractSeries* s : chart_->series()) {
    chart_->removeSeries(s);
    delete s;
  }
  series_.clear();
  bands_.clear();
  DoseSetStore* store = dvhs_->doseSets();
  // Bands first: the chart draws later series on top, and the curves must stay readable.
  double maxGy = addBands();
  int curves = 0, pending = 0;
  const auto& scene = state_->scene();
  for (int i = 0; scene && i < store->count(); ++i) {
    const auto set = store->at(i);
    if (uncheckedSets_.contains(set->id)) continue;
    const DoseSetDvhs* d = dvhs_->forDoseSet(set->id);
    if (!d) {
      ++pending;
      continue;
    }
    for (const auto& r : d->results) {
      const QString name = QString::fromStdString(r.structureName);
      const Structure* st = scene->patient().structures.find(r.structureName);
      const auto& c = r.curve;
      if (c.doseGy.empty()) continue;
      auto* line = new QLineSeries;
      line->setName(name + " / " + set->name);
      QPen pen(st ? QColor(st->color[0], st->color[1], st->color[2]) : QColor(Qt::black), 2, doseSetLineStyle(i));
      line->setPen(pen);
      // Last bin with volume, and the points thinned evenly to at most kMaxPointsPerCurve.
      std::size_t last = c.volumePercent.size();
      while (last > 1 && c.volumePercent[last - 1] <= 0) --last;
      last = std::min(c.volumePercent.size(), last + 1);
      const std::size_t step = std::max<std::size_t>(1, last / kMaxPointsPerCurve);
      QList<QPointF> points;
      points.reserve(qsizetype(last / step + 2));
      for (std::size_t k = 0; k < last; k += step) points.append(QPointF(c.doseGy[k], c.volumePercent[k]));
      if ((last - 1) % step != 0) points.append(QPointF(c.doseGy[last - 1], c.volumePercent[last - 1]));
      maxGy = std::max(maxGy, c.doseGy[last - 1]);
      line->replace(points);
      chart_->addSeries(line);
      line->attachAxis(axisX_);
      line->attachAxis(axisY_);
      line->setVisible(!hidden_.contains(name));
      series_[name].append(line);
      ++curves;
    }
  }
  axisX_->setRange(0, maxGy > 0 ? maxGy * 1.05 : 1.0);
  axisX_->applyNiceNumbers();
  if (!scene || store->count() == 0)
    status_->setText(tr("No dose yet: compute a dose to see DVHs."));
  else if (dvhs_->isBusy())
    status_->setText(tr("Computing DVHs..."));
  else if (pending > 0)
    status_->setText(tr("%1; no DVH for %2 (see the messages)").arg(countOf(curves, "curve"), countOf(pending, "dose set")));
  else
    status_->setText(countOf(curves, "curve"));
  curveStatus_ = status_->text();
  refreshTable();
  emit refreshed();
}

QList<QLineSeries*> DvhPanel::series(const QString& structure) const { return series_.value(structure); }

int DvhPanel::visibleSeriesCount() const {
  int n = 0;
  for (const auto& list : series_)
    for (QLineSeries* s : list) n += s->isVisible();
  return n;
}

void DvhPanel::setRobustnessModel(RobustnessModel* model) {
  if (robustness_) disconnect(robustness_, nullptr, this, nullptr);
  robustness_ = model;
  bandsCheck_->setVisible(model != nullptr);
  if (model) {
    connect(model, &RobustnessModel::bandsChanged, this, [this] {
      const QSignalBlocker block(bandsCheck_);
      bandsCheck_->setChecked(robustness_->bandsVisible());
      bandsCheck_->setEnabled(robustness_->bands() != nullptr);
      refresh();
    });
    connect(bandsCheck_, &QCheckBox::toggled, model, &RobustnessModel::setBandsVisible, Qt::UniqueConnection);
    bandsCheck_->setChecked(model->bandsVisible());
    bandsCheck_->setEnabled(model->bands() != nullptr);
  }
  refresh();
}

double DvhPanel::addBands() {
  const auto result = robustness_ ? robustness_->bands() : nullptr;
  const auto& scene = state_->scene();
  if (!result || !robustness_->bandsVisible() || !scene) return 0;
  double maxGy = 0;
  for (const auto& s : result->structures) {
    const Structure* st = scene->patient().structures.find(s.name);
    const QColor colour = st ? QColor(st->color[0], st->color[1], st->color[2]) : QColor(Qt::black);
    double reach = 0;
    QAreaSeries* area = makeDvhBand(s, colour, kMaxPointsPerCurve, &reach);
    if (!area) continue;
    const QString name = QString::fromStdString(s.name);
    chart_->addSeries(area);
    area->attachAxis(axisX_);
    area->attachAxis(axisY_);
    area->setVisible(!hidden_.contains(name));
    bands_.insert(name, area);
    maxGy = std::max(maxGy, reach);
  }
  return maxGy;
}

QAreaSeries* DvhPanel::band(const QString& structure) const { return bands_.value(structure); }

int DvhPanel::visibleBandCount() const {
  int n = 0;
  for (QAreaSeries* b : bands_) n += b->isVisible();
  return n;
}

}  // namespace penumbra::gui
