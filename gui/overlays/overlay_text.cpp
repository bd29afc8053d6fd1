#include "gui/overlays/overlay_text.hpp"

#include <cstdint>

#include <vtkActor2D.h>
#include <vtkCamera.h>
#include <vtkCoordinate.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper2D.h>
#include <vtkProperty2D.h>
#include <vtkRenderer.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>

#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

vtkSmartPointer<vtkTextActor> makeOverlayText(int fontSize, TextAnchor anchor) {
  auto t = vtkSmartPointer<vtkTextActor>::New();
  vtkTextProperty* p = t->GetTextProperty();
  p->SetFontSize(fontSize);
  p->SetColor(0.88, 0.88, 0.88);
  p->SetBackgroundColor(0, 0, 0);
  p->SetBackgroundOpacity(slice_layout::kBackgroundOpacity);
  switch (anchor) {
    case TextAnchor::TopLeft: case TextAnchor::BottomLeft: case TextAnchor::MiddleLeft:
      p->SetJustificationToLeft();
      break;
    case TextAnchor::TopRight: case TextAnchor::BottomRight: case TextAnchor::MiddleRight:
      p->SetJustificationToRight();
      break;
    case TextAnchor::TopCentre: case TextAnchor::BottomCentre:
      p->SetJustificationToCentered();
      break;
  }
  switch (anchor) {
    case TextAnchor::TopLeft: case TextAnchor::TopRight: case TextAnchor::TopCentre:
      p->SetVerticalJustificationToTop();
      break;
    case TextAnchor::BottomLeft: case TextAnchor::BottomRight: case TextAnchor::BottomCentre:
      p->SetVerticalJustificationToBottom();
      break;
    case TextAnchor::MiddleLeft: case TextAnchor::MiddleRight:
      p->SetVerticalJustificationToCentered();
      break;
  }
  t->GetPositionCoordinate()->SetCoordinateSystemToDisplay();
  t->PickableOff();
  return t;
}

void placeText(vtkTextActor* text, int x, int y) { text->SetDisplayPosition(x, y); }

vtkSmartPointer<vtkActor2D> makeOverlayLines(vtkPolyData* lines, const double rgb[3], float width) {
  auto mapper = vtkSmartPointer<vtkPolyDataMapper2D>::New();
  mapper->SetInputData(lines);
  auto coordinate = vtkSmartPointer<vtkCoordinate>::New();
  coordinate->SetCoordinateSystemToDisplay();
  mapper->SetTransformCoordinate(coordinate);
  auto actor = vtkSmartPointer<vtkActor2D>::New();
  actor->SetMapper(mapper);
  actor->GetProperty()->SetColor(rgb[0], rgb[1], rgb[2]);
  actor->GetProperty()->SetLineWidth(width);
  actor->PickableOff();
  return actor;
}

double pixelsPerMm(vtkRenderer* renderer) {
  const int* size = renderer->GetSize();
  vtkCamera* cam = renderer->GetActiveCamera();
  if (!cam || size[1] <= 0 || !(cam->GetParallelScale() > 0)) return 0;
  // Parallel scale: half the viewport height in world units (mm).
  return size[1] / (2.0 * cam->GetParallelScale());
}

std::string elide(const std::string& text, int maxChars) {
  if (maxChars <= 3) return {};
  if (int(text.size()) <= maxChars) return text;
  return text.substr(0, std::size_t(maxChars - 3)) + "...";
}

std::string elideMiddle(const std::string& text, int maxChars) {
  if (maxChars <= 3) return {};
  if (int(text.size()) <= maxChars) return text;
  // Never cut inside a UTF-8 sequence (continuation bytes are 10xxxxxx).
  auto continuation = [&](std::size_t i) { return i < text.size() && (std::uint8_t(text[i]) & 0xC0) == 0x80; };
  std::size_t head = std::size_t(maxChars - 3 + 1) / 2, tail = text.size() - std::size_t(maxChars - 3) / 2;
  while (head > 0 && continuation(head)) --head;
  while (continuation(tail)) ++tail;
  return text.substr(0, head) + "..." + text.substr(tail);
}

}  // namespace penumbra::gui
