#pragma once
/// The comparison's colour maps (io/report/compare_colours.hpp, shared with penumbra-cli's PDF
/// report) under the names the GUI has always used.
#include "report/compare_colours.hpp"

namespace penumbra::gui {

using io::differenceColour;
using io::gammaColour;
using io::kDiffNegative;
using io::kDiffPositive;
using io::kDiffZero;
using io::kGammaFailHigh;
using io::kGammaFailLow;
using io::kGammaFailMid;
using io::kGammaPassHigh;
using io::kGammaPassLow;
using io::lerpRgb;
using io::Rgb;

}  // namespace penumbra::gui
