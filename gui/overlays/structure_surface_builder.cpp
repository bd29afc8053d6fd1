#include "gui/overlays/structure_surface_builder.hpp"

#include <algorithm>
#include <cstring>

#include <vtkFlyingEdges3D.h>
#include <vtkImageData.h>
#include <vtkPolyData.h>
#include <vtkPolyDataNormals.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include "gui/overlays/marching_squares.hpp"

namespace penumbra::gui {

vtkSmartPointer<vtkPolyData> buildMaskSurface(const Mask& mask) {
  auto empty = vtkSmartPointer<vtkPolyData>::New();
  const MaskBounds b = maskBounds(mask);
  if (b.empty()) return empty;
  const Grid& g = mask.grid;
  // Crop to the structure's box plus a 2-voxel rim of zeros so surfaces close at the grid edge.
  constexpr int kPad = 2;
  int lo[3], n[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = b.lo[a] - kPad;
    n[a] = b.hi[a] - b.lo[a] + 1 + 2 * kPad;
  }
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(n);
  image->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
  image->SetOrigin(g.origin.x + lo[0] * g.spacing.x, g.origin.y + lo[1] * g.spacing.y,
                   g.origin.z + lo[2] * g.spacing.z);
  image->AllocateScalars(VTK_UNSIGNED_CHAR, 1);
  auto* dst = static_cast<unsigned char*>(image->GetScalarPointer());
  std::memset(dst, 0, std::size_t(n[0]) * n[1] * n[2]);
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j) {
      const std::uint8_t* src = &mask.at(b.lo[0], j, k);
      unsigned char* row = dst + (std::size_t(k - lo[2]) * n[1] + (j - lo[1])) * n[0] + (b.lo[0] - lo[0]);
      for (int i = 0; i <= b.hi[0] - b.lo[0]; ++i) row[i] = src[i] ? 255 : 0;
    }

  auto iso = vtkSmartPointer<vtkFlyingEdges3D>::New();
  iso->SetInputData(image);
  iso->SetValue(0, 127.5);
  iso->ComputeNormalsOff();
  iso->ComputeGradientsOff();
  auto smooth = vtkSmartPointer<vtkWindowedSincPolyDataFilter>::New();
  smooth->SetInputConnection(iso->GetOutputPort());
  smooth->SetNumberOfIterations(20);
  smooth->SetPassBand(0.05);
  smooth->BoundarySmoothingOff();
  smooth->FeatureEdgeSmoothingOff();
  smooth->NonManifoldSmoothingOn();
  smooth->NormalizeCoordinatesOn();
  auto normals = vtkSmartPointer<vtkPolyDataNormals>::New();
  normals->SetInputConnection(smooth->GetOutputPort());
  normals->SplittingOff();
  normals->ConsistencyOn();
  normals->Update();
  auto out = vtkSmartPointer<vtkPolyData>::New();
  out->ShallowCopy(normals->GetOutput());
  return out;
}

std::vector<vtkSmartPointer<vtkPolyData>> buildStructureSurfaces(const Patient& patient,
                                                                 const JobControl& job) {
  std::vector<vtkSmartPointer<vtkPolyData>> out;
  const auto& list = patient.structures.structures;
  for (std::size_t n = 0; n < list.size(); ++n) {
    job.checkCancel();
    job.report(double(n) / std::max<std::size_t>(list.size(), 1), "building structure surfaces");
    out.push_back(buildMaskSurface(list[n].mask));
  }
  return out;
}

}  // namespace penumbra::gui
