#pragma once
/// Structure outlines on a slice view, one actor per structure in the structure's colour,
/// computed from the masks by marching squares (consistent in all three orientations).
#include <vector>

#include <vtkSmartPointer.h>

#include "gui/overlays/marching_squares.hpp"
#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkPolyData;

namespace penumbra::gui {

class ContourDisplay : public SliceOverlay {
public:
  ContourDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                 QObject* parent = nullptr);
  ~ContourDisplay() override;

  /// Line width in pixels of the outlines.
  static constexpr float kLineWidth = 2.0f;

private:
  struct StructureLines {
    MaskBounds bounds;
    vtkSmartPointer<vtkPolyData> lines;
    vtkSmartPointer<vtkActor> actor;
  };

  void onSceneChanged();
  void rebuild();
  void onVisibilityChanged(int index, bool visible);

  std::vector<StructureLines> structures_;
  int shownSlice_ = -1;
};

}  // namespace penumbra::gui
