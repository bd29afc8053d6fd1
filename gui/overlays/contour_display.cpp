#include "gui/overlays/contour_display.hpp"

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>

namespace penumbra::gui {

ContourDisplay::ContourDisplay(vtkRenderer* renderer, const ViewState* state,
                               SliceOrientation orientation, QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent) {
  connect(state, &ViewState::sceneChanged, this, &ContourDisplay::onSceneChanged);
  connect(state, &ViewState::crosshairChanged, this, [this] {
    if (this->state()->sliceIndex(this->orientation()) != shownSlice_) rebuild();
  });
  connect(state, &ViewState::structureVisibilityChanged, this,
          &ContourDisplay::onVisibilityChanged);
}

ContourDisplay::~ContourDisplay() {
  for (auto& s : structures_) removeViewProp(renderer(), s.actor);
}

void ContourDisplay::onSceneChanged() {
  for (auto& s : structures_) removeViewProp(renderer(), s.actor);
  structures_.clear();
  shownSlice_ = -1;
  const auto& scene = state()->scene();
  if (scene) {
    int index = 0;
    for (const Structure& st : scene->displayPatient().structures.structures) {
      StructureLines s;
      s.bounds = maskBounds(st.mask);
      s.lines = vtkSmartPointer<vtkPolyData>::New();
      auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
      mapper->SetInputData(s.lines);
      s.actor = vtkSmartPointer<vtkActor>::New();
      s.actor->SetMapper(mapper);
      s.actor->GetProperty()->SetColor(st.color[0] / 255.0, st.color[1] / 255.0, st.color[2] / 255.0);
      s.actor->GetProperty()->SetLineWidth(kLineWidth);
      s.actor->GetProperty()->LightingOff();
      s.actor->SetVisibility(state()->isStructureVisible(index++));
      s.actor->PickableOff();
      renderer()->AddActor(s.actor);
      structures_.push_back(std::move(s));
    }
    rebuild();
  }
  requestRender();
}

void ContourDisplay::rebuild() {
  const auto& scene = state()->scene();
  if (!scene) return;
  shownSlice_ = state()->sliceIndex(orientation());
  const auto& list = scene->displayPatient().structures.structures;
  for (std::size_t n = 0; n < structures_.size() && n < list.size(); ++n) {
    StructureLines& s = structures_[n];
    const auto segments =
        maskSliceContour(list[n].mask, s.bounds, normalAxis(orientation()), shownSlice_);
    auto points = vtkSmartPointer<vtkPoints>::New();
    auto cells = vtkSmartPointer<vtkCellArray>::New();
    points->SetNumberOfPoints(vtkIdType(segments.size() * 2));
    vtkIdType id = 0;
    for (const Segment2& seg : segments) {
      const auto a = planePoint(seg.u0, seg.v0, kLayerContours);
      const auto b = planePoint(seg.u1, seg.v1, kLayerContours);
      points->SetPoint(id, a.data());
      points->SetPoint(id + 1, b.data());
      const vtkIdType ids[2] = {id, id + 1};
      cells->InsertNextCell(2, ids);
      id += 2;
    }
    s.lines->SetPoints(points);
    s.lines->SetLines(cells);
    s.lines->Modified();
  }
  requestRender();
}

void ContourDisplay::onVisibilityChanged(int index, bool visible) {
  if (index < 0 || index >= int(structures_.size())) return;
  structures_[index].actor->SetVisibility(visible);
  requestRender();
}

}  // namespace penumbra::gui
