#pragma once
/// The three slice orientations and how they map onto display grid axes.
///
/// Display frame: every view (slices and 3D) draws in the frame of the scene's DISPLAY grid
/// (PatientScene::grid()), i.e. the point of continuous index (i, j, k) is at
/// origin + (i*sx, j*sy, k*sz). PatientScene re-indexes CTs whose direction is a signed
/// permutation (feet-first, prone, ...) onto an identity-direction display grid, so this is
/// patient LPS in mm, grid axes i, j, k are x, y, z, and the camera set-up below is
/// radiological for every series the importer accepts. Read-outs convert through
/// Grid::indexToWorld of the display grid.
#include <array>

namespace penumbra::gui {

enum class SliceOrientation { Axial, Sagittal, Coronal };

/// Grid axis normal to the slice: axial k (2), coronal j (1), sagittal i (0).
constexpr int normalAxis(SliceOrientation o) {
  return o == SliceOrientation::Axial ? 2 : (o == SliceOrientation::Coronal ? 1 : 0);
}

/// Camera set-up in radiological convention (patient left on screen right):
/// axial seen from the feet with anterior up, coronal seen from the front with head up,
/// sagittal seen from the patient's left with head up and anterior on screen left.
struct SliceCameraAxes {
  std::array<double, 3> directionOfProjection;  ///< from the camera towards the slice
  std::array<double, 3> viewUp;
};

constexpr SliceCameraAxes cameraAxes(SliceOrientation o) {
  switch (o) {
    case SliceOrientation::Axial: return {{0, 0, 1}, {0, -1, 0}};
    case SliceOrientation::Coronal: return {{0, 1, 0}, {0, 0, 1}};
    case SliceOrientation::Sagittal: return {{-1, 0, 0}, {0, 0, 1}};
  }
  return {{0, 0, 1}, {0, -1, 0}};
}

constexpr const char* displayName(SliceOrientation o) {
  return o == SliceOrientation::Axial ? "Axial" : (o == SliceOrientation::Coronal ? "Coronal" : "Sagittal");
}

constexpr const char* objectNameFor(SliceOrientation o) {
  return o == SliceOrientation::Axial ? "axialView"
                                      : (o == SliceOrientation::Coronal ? "coronalView" : "sagittalView");
}

}  // namespace penumbra::gui
