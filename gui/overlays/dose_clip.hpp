#pragma once
/// Clipping the dose DISPLAY to the patient outline, as clinical planning systems show it: the
/// dose grid covers the whole CT and engines deposit dose in air (the photon engine does), so
/// the wash, isodose lines and surfaces stop at the external structure's mask. Only what is
/// drawn changes: dose sets, DVHs, the cursor read-out and exports keep every voxel.
///
/// The masks are on the display grid (PatientScene::displayPatient()), the grid the slice
/// displays sample the dose on (dose_slice.hpp): a slice needs one mask byte per sample. The 3D
/// surfaces are extracted on the dose grid, which needs the mask resampled onto it
/// (maskOnGrid(), cached by DoseSurfaceDisplay per dose grid and structure). No VTK, no Qt.
#include "core/structure.hpp"
#include "core/volume.hpp"

namespace penumbra::gui {

class PatientScene;

/// Index in `structures` of the patient outline: the first structure whose RT ROI Interpreted
/// Type is EXTERNAL, else the first one named BODY, External, Skin or Outline (case-insensitive,
/// in that order of preference); only structures with a rasterised mask count. -1 when none.
int externalStructureIndex(const StructureSet& structures);

/// The display-grid mask the dose display is clipped to: the external structure's mask of the
/// scene's display patient when `clipToExternal` and such a structure exists, else null.
const Mask* doseClipMask(const PatientScene& scene, bool clipToExternal);

/// `mask` sampled at the voxel centres of `grid` (nearest voxel; 0 outside the mask's grid).
/// Any orientation of either grid. Linear in grid.voxelCount().
Mask maskOnGrid(const Mask& mask, const Grid& grid);

}  // namespace penumbra::gui
