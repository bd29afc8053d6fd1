#pragma once
/// A 3D dose distribution with its provenance: what every dose engine returns, what RT Dose
/// import produces and what the DVH engine and the dose display consume.
#include <string>

#include "core/volume.hpp"

namespace penumbra {

struct DoseVolume {
  Volume<float> dose;       ///< absorbed dose per voxel centre, in `unit`
  std::string unit = "Gy";  ///< "Gy" or, for relative doses (DICOM DoseUnits RELATIVE), "%"
  std::string label;        ///< one line for lists: "proton PB (CUDA) 12:03" or an RT Dose's name

  // Provenance: which engine and backend made it, with which parameters (free text, one
  // "name=value" per line) and how long it took; "import" for doses read from a file.
  std::string engine;
  std::string backend;
  std::string parameters;
  double computeSeconds = 0;

  bool empty() const { return dose.empty(); }
  const Grid& grid() const { return dose.grid; }
};

}  // namespace penumbra
