#pragma once
/// CT display window/level (HU) and the presets offered in the toolbar.
#include <array>

namespace penumbra::gui {

struct WindowLevel {
  double window = 400;  ///< HU width mapped onto the grey ramp, > 0
  double level = 40;    ///< HU at the middle of the ramp

  bool operator==(const WindowLevel&) const = default;
};

struct WindowLevelPreset {
  const char* name;
  WindowLevel value;
};

/// Clinical presets: soft tissue W400/L40, lung W1500/L-600, bone W2000/L300.
inline constexpr std::array<WindowLevelPreset, 3> kWindowLevelPresets{{
    {"Soft tissue (W400 L40)", {400, 40}},
    {"Lung (W1500 L-600)", {1500, -600}},
    {"Bone (W2000 L300)", {2000, 300}},
}};

/// Smallest window the interactive drag allows (HU).
inline constexpr double kMinWindow = 1.0;

}  // namespace penumbra::gui
