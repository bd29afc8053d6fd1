#pragma once
/// The gamma map's colours (overlays/compare_colours.hpp) for the Qt charts of the Compare
/// workspace, the gamma histogram and the profile's gamma points: passing points in the middle
/// of the pass half of the map, failing ones in its colour just above 1, so that a chart reads
/// like the map.
#include <QColor>

#include "gui/overlays/compare_colours.hpp"

namespace penumbra::gui {

inline QColor toQColor(const Rgb& c) { return QColor::fromRgbF(float(c[0]), float(c[1]), float(c[2])); }

inline QColor gammaPassChartColour() { return toQColor(lerpRgb(kGammaPassLow, kGammaPassHigh, 0.6)); }
inline QColor gammaFailChartColour() { return toQColor(kGammaFailLow); }

}  // namespace penumbra::gui
