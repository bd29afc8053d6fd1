#include "gui/overlays/colour_bar.hpp"

#include <algorithm>

#include <vtkActor2D.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkLookupTable.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper2D.h>
#include <vtkUnsignedCharArray.h>

#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

vtkSmartPointer<vtkActor2D> makeColourBarActor(vtkPolyData* bar) {
  const double white[3] = {1, 1, 1};
  auto actor = makeOverlayLines(bar, white, 1.0f);
  auto* mapper = static_cast<vtkPolyDataMapper2D*>(actor->GetMapper());
  mapper->SetScalarModeToUseCellData();
  mapper->SetColorModeToDirectScalars();
  return actor;
}

int fillColourBar(vtkPolyData* bar, vtkLookupTable* lut, int widthPx, int y0, int y1) {
  using namespace slice_layout;
  const int n = std::max<int>(2, int(lut->GetNumberOfTableValues()));
  const double x1 = widthPx - kMargin, x0 = x1 - kColourBarWidth;
  auto points = vtkSmartPointer<vtkPoints>::New();
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  auto colours = vtkSmartPointer<vtkUnsignedCharArray>::New();
  colours->SetNumberOfComponents(3);
  for (int i = 0; i < n; ++i) {
    const double ya = y0 + (y1 - y0) * double(i) / n, yb = y0 + (y1 - y0) * double(i + 1) / n;
    const vtkIdType base = points->GetNumberOfPoints();
    points->InsertNextPoint(x0, ya, 0);
    points->InsertNextPoint(x1, ya, 0);
    points->InsertNextPoint(x1, yb, 0);
    points->InsertNextPoint(x0, yb, 0);
    const vtkIdType quad[4] = {base, base + 1, base + 2, base + 3};
    cells->InsertNextCell(4, quad);
    double rgba[4];
    lut->GetTableValue(i, rgba);
    const unsigned char rgb[3] = {(unsigned char)(255 * rgba[0]), (unsigned char)(255 * rgba[1]),
                                  (unsigned char)(255 * rgba[2])};
    colours->InsertNextTypedTuple(rgb);
  }
  bar->SetPoints(points);
  bar->SetPolys(cells);
  bar->GetCellData()->SetScalars(colours);
  bar->Modified();
  return int(x0);
}

}  // namespace penumbra::gui
