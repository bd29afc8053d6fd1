#include "gui/dose/dvh_bands.hpp"

#include <QAreaSeries>
#include <QLineSeries>
#include <QPen>
#include <algorithm>

#include "gui/model/plural.hpp"
#include "robust/robustness.hpp"

namespace penumbra::gui {

namespace {
/// Fill and edge opacity: the nominal curve drawn over the band stays readable, and two
/// overlapping bands still show both colours.
constexpr int kFillAlpha = 70;
constexpr int kEdgeAlpha = 140;
}  // namespace

QAreaSeries* makeDvhBand(const robust::StructureRobustness& s, const QColor& colour, int maxPoints,
                         double* reachGy) {
  const std::size_t n = std::min(s.bandLowPercent.size(), s.bandHighPercent.size());
  if (n == 0 || !(s.binWidthGy > 0) || maxPoints < 2) return nullptr;
  // The last bin any scenario reaches (one zero bin kept: the band closes on the axis).
  std::size_t last = n;
  while (last > 1 && s.bandHighPercent[last - 1] <= 0) --last;
  last = std::min(n, last + 1);
  const std::size_t step = std::max<std::size_t>(1, last / std::size_t(maxPoints));
  QList<QPointF> hi, lo;
  hi.reserve(qsizetype(last / step + 2));
  lo.reserve(qsizetype(last / step + 2));
  const auto add = [&](std::size_t k) {
    hi.append(QPointF(double(k) * s.binWidthGy, s.bandHighPercent[k]));
    lo.append(QPointF(double(k) * s.binWidthGy, s.bandLowPercent[k]));
  };
  for (std::size_t k = 0; k < last; k += step) add(k);
  if ((last - 1) % step != 0) add(last - 1);

  auto* area = new QAreaSeries;
  auto* upper = new QLineSeries(area);  // children of the area: deleted with it
  auto* lower = new QLineSeries(area);
  upper->replace(hi);
  lower->replace(lo);
  area->setUpperSeries(upper);
  area->setLowerSeries(lower);
  area->setName(
      QObject::tr("%1 band (%2)")
          .arg(QString::fromStdString(s.name), countOf(qsizetype(s.scenarios.size()), "scenario")));
  QColor fill = colour, edge = colour;
  fill.setAlpha(kFillAlpha);
  edge.setAlpha(kEdgeAlpha);
  area->setBrush(fill);
  area->setPen(QPen(edge, 1));
  if (reachGy) *reachGy = double(last - 1) * s.binWidthGy;
  return area;
}

}  // namespace penumbra::gui
