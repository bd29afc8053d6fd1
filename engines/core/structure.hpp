#pragma once
/// Delineated structures (RT Structure Set ROIs) as planar contours in patient mm, plus the
/// mask rasterised onto a grid.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/vec3.hpp"
#include "core/volume.hpp"

namespace penumbra {

enum class StructureKind { External, Target, OrganAtRisk, Other };

/// Maps a DICOM RTROIInterpretedType (EXTERNAL, PTV, CTV, GTV, ORGAN, AVOIDANCE, ...) to a kind.
StructureKind structureKindFromInterpretedType(const std::string& interpretedType);
const char* toString(StructureKind kind);

/// One closed planar polygon; the last point connects back to the first.
struct Contour {
  std::vector<Vec3> points;  ///< patient coordinates, mm
};

struct Structure {
  int roiNumber = 0;
  std::string name;
  std::array<std::uint8_t, 3> color{255, 0, 0};  ///< RGB, DICOM ROIDisplayColor
  std::string interpretedType;                    ///< as in the file (may be empty)
  StructureKind kind = StructureKind::Other;
  std::vector<Contour> contours;
  Mask mask;  ///< empty until rasterised onto a grid
};

struct StructureSet {
  std::string label;
  std::string frameOfReferenceUid;
  std::vector<Structure> structures;

  const Structure* find(const std::string& name) const {
    for (const auto& s : structures)
      if (s.name == name) return &s;
    return nullptr;
  }
};

}  // namespace penumbra
