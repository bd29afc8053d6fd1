#pragma once
// The figures of penumbra-cli compare's PDF report: the gamma histogram as bars, and the central
// axial, coronal and sagittal slices of the gamma map in the GUI's colours with a colour bar.
#include "compare/compare.hpp"
#include "core/volume.hpp"
#include "report/report_flow.hpp"

namespace penumbra::cli {

/// The gamma histogram (40 bars over [0, cap], as the GUI's Compare dock: passing and failing
/// parts stacked), in % of the evaluated points, full width.
void drawGammaHistogram(io::pdf::ReportFlow& flow, const compare::CompareResult& result,
                        double cap);

/// The slices through the centre of the evaluated region's bounding box, one mm scale for all
/// three; not-evaluated voxels grey, lighter where `reference` (Gy, on the gamma's grid) is below
/// the cut-off. A line of text instead when no point was evaluated.
void drawGammaSlices(io::pdf::Document& doc, io::pdf::ReportFlow& flow,
                     const compare::CompareResult& result, const Volume<float>& reference,
                     const compare::GammaCriteria& criteria);

}  // namespace penumbra::cli
