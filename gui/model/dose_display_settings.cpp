#include "gui/model/dose_display_settings.hpp"

#include <algorithm>
#include <cmath>

#include <vtkLookupTable.h>

namespace penumbra::gui {

std::vector<IsodoseLevel> defaultIsodoseLevels() {
  // Saturated, mutually distinct colours (a test finds the 100 % line by its exact colour).
  return {{107, QColor(255, 0, 255), false}, {100, QColor(255, 0, 0), true},
          {95, QColor(255, 160, 0), false},  {90, QColor(255, 255, 0), false},
          {80, QColor(0, 255, 0), false},    {50, QColor(0, 255, 255), true},
          {30, QColor(0, 96, 255), false}};
}

DoseDisplaySettings::DoseDisplaySettings(QObject* parent)
    : QObject(parent), levels_(defaultIsodoseLevels()) {}

void DoseDisplaySettings::setColorMap(DoseColorMap map) {
  if (map == colorMap_) return;
  colorMap_ = map;
  emit washChanged();
}

void DoseDisplaySettings::setWashOpacity(double opacity) {
  opacity = std::clamp(opacity, 0.0, 1.0);
  if (opacity == opacity_) return;
  opacity_ = opacity;
  emit washChanged();
}

void DoseDisplaySettings::setWashThresholdPercent(double percent) {
  percent = std::max(0.0, percent);
  if (percent == thresholdPercent_) return;
  thresholdPercent_ = percent;
  emit washChanged();
}

void DoseDisplaySettings::setWashVisible(bool on) {
  if (on == washVisible_) return;
  washVisible_ = on;
  emit washChanged();
}

void DoseDisplaySettings::setIsodosesVisible(bool on) {
  if (on == isodosesVisible_) return;
  isodosesVisible_ = on;
  emit isodosesChanged();
}

void DoseDisplaySettings::setSurfacesVisible(bool on) {
  if (on == surfacesVisible_) return;
  surfacesVisible_ = on;
  emit surfacesChanged();
}

void DoseDisplaySettings::setClipToExternal(bool on) {
  if (on == clipToExternal_) return;
  clipToExternal_ = on;
  emit clipChanged();
}

void DoseDisplaySettings::setIsodoseLevels(std::vector<IsodoseLevel> levels) {
  levels.erase(std::remove_if(levels.begin(), levels.end(),
                              [](const IsodoseLevel& l) { return !(l.percent > 0); }),
               levels.end());
  std::sort(levels.begin(), levels.end(),
            [](const IsodoseLevel& a, const IsodoseLevel& b) { return a.percent > b.percent; });
  levels_ = std::move(levels);
  emit isodosesChanged();
  emit surfacesChanged();
}

const char* toString(DoseColorMap map) {
  switch (map) {
    case DoseColorMap::Rainbow: return "Rainbow (jet)";
    case DoseColorMap::Dose: return "Dose (blue-green-yellow-red)";
    case DoseColorMap::Grayscale: return "Grayscale";
  }
  return "";
}

std::array<double, 3> colorMapAt(DoseColorMap map, double t) {
  t = std::clamp(t, 0.0, 1.0);
  switch (map) {
    case DoseColorMap::Rainbow: {
      // Jet: dark blue, blue, cyan, yellow, red, dark red.
      auto ramp = [](double x) { return std::clamp(1.5 - std::abs(x), 0.0, 1.0); };
      return {ramp(4 * t - 3), ramp(4 * t - 2), ramp(4 * t - 1)};
    }
    case DoseColorMap::Dose: {
      // Piecewise linear through blue, green, yellow, red (the classic TPS dose wash).
      static const double stops[4][3] = {{0, 0, 1}, {0, 0.8, 0}, {1, 1, 0}, {1, 0, 0}};
      const double s = t * 3;
      const int i = std::min(2, int(s));
      const double f = s - i;
      return {stops[i][0] + f * (stops[i + 1][0] - stops[i][0]),
              stops[i][1] + f * (stops[i + 1][1] - stops[i][1]),
              stops[i][2] + f * (stops[i + 1][2] - stops[i][2])};
    }
    case DoseColorMap::Grayscale: return {t, t, t};
  }
  return {t, t, t};
}

void fillDoseLookupTable(vtkLookupTable* lut, DoseColorMap map, double lo, double hi) {
  constexpr int kEntries = 256;
  if (!(hi > lo)) hi = lo + 1e-6;
  lut->SetNumberOfTableValues(kEntries);
  lut->SetTableRange(lo, hi);
  for (int n = 0; n < kEntries; ++n) {
    const auto c = colorMapAt(map, double(n) / (kEntries - 1));
    lut->SetTableValue(n, c[0], c[1], c[2], 1.0);
  }
  lut->SetBelowRangeColor(0, 0, 0, 0);
  lut->UseBelowRangeColorOn();
  lut->SetAboveRangeColor(lut->GetTableValue(kEntries - 1));
  lut->UseAboveRangeColorOn();
  lut->Modified();
}

}  // namespace penumbra::gui
