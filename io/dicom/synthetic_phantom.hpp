#pragma once
/// Writes a small synthetic CT series (and optionally an RT Structure Set) with DCMTK: the
/// demo case when the shared data is absent, and the test fixture for geometry corner cases
/// (non-square pixels, gantry tilt, oblique orientation, missing slices, holes).
///
/// Coordinates of shapes are "image-local" mm: u along the row direction, v along the column
/// direction, w along the slice normal, measured from the centre of the first voxel of the
/// first slice. For the default orientation [1,0,0,0,1,0] that is patient LPS minus origin.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/vec3.hpp"

namespace penumbra::io {

struct SyntheticStructureSpec {
  enum class Shape { Box, Sphere, BoxWithHole };
  std::string name;
  std::string interpretedType = "ORGAN";  ///< RTROIInterpretedType: EXTERNAL, PTV, ORGAN...
  std::array<std::uint8_t, 3> color{255, 0, 0};
  Shape shape = Shape::Box;
  Vec3 center;        ///< image-local mm
  Vec3 halfSize;      ///< Box / BoxWithHole outer half extents, mm
  double radius = 0;  ///< Sphere, mm (polygon of 72 vertices per slice)
  Vec3 holeHalfSize;  ///< BoxWithHole: inner square drawn as a second contour, mm
};

struct SyntheticPhantomSpec {
  int rows = 64, columns = 64, slices = 32;
  /// DICOM PixelSpacing: [0] between rows (along the column direction), [1] between columns.
  std::array<double, 2> pixelSpacing{2.0, 2.0};
  double sliceSpacing = 2.0;  ///< mm between slices along the normal
  std::array<double, 6> orientation{1, 0, 0, 0, 1, 0};
  Vec3 origin{-63, -63, -31};   ///< ImagePositionPatient of the first slice, mm
  double tiltDegrees = 0;       ///< gantry tilt: slice k shifts along the column direction
  std::vector<int> omitSlices;  ///< slice indices not written (missing slices)
  /// CT content: `insideHu` inside the first EXTERNAL structure (or everywhere when there is
  /// none), `outsideHu` elsewhere. Stored unsigned with RescaleIntercept -1024.
  std::int16_t insideHu = 0, outsideHu = -1000;
  bool writeStructureSet = true;
  /// Empty: a water box BODY (EXTERNAL) with a PTV box in its centre.
  std::vector<SyntheticStructureSpec> structures;
  std::string patientName = "Penumbra^Demo", patientId = "PENUMBRA-DEMO";
  std::string seriesDescription = "Penumbra synthetic phantom";
};

struct SyntheticPhantomFiles {
  std::vector<std::string> ctFiles;
  std::string structureSetFile;  ///< empty when not written
  std::string seriesInstanceUid, frameOfReferenceUid;
};

/// Writes CT_0001.dcm ... and RS.dcm into `dir` (created if needed). Throws penumbra::Error
/// (Io) when a file cannot be written, InvalidArgument for a nonsensical spec.
SyntheticPhantomFiles writeSyntheticPhantom(const std::string& dir,
                                            const SyntheticPhantomSpec& spec);

/// The structures used when spec.structures is empty, for a given spec's extent.
std::vector<SyntheticStructureSpec> defaultSyntheticStructures(const SyntheticPhantomSpec& spec);

}  // namespace penumbra::io
