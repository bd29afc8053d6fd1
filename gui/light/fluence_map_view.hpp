#pragma once
/// The fluence map of the light-dose panel: an MCML fluence array phi[r][z] drawn with QPainter
/// as an image over r (horizontal, cm) and z (vertical, depth downward, cm) in a logarithmic
/// colour scale (viridis), with a colour bar, the layer interfaces (dashed) and isofluence lines
/// at chosen levels (Lo et al., GPU-MCML for PDT, 2009, Figure 6: 1000, 100, 10, 1, 0.01 and
/// 1e-5 cm^-2). Units are MCML's: fluence per launched packet weight [cm^-2], i.e. J cm^-2 per
/// J of incident light. MCML's last r and z bins collect everything beyond the grid; they are
/// not drawn and take no part in the contours or the colour range; nor are the depths below the
/// tissue (the ambient medium, where nothing is tallied).
#include <vector>

#include <QImage>
#include <QWidget>

#include "gui/overlays/marching_squares.hpp"  // Segment2

namespace penumbra::gui {

/// "1000", "0.01", "1e-5": a contour level as the user types it.
QString formatLevel(double v);

/// Iso-line of a scalar field f sampled at integer points (u, v), 0 <= u < nu, 0 <= v < nv,
/// stored f[u * nv + v], at `level`, by marching squares with linear interpolation along the
/// cell edges (saddles resolved by the cell's mean). Coordinates as for Segment2.
std::vector<Segment2> scalarIsoline(const std::vector<double>& f, int nu, int nv, double level);

class FluenceMapView : public QWidget {
  Q_OBJECT
 public:
  explicit FluenceMapView(QWidget* parent = nullptr);

  /// fluence[ir * nz + iz] in cm^-2 (engine layout); interfaces: depths of the layer
  /// boundaries below the surface [cm], the last one the bottom of the tissue. Recomputes the
  /// image, colour range and contours.
  void setData(const std::vector<double>& fluence, int nr, int nz, double dr, double dz,
               const std::vector<double>& interfaces);
  void clear();
  /// Isofluence levels [cm^-2]; non-positive values are ignored.
  void setLevels(const std::vector<double>& levels);
  const std::vector<double>& levels() const { return levels_; }

  bool hasData() const { return nu_ > 0 && nv_ > 0; }
  /// Bins drawn (the grid less MCML's overflow bins, down to the bottom of the tissue).
  int drawnRadialBins() const { return nu_; }
  int drawnDepthBins() const { return nv_; }
  /// Fluence of bin (ir, iz) as drawn [cm^-2].
  double value(int ir, int iz) const { return values_[std::size_t(ir) * nv_ + iz]; }
  /// Colour-scale limits [cm^-2] (powers of ten).
  double colourMin() const { return lo_; }
  double colourMax() const { return hi_; }
  /// Contour segments found for levels()[i] (0 when the level lies outside the data).
  int contourSegmentCount(int i) const;

 signals:
  /// Read-out under the mouse ("r 0.105 cm, z 0.031 cm: 12.3 cm^-2"), empty outside the map.
  void hovered(const QString& text);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  QRect plotRect() const;
  void rebuildImage();
  void rebuildContours();

  std::vector<double> values_;  ///< drawn bins, [iu * nv_ + iv]
  std::vector<double> log10_;   ///< log10 of values_, zero bins at a floor far below lo_
  int nu_ = 0, nv_ = 0;
  double dr_ = 0, dz_ = 0;
  std::vector<double> interfaces_;
  double lo_ = 1, hi_ = 10;
  QImage image_;
  std::vector<double> levels_;
  std::vector<std::vector<Segment2>> contours_;
};

}  // namespace penumbra::gui
