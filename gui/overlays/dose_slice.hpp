#pragma once
/// A dose distribution cut by a slice view's plane, sampled at the display grid's voxel centres
/// (PatientScene::grid(): what the CT slice shows) by trilinear interpolation of the dose grid,
/// whatever that grid's spacing, extent or direction. The wash and the isodose lines of a view
/// are both drawn from it, so they agree with each other and with the cursor read-out.
/// Iso-lines by marching squares with linear interpolation along cell edges. No VTK, no Qt.
#include <vector>

#include "core/volume.hpp"
#include "gui/model/patient_scene.hpp"
#include "gui/model/slice_orientation.hpp"
#include "gui/overlays/marching_squares.hpp"

namespace penumbra::gui {

struct DoseSlice {
  /// In-plane display-grid index of sample (0, 0) and the sample counts; the samples cover
  /// the dose grid's footprint on the slice plus one ring of zeros (closed iso-lines).
  int u0 = 0, v0 = 0, nu = 0, nv = 0;
  std::vector<float> gy;  ///< nu * nv, u fastest
  bool empty() const { return nu <= 0 || nv <= 0; }
  float at(int iu, int iv) const { return gy[std::size_t(iv) * std::size_t(nu) + std::size_t(iu)]; }
};

/// Value of samples clipped away (outside the clip mask): just below 0 Gy, so below every wash
/// threshold (0 % included: the wash is transparent there) and every isodose level (> 0),
/// and iso-lines close within one display voxel of the outline as they would against 0 Gy.
inline constexpr float kClippedGy = -1e-6f;

/// Samples `dose` on slice `slice` of `orientation` of the scene's display grid. With `clip`
/// (a mask on the display grid, dose_clip.hpp) samples at voxels outside it are kClippedGy.
DoseSlice sampleDoseSlice(const Volume<float>& dose, const PatientScene& scene,
                          SliceOrientation orientation, int slice, const Mask* clip = nullptr);

/// Segments of the iso-line dose == `level` [Gy], in display-grid in-plane indices (u, v).
/// Saddle cells are resolved by the cell-centre average.
std::vector<Segment2> doseIsoLines(const DoseSlice& slice, float level);

}  // namespace penumbra::gui
