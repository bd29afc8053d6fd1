#pragma once
/// Geometry of an image series from its slice headers alone: sort along the slice normal,
/// find the slice spacing, detect missing slices, uneven spacing, gantry tilt and oblique
/// orientation. Pure function (no DCMTK, no files) so every case is unit-testable.
///
/// Policy (what a physicist expects of a planning system: never a silently wrong geometry):
///  - gaps that are whole multiples of the smallest gap (missing slices, or mixed 2.5/5 mm
///    protocols) are imported on the regular lattice of the smallest gap; absent planes are
///    filled by linear interpolation between their neighbours, and a warning names them;
///  - gaps that fit no lattice (really irregular spacing), duplicate positions, gantry tilt
///    and oblique orientation are refused with an error: a grid cannot represent them and
///    resampling would invent anatomy without the user noticing.
#include <array>
#include <string>
#include <vector>

#include "core/grid.hpp"

namespace penumbra::io {

/// What the importer needs of one slice header. Units mm.
struct SliceHeader {
  std::string file;
  std::string sopInstanceUid;
  Vec3 position;                        ///< ImagePositionPatient (centre of first pixel)
  std::array<double, 6> orientation{};  ///< ImageOrientationPatient: row cosines, column cosines
  double rowSpacing = 0;     ///< PixelSpacing[0]: between rows (along the column direction)
  double columnSpacing = 0;  ///< PixelSpacing[1]: between columns (along the row direction)
  int rows = 0, columns = 0;
  double sliceThickness = 0;        ///< SliceThickness, 0 when absent or invalid
  double spacingBetweenSlices = 0;  ///< SpacingBetweenSlices, 0 when absent or invalid
  double rescaleSlope = 1, rescaleIntercept = 0;  ///< HU = stored x slope + intercept

  // Filled by readSliceHeader (series_verdict.hpp); each message names the file and the value.
  bool geometryValid = true;          ///< false: a geometry value is missing, text or NaN/Inf
  std::vector<std::string> problems;  ///< stop the import of this file (and so its series)
  std::vector<std::string> warnings;  ///< the import goes ahead (e.g. a bad SliceThickness)
};

struct SeriesGeometry {
  std::vector<int> order;         ///< indices into the input, sorted along the normal
  std::vector<double> positions;  ///< position of each sorted slice along the normal, mm
  std::vector<int> latticeIndex;  ///< k of each sorted slice on the output grid
  Grid grid;                      ///< valid when errors is empty
  double sliceSpacing = 0;        ///< mm
  bool missingSlices = false;     ///< lattice has planes without a file
  bool unevenSpacing = false;     ///< more than one distinct gap
  bool tilted = false;
  bool oblique = false;
  double tiltDegrees = 0;
  std::vector<int> missingLatticeIndices;
  std::vector<std::string> warnings;  ///< import goes ahead
  std::vector<std::string> errors;    ///< import is refused
};

/// Analyses the slices of one series (which should share orientation and pixel geometry;
/// a mismatch is an error). `label` names the series in messages.
SeriesGeometry analyzeSeriesGeometry(const std::vector<SliceHeader>& slices,
                                     const std::string& label = "series");

}  // namespace penumbra::io
