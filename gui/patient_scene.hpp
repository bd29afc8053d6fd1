#pragma once
/// The imported patient as the views see it: the Patient itself (shared, immutable) and the
/// VTK image of its CT, built once on the GUI thread and shared read-only by all displays
/// (each display has its own mapper, so GL resources are per view).
#include <memory>

#include <vtkSmartPointer.h>

#include "core/patient.hpp"
#include "slice_orientation.hpp"

class vtkImageData;

namespace penumbra::gui {

class PatientScene {
public:
  explicit PatientScene(std::shared_ptr<const Patient> patient);
  ~PatientScene();

  const Patient& patient() const { return *patient_; }
  std::shared_ptr<const Patient> sharedPatient() const { return patient_; }
  const Grid& grid() const { return patient_->ct.grid; }
  /// CT as vtkImageData (int16 HU) in the display frame; wraps the Patient's voxels, no copy.
  vtkImageData* ctImage() const;

  int sliceCount(SliceOrientation o) const { return grid().dims[normalAxis(o)]; }
  /// Display-frame position (mm) of a continuous grid index.
  std::array<double, 3> displayPoint(Vec3 ijk) const;
  /// Continuous grid index of a display-frame position.
  Vec3 indexOfDisplayPoint(const double p[3]) const;
  /// HU of the nearest voxel; false when outside the grid.
  bool huAt(Vec3 ijk, int& hu) const;
  /// Index of the grid centre (continuous).
  Vec3 centreIndex() const;

private:
  std::shared_ptr<const Patient> patient_;
  vtkSmartPointer<vtkImageData> ctImage_;
};

}  // namespace penumbra::gui
