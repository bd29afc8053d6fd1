#pragma once
/// A sampled dose slice (dose_slice.hpp) shown as a one-voxel-thick VTK image in the display
/// frame, on its slice and lifted towards the camera to the dose-wash layer: the placement the
/// dose wash and the comparison maps share (their colours stay their own).
#include <array>

#include "gui/model/patient_scene.hpp"
#include "gui/model/slice_orientation.hpp"
#include "gui/overlays/dose_slice.hpp"

class vtkImageActor;
class vtkImageData;

namespace penumbra::gui {

/// Fills `image` with the samples of `s` (scalars named `scalarName`) on display-grid slice
/// `slice` of orientation `o` (in-plane axes `axes`), and sets `actor`'s display extent and
/// layer. `s` must not be empty.
void placeSliceImage(vtkImageData* image, vtkImageActor* actor, const DoseSlice& s,
                     const PatientScene& scene, SliceOrientation o, const std::array<int, 2>& axes,
                     int slice, const char* scalarName);

}  // namespace penumbra::gui
