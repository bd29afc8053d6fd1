#pragma once
/// Smooth surfaces of structure masks for the 3D view: flying edges at the 0.5 iso-level of
/// the cropped mask, windowed-sinc smoothing, normals. Safe to run on a worker thread: it
/// touches only its own VTK data objects, never a renderer or render window.
#include <vector>

#include <vtkSmartPointer.h>

#include "core/patient.hpp"
#include "core/progress.hpp"

class vtkPolyData;

namespace penumbra::gui {

/// Surface of one mask in the display frame (see slice_orientation.hpp): the mask must be on
/// the display grid (PatientScene::displayPatient()), whose direction is not applied. An
/// empty polydata when the mask is empty.
vtkSmartPointer<vtkPolyData> buildMaskSurface(const Mask& mask);

/// One surface per structure, in the patient's structure order (pass the display patient).
/// Polls job.cancel between structures (throws CancelledError).
std::vector<vtkSmartPointer<vtkPolyData>> buildStructureSurfaces(const Patient& patient,
                                                                 const JobControl& job = {});

}  // namespace penumbra::gui
