#pragma once
// The importer's one verdict on an image series, from headers alone. Internal to io/dicom.
//
// The folder scan (SeriesInfo::importable and problems, which the DICOM doctor shows) and
// readCtSeries (before it reads any pixel) both decide through readSliceHeader() and
// judgeSeries(), so the doctor never calls a series importable that the import then refuses,
// and both say it in the same words.
#include <string>
#include <vector>

#include "dicom/series_geometry.hpp"

class DcmDataset;

namespace penumbra::io {

/// Fills `h` from the attributes of an image file loaded with dcm::LoadDepth::Full (the
/// pixel data is checked for presence and length, not decoded). Returns false with `why`
/// when the file is not meant as a slice of a volume (no ImagePositionPatient or
/// ImageOrientationPatient: a 2D image). Otherwise returns true, and everything that makes
/// the slice unusable is a problem in `h.problems` naming the file and the value as written:
/// text, NaN or Inf, the wrong number of values, a non-positive spacing or size, an invalid
/// rescale, a colour or multi-frame image, a compression this build cannot decode, pixel
/// data shorter than Rows x Columns, or `truncated` (the file ends early). A broken slice
/// stops its series; it is never left out (its neighbours would be interpolated over it).
bool readSliceHeader(DcmDataset& dataset, const std::string& file, bool truncated, SliceHeader& h,
                     std::string& why);

struct SeriesVerdict {
  SeriesGeometry geometry;            ///< valid when no slice has invalid geometry
  std::vector<std::string> errors;    ///< the import is refused
  std::vector<std::string> warnings;  ///< the import goes ahead
  bool importable() const { return errors.empty(); }
};

/// Whether importPatient() takes the series: only CT (HU) is planned on; then the problems
/// of its slices (the first few, then a count) and its geometry. `label` names the series in
/// messages (seriesLabel()).
SeriesVerdict judgeSeries(const std::string& modality, const std::vector<SliceHeader>& slices,
                          const std::string& label);

/// "CT series in CT_2mm": how messages name a series, in the scan and in the import alike.
std::string seriesLabel(const std::string& modality, const std::string& folder);

}  // namespace penumbra::io
