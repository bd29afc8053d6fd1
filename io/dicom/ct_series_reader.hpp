#pragma once
// CT slice headers and pixel data to a CtVolume in HU. Internal to io/dicom.
#include <string>

#include "core/progress.hpp"
#include "core/volume.hpp"
#include "dicom/dicom_import.hpp"
#include "dicom/series_geometry.hpp"

class DcmItem;

namespace penumbra::io {

/// Fills `h` from an image dataset; false with `why` when position, orientation, pixel
/// spacing or size is missing (then the image cannot be a slice of a volume).
bool readSliceHeader(DcmItem& dataset, const std::string& file, SliceHeader& h, std::string& why);

/// Reads the slices of `series`, sorts them along the normal, rescales to HU and fills
/// missing lattice planes by interpolation. Geometry refusals (tilt, oblique, irregular
/// spacing) and unreadable or compressed-unsupported pixel data become errors in `messages`
/// and an empty volume. Throws only CancelledError.
CtVolume readCtSeries(const SeriesInfo& series, ImportMessages& messages,
                      const JobControl& job = {});

}  // namespace penumbra::io
