#include "gui/overlays/slice_image.hpp"

#include <algorithm>

#include <vtkFloatArray.h>
#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

namespace penumbra::gui {

void placeSliceImage(vtkImageData* image, vtkImageActor* actor, const DoseSlice& s,
                     const PatientScene& scene, SliceOrientation o, const std::array<int, 2>& axes,
                     int slice, const char* scalarName) {
  const int n = normalAxis(o);
  int dims[3] = {1, 1, 1};
  dims[axes[0]] = s.nu;
  dims[axes[1]] = s.nv;
  Vec3 first;
  first[axes[0]] = s.u0;
  first[axes[1]] = s.v0;
  first[n] = slice;
  const auto origin = scene.displayPoint(first);
  const Grid& g = scene.grid();
  image->SetDimensions(dims);
  image->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
  image->SetOrigin(origin.data());
  auto scalars = vtkSmartPointer<vtkFloatArray>::New();
  scalars->SetName(scalarName);
  scalars->SetNumberOfTuples(vtkIdType(s.gy.size()));
  std::copy(s.gy.begin(), s.gy.end(), scalars->GetPointer(0));
  image->GetPointData()->SetScalars(scalars);
  image->Modified();
  // The image is one voxel thick along this view's normal. Without an explicit display extent
  // vtkImageActor shows the image's k = 0 plane, which is the whole slice for the axial view
  // but a single row of it for the sagittal and coronal views.
  actor->SetDisplayExtent(0, dims[0] - 1, 0, dims[1] - 1, 0, dims[2] - 1);
  // Lift towards the camera above the CT, as the other overlays are (slice_overlay.hpp).
  const auto dop = cameraAxes(o).directionOfProjection;
  actor->SetPosition(-dop[0] * kLayerDoseWash * kLayerStepMm, -dop[1] * kLayerDoseWash * kLayerStepMm,
                     -dop[2] * kLayerDoseWash * kLayerStepMm);
}

}  // namespace penumbra::gui
