#pragma once
/// Dashed iso-lines: the isodose lines are drawn dashed so that they cannot be mistaken for
/// structure contours (solid) even where they share a colour (BODY green, 80 % green). OpenGL
/// core profile has no line stipple, so the dashes are geometry: the marching-squares
/// segments are chained into polylines (shared end points) and cut along their arc length
/// in millimetres, the pattern running on across segment joins. No VTK, no Qt.
#include <vector>

#include "gui/overlays/marching_squares.hpp"

namespace penumbra::gui {

/// The pieces of `segments` that fall on dashes of `dashMm` separated by gaps of `gapMm`,
/// lengths measured with `mmPerU` and `mmPerV` millimetres per in-plane index unit. Segments
/// that meet end to end (within 1/256 index) form one polyline whose pattern is continuous.
/// With dashMm <= 0 or gapMm <= 0 the segments come back unchanged.
std::vector<Segment2> dashSegments(const std::vector<Segment2>& segments, double mmPerU,
                                   double mmPerV, double dashMm, double gapMm);

}  // namespace penumbra::gui
