#pragma once
/// Colour maps of the dose comparison, shared by the slice overlay (ComparisonWashDisplay), the
/// gamma histogram and the profile chart (gui/compare) and penumbra-cli's PDF report, so that one
/// colour means one thing everywhere. No VTK, no Qt: RGB in [0, 1]. Here in io/ rather than in
/// gui/ because the CLI, which has no GUI, draws with them too (gui/overlays/compare_colours.hpp
/// brings the names into penumbra::gui).
///
///  gamma       pass (gamma <= 1): cool, from dark slate blue at 0 to pale blue-grey at 1, so a
///              pass never looks alarming; fail (gamma > 1): warm, from saturated red just above
///              1 through orange to yellow at the cap. The step at 1 is a jump from pale blue to
///              red, readable in grey print as well (light -> dark).
///  difference  A - B, diverging blue (B higher) - white (0) - red (A higher), symmetric about 0.
#include <algorithm>
#include <array>

namespace penumbra::io {

using Rgb = std::array<double, 3>;

inline Rgb lerpRgb(const Rgb& a, const Rgb& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return {a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t};
}

inline constexpr Rgb kGammaPassLow{0.16, 0.24, 0.52};   ///< gamma 0
inline constexpr Rgb kGammaPassHigh{0.70, 0.78, 0.88};  ///< gamma 1
inline constexpr Rgb kGammaFailLow{0.86, 0.08, 0.06};   ///< just above 1
inline constexpr Rgb kGammaFailMid{1.00, 0.50, 0.00};
inline constexpr Rgb kGammaFailHigh{1.00, 0.95, 0.10};  ///< the cap

/// Colour of a gamma value (cap > 1: values above it take the cap's colour).
inline Rgb gammaColour(double gamma, double cap) {
  if (gamma <= 1) return lerpRgb(kGammaPassLow, kGammaPassHigh, gamma);
  const double t = cap > 1 ? (gamma - 1) / (cap - 1) : 1.0;
  return t < 0.5 ? lerpRgb(kGammaFailLow, kGammaFailMid, 2 * t)
                 : lerpRgb(kGammaFailMid, kGammaFailHigh, 2 * t - 1);
}

inline constexpr Rgb kDiffNegative{0.13, 0.30, 0.80};  ///< A - B = -range (B higher)
inline constexpr Rgb kDiffZero{1.0, 1.0, 1.0};
inline constexpr Rgb kDiffPositive{0.80, 0.10, 0.10};  ///< A - B = +range (A higher)

/// Colour of a difference d (Gy) on a scale of +-range (range > 0).
inline Rgb differenceColour(double d, double range) {
  const double t = range > 0 ? std::clamp(d / range, -1.0, 1.0) : 0.0;
  return t < 0 ? lerpRgb(kDiffZero, kDiffNegative, -t) : lerpRgb(kDiffZero, kDiffPositive, t);
}

}  // namespace penumbra::io
