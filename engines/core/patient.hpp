#pragma once
/// What an import hands to planning: the CT and its structures in one frame of reference.
#include <string>

#include "core/structure.hpp"
#include "core/volume.hpp"

namespace penumbra {

struct Patient {
  std::string name;                 ///< DICOM PatientName as displayed
  std::string id;                   ///< DICOM PatientID
  std::string frameOfReferenceUid;  ///< of the CT
  std::string ctSeriesUid;
  std::string ctDescription;  ///< e.g. "CT BOXPHANTOM, 160 slices"
  CtVolume ct;                ///< HU
  StructureSet structures;    ///< masks rasterised on ct.grid
};

}  // namespace penumbra
