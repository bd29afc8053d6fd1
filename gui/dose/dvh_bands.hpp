#pragma once
/// Robustness bands of the DVH panel (issue 16, item 4): for one structure of a robustness
/// evaluation, the envelope of its DVH over the error scenarios (StructureRobustness'
/// bandLowPercent / bandHighPercent, cumulative % at the bin edges k * binWidthGy) as a
/// translucent area in the structure's colour, for the chart to draw under the curves.
#include <QColor>

class QAreaSeries;

namespace penumbra::robust {
struct StructureRobustness;
}

namespace penumbra::gui {

/// The band of `s` as a new area series (its two line series are its children), trimmed after
/// the last bin any scenario reaches and thinned to at most `maxPoints` points a side; null
/// when `s` has no band. `reachGy` receives the highest dose the band reaches.
QAreaSeries* makeDvhBand(const robust::StructureRobustness& s, const QColor& colour, int maxPoints,
                         double* reachGy);

}  // namespace penumbra::gui
