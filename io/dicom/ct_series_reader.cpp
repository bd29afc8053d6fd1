#include "dicom/ct_series_reader.hpp"

#include <cmath>
#include <limits>

#include "dicom/dcmtk_util.hpp"

namespace penumbra::io {

namespace {

// Decodes one slice's stored values into HU, written to dest() (called only once the pixel data
// has proved to hold Rows x Columns values). Returns an error text, empty on success.
template <class Dest>
std::string decodeSlice(DcmFileFormat& ff, const SliceHeader& h, Dest dest, long& clamped) {
  DcmDataset& ds = *ff.getDataset();
  const std::string name = dcm::shortName(h.file);
  // Transfer syntax, samples, frames, bit depths and the pixel data length were checked by
  // readSliceHeader (the verdict the doctor shows); what fails here is data that does not
  // decompress.
  if (DcmXfer(ds.getOriginalXfer()).isEncapsulated()) {
    const OFCondition c = ds.chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
    if (c.bad() || !ds.canWriteXfer(EXS_LittleEndianExplicit))
      return name + ": the compressed pixel data (" + dcm::transferSyntaxName(ff) +
             ") could not be decompressed: " + dcm::plainWords(c);
  }
  const long bitsAllocated = dcm::getInt(ds, DCM_BitsAllocated).value_or(0);
  const long bitsStored = dcm::getInt(ds, DCM_BitsStored).value_or(bitsAllocated);
  const bool isSigned = dcm::getInt(ds, DCM_PixelRepresentation).value_or(0) == 1;
  // Checked by readSliceHeader: finite, slope > 0 (series_verdict.cpp).
  const double slope = h.rescaleSlope;
  const double intercept = h.rescaleIntercept;
  if (bitsStored <= 0 || bitsStored > bitsAllocated)
    return name + ": inconsistent BitsStored/BitsAllocated";

  const std::size_t n = std::size_t(h.rows) * std::size_t(h.columns);
  unsigned long count = 0;
  std::int16_t* out = nullptr;
  auto store = [&](std::size_t i, double stored) {
    const double hu = std::round(stored * slope + intercept);
    constexpr double lo = std::numeric_limits<std::int16_t>::min();
    constexpr double hi = std::numeric_limits<std::int16_t>::max();
    if (hu < lo || hu > hi) ++clamped;
    out[i] = std::int16_t(std::clamp(hu, lo, hi));
  };
  // Stored values occupy the low BitsStored bits; signed values are two's complement in
  // those bits, so sign-extend from BitsStored rather than from the container size.
  auto extend = [&](std::uint32_t raw) -> double {
    const std::uint64_t mask = bitsStored >= 32 ? 0xffffffffull : ((1ull << bitsStored) - 1);
    std::int64_t v = std::int64_t(raw & mask);
    if (isSigned && (v & (std::int64_t(1) << (bitsStored - 1)))) v -= std::int64_t(mask) + 1;
    return double(v);
  };
  OFCondition c;
  if (bitsAllocated == 16) {
    const Uint16* p = nullptr;
    c = ds.findAndGetUint16Array(DCM_PixelData, p, &count);
    if (c.good() && p && count >= n && (out = dest()))
      for (std::size_t i = 0; i < n; ++i) store(i, extend(p[i]));
  } else if (bitsAllocated == 8) {
    const Uint8* p = nullptr;
    c = ds.findAndGetUint8Array(DCM_PixelData, p, &count);
    if (c.good() && p && count >= n && (out = dest()))
      for (std::size_t i = 0; i < n; ++i) store(i, extend(p[i]));
  } else if (bitsAllocated == 32) {
    const Uint32* p = nullptr;
    c = ds.findAndGetUint32Array(DCM_PixelData, p, &count);
    if (c.good() && p && count >= n && (out = dest()))
      for (std::size_t i = 0; i < n; ++i) store(i, extend(p[i]));
  } else {
    return name + ": BitsAllocated " + std::to_string(bitsAllocated) + " is not supported";
  }
  if (c.bad()) return name + ": the pixel data cannot be read: " + dcm::plainWords(c);
  if (count < n)
    return name + ": the pixel data holds " + std::to_string(count) +
           " values, Rows x Columns is " + std::to_string(n);
  return {};
}

}  // namespace

CtVolume readCtSeries(const SeriesInfo& series, ImportMessages& messages, const JobControl& job) {
  const std::string label = seriesLabel(series.modality, series.folder);
  std::vector<SliceHeader> headers;
  for (const auto& file : series.files) {
    job.checkCancel();
    std::string error;
    bool truncated = false;
    auto ff = dcm::loadFile(file, dcm::LoadDepth::Full, error, &truncated);
    SliceHeader h;
    std::string why;
    if (!ff) {
      messages.error(error);
      return {};
    }
    if (!readSliceHeader(*ff->getDataset(), file, truncated, h, why)) {
      messages.error(truncated ? error : dcm::shortName(file) + ": " + why);
      return {};
    }
    headers.push_back(std::move(h));
  }
  // The same verdict as the folder scan's (series_verdict.hpp), before any pixel is read.
  SeriesVerdict verdict = judgeSeries(series.modality, headers, label);
  for (auto& w : verdict.warnings) messages.warn(w);
  if (!verdict.importable()) {
    for (auto& e : verdict.errors) messages.error(e);
    return {};
  }
  const SeriesGeometry& g = verdict.geometry;

  // Allocated when the first slice's pixel data holds Rows x Columns values: a 1 KB file whose
  // header claims 65535 x 65535 must not cost 8.6 GB per slice (fuzz_dicom_ct).
  CtVolume ct;
  const std::size_t sliceVoxels = std::size_t(g.grid.dims[0]) * std::size_t(g.grid.dims[1]);
  long clamped = 0;
  for (std::size_t s = 0; s < g.order.size(); ++s) {
    job.checkCancel();
    job.report(double(s) / double(g.order.size()), "reading CT slices");
    const SliceHeader& h = headers[g.order[s]];
    std::string error;
    auto ff = dcm::loadFile(h.file, dcm::LoadDepth::Full, error);
    if (!ff) {
      messages.error(error);
      return {};
    }
    std::string why;
    try {
      const std::size_t at = std::size_t(g.latticeIndex[s]) * sliceVoxels;
      why = decodeSlice(
          *ff, h,
          [&] {
            if (ct.empty()) ct = CtVolume(g.grid, 0);
            return ct.data.data() + at;
          },
          clamped);
    } catch (const std::exception& e) {
      why = dcm::shortName(h.file) + ": pixel data could not be decoded (" + e.what() + ")";
    }
    if (!why.empty()) {
      messages.error(why);
      return {};
    }
  }
  if (clamped > 0)
    messages.warn(label + ": " + std::to_string(clamped) +
                  " voxel(s) outside the int16 HU range were clamped to [-32768, 32767]");

  // Missing planes: linear interpolation between the nearest present slices, so that the
  // geometry stays exact (see series_geometry.hpp for why we do not refuse these).
  if (!g.missingLatticeIndices.empty()) {
    std::vector<int> present(g.grid.dims[2], 0);
    for (int k : g.latticeIndex) present[k] = 1;
    for (int k : g.missingLatticeIndices) {
      int lo = k - 1, hi = k + 1;
      while (!present[lo]) --lo;  // index 0 and the last index are always present
      while (!present[hi]) ++hi;
      const double w = double(k - lo) / double(hi - lo);
      const std::int16_t* a = ct.data.data() + std::size_t(lo) * sliceVoxels;
      const std::int16_t* b = ct.data.data() + std::size_t(hi) * sliceVoxels;
      std::int16_t* o = ct.data.data() + std::size_t(k) * sliceVoxels;
      for (std::size_t i = 0; i < sliceVoxels; ++i)
        o[i] = std::int16_t(std::lround((1 - w) * a[i] + w * b[i]));
    }
  }
  job.report(1.0, "reading CT slices");
  return ct;
}

}  // namespace penumbra::io
