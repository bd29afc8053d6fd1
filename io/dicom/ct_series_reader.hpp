#pragma once
// CT slice headers and pixel data to a CtVolume in HU. Internal to io/dicom.
#include <string>

#include "core/progress.hpp"
#include "core/volume.hpp"
#include "dicom/dicom_import.hpp"
#include "dicom/series_verdict.hpp"

namespace penumbra::io {

/// Reads the slices of `series`, sorts them along the normal, rescales to HU and fills
/// missing lattice planes by interpolation. Geometry refusals (tilt, oblique, irregular
/// spacing) and unreadable or compressed-unsupported pixel data become errors in `messages`
/// and an empty volume. Throws only CancelledError.
CtVolume readCtSeries(const SeriesInfo& series, ImportMessages& messages,
                      const JobControl& job = {});

}  // namespace penumbra::io
