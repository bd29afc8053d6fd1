#pragma once
/// Where the 2D annotations of a slice view go, in display pixels (origin at the bottom left),
/// so that none overlaps another at any view size from about 260 x 200 px up (a 1280 x 800
/// window gives slice views of about 300 x 250 px):
///
///   title: view and slice (line 1), position (line 2),  [top letter]   isodose legend,
///          the shown dose set (line 3)                                  right-justified,
///   [left letter]                                                         [right letter]
///                                                            colour bar of the wash with
///                                                            its top and bottom doses
///   W/L                                   [bottom letter]                      scale bar
///
/// The orientation letters sit on the middle of each edge with a dark box behind them, so the
/// crosshair passes under them and never through them. The legend shrinks its line height to
/// stay above the right letter; the colour bar is hidden when the view is too short for it.
#include <algorithm>

namespace penumbra::gui::slice_layout {

inline constexpr int kMargin = 4;        ///< from every edge [px]
inline constexpr int kFontSize = 12;     ///< title, position, dose set, W/L
inline constexpr int kLineHeight = 15;   ///< of kFontSize text
inline constexpr int kLetterFontSize = 14;
inline constexpr int kLetterHalfHeight = 10;  ///< half the height of a letter with its box
inline constexpr double kBackgroundOpacity = 0.55;
inline constexpr int kBottomBand = 30;   ///< W/L, bottom letter and scale bar live below this
inline constexpr int kColourBarWidth = 10;

/// Baseline-independent top of line `line` (0-based) of the title block.
inline int titleLineTop(int h, int line) { return h - kMargin - line * kLineHeight; }

/// Line height of the isodose legend with `lines` lines (header included): at most 14 px,
/// less when the view is short, so that the legend ends above the right letter.
inline int legendLineHeight(int h, int lines) {
  const int room = h / 2 - kLetterHalfHeight - 4 - kMargin;
  return std::clamp(lines > 0 ? room / lines : 14, 8, 14);
}

/// Vertical extent of the colour bar (bottom, top) [px]; top <= bottom when there is no room.
inline int colourBarBottom() { return kBottomBand + 12; }
inline int colourBarTop(int h) { return h / 2 - kLetterHalfHeight - 12; }

/// Longest scale bar the bottom band holds [px]: a quarter of the width, and clear of the
/// bottom letter in the middle.
inline int maxScaleBarPx(int w) { return std::max(10, std::min(w / 4, w / 2 - 24)); }

}  // namespace penumbra::gui::slice_layout
