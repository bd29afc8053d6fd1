#pragma once
/// 2D text and marks of the slice views, placed in display pixels (slice_layout.hpp).
#include <string>

#include <vtkSmartPointer.h>

class vtkActor2D;
class vtkPolyData;
class vtkRenderer;
class vtkTextActor;

namespace penumbra::gui {

enum class TextAnchor { TopLeft, TopRight, TopCentre, BottomLeft, BottomRight, BottomCentre,
                        MiddleLeft, MiddleRight };

/// A text actor in display coordinates with `fontSize` px, light grey on a translucent dark
/// box (readable over the CT and the wash, and the crosshair passes under it), not pickable.
vtkSmartPointer<vtkTextActor> makeOverlayText(int fontSize, TextAnchor anchor);
/// Moves the anchor point of `text` to (x, y) display pixels.
void placeText(vtkTextActor* text, int x, int y);

/// A 2D actor drawing `lines` (display pixel coordinates) in `rgb`, `width` px wide.
vtkSmartPointer<vtkActor2D> makeOverlayLines(vtkPolyData* lines, const double rgb[3], float width);

/// Display pixels per millimetre of the renderer's parallel-projection camera (0 if none).
double pixelsPerMm(vtkRenderer* renderer);

/// `text` cut to at most `maxChars` characters with "..." at the end when longer.
std::string elide(const std::string& text, int maxChars);
/// `text` cut to at most `maxChars` characters with "..." in the middle when longer: for names,
/// whose both ends tell them apart ("A: Plan 1 (CPU)" and "A: Plan 1 (CUDA)").
std::string elideMiddle(const std::string& text, int maxChars);

}  // namespace penumbra::gui
