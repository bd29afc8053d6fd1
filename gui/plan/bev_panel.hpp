#pragma once
/// Beam's-eye view of the current beam (as in Liu et al.'s Figure 1): the target outline seen
/// from the source (from the spot generation's BEV target projection), the part of the target
/// the shown energy layer treats (dashed), that layer's spots (area ~ weight) and the scan path
/// through them in delivery order. A slider steps through the layers; a click selects a spot,
/// which Delete (key or button) removes. A photon beam shows its jaws, its conformal aperture
/// and the target projected from the source (no layers). Coordinates: BEV (u, v) at the isocentre plane in mm,
/// u (IEC beam-limiting device X) to the right, v (Y) up. Painted with QPainter (no GL).
#include <QWidget>

class QLabel;
class QPushButton;
class QSlider;

namespace penumbra::gui {

class PlanModel;
class BevCanvas;

class BevPanel : public QWidget {
  Q_OBJECT
public:
  explicit BevPanel(PlanModel* plan, QWidget* parent = nullptr);

  int layer() const;
  void setLayer(int layer);
  /// Spot selected in the shown layer, or -1.
  int selectedSpot() const;
  /// Number of target-outline segments drawn (0: no projection yet), for tests.
  int outlineSegments() const;
  /// Number of conformal-aperture segments drawn (photon beams; 0: open field), for tests.
  int apertureSegments() const;

public slots:
  void deleteSelectedSpot();
  void deleteShownLayer();

private:
  void refresh();
  void refreshLabel();

  PlanModel* plan_;
  BevCanvas* canvas_;
  QSlider* slider_;
  QLabel* title_;
  QLabel* layerLabel_;
  QPushButton* deleteSpot_;
  QPushButton* deleteLayer_;
};

}  // namespace penumbra::gui
