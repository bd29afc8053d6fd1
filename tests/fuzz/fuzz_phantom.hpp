#pragma once
// The tiny synthetic CT of the DICOM seeds (make_seeds.cpp) and of fuzz_rtstruct's fixed CT, so
// that the seed structure sets lie on that CT's planes and reach the rasteriser.
#include "dicom/synthetic_phantom.hpp"

namespace penumbra::fuzz {

inline io::SyntheticPhantomSpec tinyCtSpec(int slices) {
  io::SyntheticPhantomSpec spec;
  spec.rows = 6;
  spec.columns = 5;
  spec.slices = slices;
  spec.pixelSpacing = {2.0, 2.5};
  spec.sliceSpacing = 2.0;
  spec.origin = {-5, -6, -2};
  return spec;
}

}  // namespace penumbra::fuzz
