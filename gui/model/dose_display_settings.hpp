#pragma once
/// How dose is drawn: colour wash (colour map, opacity, lower threshold), isodose levels (in %
/// of the prescription, each with a colour and whether it gets a 3D surface), and whether the
/// display stops at the patient outline (dose_clip.hpp). Shared by every dose display of every
/// view; the dose panel edits it. Nothing here renders.
#include <array>
#include <vector>

#include <QColor>
#include <QObject>
#include <QString>

class vtkLookupTable;

namespace penumbra::gui {

enum class DoseColorMap { Rainbow, Dose, Grayscale };

struct IsodoseLevel {
  double percent = 100;  ///< of the prescription
  QColor color;
  bool surface = false;  ///< also drawn as a surface in the 3D view
};

/// The defaults 107, 100, 95, 90, 80, 50, 30 % with the colours planning systems use.
std::vector<IsodoseLevel> defaultIsodoseLevels();

class DoseDisplaySettings : public QObject {
  Q_OBJECT
public:
  explicit DoseDisplaySettings(QObject* parent = nullptr);

  DoseColorMap colorMap() const { return colorMap_; }
  void setColorMap(DoseColorMap map);
  /// Opacity of the wash over the CT, 0..1.
  double washOpacity() const { return opacity_; }
  void setWashOpacity(double opacity);
  /// Doses below this % of the prescription are not washed.
  double washThresholdPercent() const { return thresholdPercent_; }
  void setWashThresholdPercent(double percent);
  bool washVisible() const { return washVisible_; }
  void setWashVisible(bool on);
  bool isodosesVisible() const { return isodosesVisible_; }
  void setIsodosesVisible(bool on);
  bool surfacesVisible() const { return surfacesVisible_; }
  void setSurfacesVisible(bool on);
  /// Wash, isodose lines and surfaces are drawn only inside the external structure (when the
  /// patient has one: doseClipMask()). Display only: dose values and DVHs are not clipped.
  bool clipToExternal() const { return clipToExternal_; }
  void setClipToExternal(bool on);

  /// Sorted from the highest level down.
  const std::vector<IsodoseLevel>& isodoseLevels() const { return levels_; }
  void setIsodoseLevels(std::vector<IsodoseLevel> levels);

signals:
  void washChanged();
  void isodosesChanged();
  void surfacesChanged();
  /// clipToExternal() changed: every dose display redraws.
  void clipChanged();

private:
  DoseColorMap colorMap_ = DoseColorMap::Rainbow;
  double opacity_ = 0.45;
  double thresholdPercent_ = 10;
  bool washVisible_ = true, isodosesVisible_ = true, surfacesVisible_ = true;
  bool clipToExternal_ = true;
  std::vector<IsodoseLevel> levels_;
};

const char* toString(DoseColorMap map);
/// RGB (0..1) of `map` at t in [0, 1].
std::array<double, 3> colorMapAt(DoseColorMap map, double t);
/// Fills `lut` (256 RGBA entries) with `map` over [lo, hi] Gy; doses below lo are transparent,
/// above hi take the top colour.
void fillDoseLookupTable(vtkLookupTable* lut, DoseColorMap map, double lo, double hi);

}  // namespace penumbra::gui
