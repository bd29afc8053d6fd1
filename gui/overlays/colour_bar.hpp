#pragma once
/// The vertical colour bar of a slice view's wash (slice_layout.hpp: at the right edge, between
/// colourBarBottom() and colourBarTop()): one quad per entry of the wash's lookup table, drawn
/// in the entry's colour, so the bar is exactly the colours the wash uses. Shared by the dose
/// wash (DoseWashDisplay) and the comparison maps (ComparisonWashDisplay); the labels beside
/// it are each display's own.
#include <vtkSmartPointer.h>

class vtkActor2D;
class vtkLookupTable;
class vtkPolyData;

namespace penumbra::gui {

/// A 2D actor drawing `bar`'s cells in their own colours (display pixel coordinates).
vtkSmartPointer<vtkActor2D> makeColourBarActor(vtkPolyData* bar);

/// Fills `bar` with `lut`'s entries from entry 0 at display pixel row y0 to the last one at
/// y1, kColourBarWidth px wide against the right margin of a view `widthPx` wide. Returns the
/// bar's left edge [px], where the labels' right ends go.
int fillColourBar(vtkPolyData* bar, vtkLookupTable* lut, int widthPx, int y0, int y1);

}  // namespace penumbra::gui
