#pragma once
/// The imported patient as the views see it: the Patient itself (shared, immutable, as
/// imported), its DISPLAY copy, and the VTK image of the display CT, built once on the GUI
/// thread and shared read-only by all displays (each display has its own mapper, so GL
/// resources are per view).
///
/// Display grid: every view draws in the display grid's index frame (origin + index *
/// spacing, see slice_orientation.hpp). When the imported CT's direction is a signed
/// permutation (feet-first, prone, decubitus series) the display copy holds the CT and the
/// structure masks re-indexed onto the identity-direction grid covering the same voxels
/// (core/reorient.hpp: exact, no interpolation), so that frame is patient LPS and the
/// radiological camera set-up of slice_orientation.hpp shows the patient correctly. For an
/// identity CT the display copy is the imported Patient itself (no copy).
#include <memory>

#include <vtkSmartPointer.h>

#include "core/patient.hpp"
#include "gui/model/slice_orientation.hpp"

class vtkImageData;

namespace penumbra::gui {

class PatientScene {
public:
  explicit PatientScene(std::shared_ptr<const Patient> patient);
  ~PatientScene();

  /// The patient as imported (untouched): names, colours, contours, and the CT and masks on
  /// the import grid, which may differ from grid(). Never index it with view indices.
  const Patient& patient() const { return *patient_; }
  std::shared_ptr<const Patient> sharedPatient() const { return patient_; }
  /// CT and structure masks on the display grid: what the views index. Same structures in
  /// the same order as patient().
  const Patient& displayPatient() const { return *display_; }
  std::shared_ptr<const Patient> sharedDisplayPatient() const { return display_; }
  /// The display grid (direction identity unless the import grid is oblique).
  const Grid& grid() const { return display_->ct.grid; }
  /// True when the display copy was re-indexed from a non-identity import grid.
  bool isReoriented() const { return display_ != patient_; }
  /// False only for an oblique import grid (refused by the importer): then the views draw
  /// in its index frame and only the read-outs (through grid().indexToWorld) are LPS.
  bool displayIsLps() const { return grid().isAxisAligned(); }
  /// Display CT as vtkImageData (int16 HU); wraps the display Patient's voxels, no copy.
  vtkImageData* ctImage() const;

  int sliceCount(SliceOrientation o) const { return grid().dims[normalAxis(o)]; }
  /// Display-frame position (mm) of a continuous display-grid index.
  std::array<double, 3> displayPoint(Vec3 ijk) const;
  /// Continuous display-grid index of a display-frame position.
  Vec3 indexOfDisplayPoint(const double p[3]) const;
  /// Patient position (LPS, mm) of a continuous display-grid index.
  Vec3 worldOf(Vec3 ijk) const { return grid().indexToWorld(ijk); }
  /// Continuous index in the imported CT (patient().ct.grid) of a display-grid index.
  Vec3 importIndexOf(Vec3 ijk) const;
  /// HU of the nearest voxel; false when outside the grid.
  bool huAt(Vec3 ijk, int& hu) const;
  /// Index of the grid centre (continuous).
  Vec3 centreIndex() const;

private:
  std::shared_ptr<const Patient> patient_;
  std::shared_ptr<const Patient> display_;
  vtkSmartPointer<vtkImageData> ctImage_;
};

/// The display copy of `patient` (see PatientScene): `patient` itself when its CT direction
/// is the identity or not a signed permutation, else a copy with the CT and every non-empty
/// mask re-indexed onto the identity-direction grid (contours are in patient mm and copied).
std::shared_ptr<const Patient> makeDisplayPatient(std::shared_ptr<const Patient> patient);

}  // namespace penumbra::gui
