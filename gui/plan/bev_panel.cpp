#include "gui/plan/bev_panel.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/overlays/beam_display.hpp"
#include "gui/overlays/marching_squares.hpp"

namespace penumbra::gui {

namespace {
/// Closed polygons (BEV mm) as line segments.
std::vector<QLineF> polygonLines(const BevPolygons& polygons) {
  std::vector<QLineF> out;
  for (const auto& poly : polygons)
    for (std::size_t i = 0; i < poly.size(); ++i) {
      const auto& a = poly[i];
      const auto& b = poly[(i + 1) % poly.size()];
      out.emplace_back(a[0], a[1], b[0], b[1]);
    }
  return out;
}

/// Outline of the rays of `p` for which `hit(intervals)` holds, in BEV mm.
std::vector<QLineF> projectionOutline(const proton::BevTargetProjection& p,
                                      const std::function<bool(const std::vector<proton::WeplInterval>&)>& hit) {
  Grid g;
  g.dims = {p.nA, p.nB, 1};
  Mask m(g);
  for (int ib = 0; ib < p.nB; ++ib)
    for (int ia = 0; ia < p.nA; ++ia) m.at(ia, ib, 0) = hit(p.at(ia, ib)) ? 1 : 0;
  std::vector<QLineF> out;
  const MaskBounds bounds = maskBounds(m);
  if (bounds.empty()) return out;
  for (const Segment2& s : maskSliceContour(m, bounds, 2, 0))
    out.emplace_back(p.a0 + s.u0 * p.spacingMm, p.b0 + s.v0 * p.spacingMm, p.a0 + s.u1 * p.spacingMm,
                     p.b0 + s.v1 * p.spacingMm);
  return out;
}
}  // namespace

class BevCanvas : public QWidget {
public:
  explicit BevCanvas(PlanModel* plan) : plan_(plan) {
    setObjectName("bevCanvas");
    setMinimumSize(220, 220);
    setFocusPolicy(Qt::ClickFocus);
  }
  void setLayer(int l) { layer_ = l, selected_ = -1, rebuild(); }
  int layer() const { return layer_; }
  int selected() const { return selected_; }
  int outlineSegments() const { return int(outline_.size()); }
  int apertureSegments() const { return int(aperture_.size()); }
  void rebuild() {
    outline_.clear();
    slab_.clear();
    aperture_.clear();
    jaws_.clear();
    const int b = plan_->currentBeam();
    if (b >= 0 && plan_->beam(b).isPhoton()) {
      const PhotonField& f = plan_->beam(b).photon;
      outline_ = polygonLines(f.targetOutline);
      aperture_ = polygonLines(f.beam.aperture);
      const photon::PhotonBeam& j = f.beam;
      jaws_ = polygonLines({{{j.x1Mm, j.y1Mm}, {j.x2Mm, j.y1Mm}, {j.x2Mm, j.y2Mm}, {j.x1Mm, j.y2Mm}}});
    } else if (b >= 0 && plan_->beam(b).projection) {
      const PlannedBeam& p = plan_->beam(b);
      outline_ = projectionOutline(*p.projection, [](const auto& v) { return !v.empty(); });
      if (layer_ >= 0 && layer_ < int(p.layerRangesMm.size())) {
        // The target slice this layer treats (spot_generation.hpp, step 3).
        const double r = p.layerRangesMm[std::size_t(layer_)], h = 0.5 * p.layerSpacingMm;
        const double prox = p.options.proximalMarginMm, dist = p.options.distalMarginMm;
        slab_ = projectionOutline(*p.projection, [&](const auto& v) {
          for (const auto& i : v)
            if (i.entryMm - prox <= r + h && i.exitMm + dist >= r - h) return true;
          return false;
        });
      }
    }
    update();
  }
  std::function<void()> onSelection;

protected:
  /// BEV mm -> widget pixels (v up), fitted to the target and spots of the beam.
  QTransform view() const {
    double lo[2] = {-30, -30}, hi[2] = {30, 30};
    const int b = plan_->currentBeam();
    if (b >= 0) {
      const FieldExtent e = fieldExtent(plan_->beam(b));
      lo[0] = e.aMin, hi[0] = e.aMax, lo[1] = e.bMin, hi[1] = e.bMax;
      for (const auto* lines : {&outline_, &aperture_, &jaws_})
        for (const QLineF& l : *lines)
          for (QPointF q : {l.p1(), l.p2()})
            lo[0] = std::min(lo[0], q.x()), hi[0] = std::max(hi[0], q.x()), lo[1] = std::min(lo[1], q.y()),
            hi[1] = std::max(hi[1], q.y());
    }
    const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], 10.0}) * 1.15;
    const double scale = std::min(width(), height() - 20) / span;
    QTransform t;
    t.translate(width() / 2.0, (height() - 20) / 2.0 + 20);
    t.scale(scale, -scale);
    t.translate(-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2);
    return t;
  }
  const proton::EnergyLayer* shownLayer() const {
    const int b = plan_->currentBeam();
    if (b < 0 || layer_ < 0 || layer_ >= int(plan_->beam(b).beam.layers.size())) return nullptr;
    return &plan_->beam(b).beam.layers[std::size_t(layer_)];
  }
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), QColor(16, 18, 24));
    const QTransform t = view();
    const double mmPx = t.m11();
    // Central axis cross and a 10 mm scale bar.
    p.setPen(QPen(QColor(90, 90, 100), 1, Qt::DotLine));
    p.drawLine(t.map(QLineF(-1e3, 0, 1e3, 0)));
    p.drawLine(t.map(QLineF(0, -1e3, 0, 1e3)));
    p.setPen(QPen(QColor(200, 200, 200), 2));
    p.drawLine(QPointF(10, height() - 10), QPointF(10 + 10 * mmPx, height() - 10));
    p.drawText(QPointF(14 + 10 * mmPx, height() - 6), tr("10 mm"));
    p.drawText(QPointF(width() - 60, height() - 6), tr("u (X) →"));
    p.drawText(QPointF(width() - 60, 16), tr("v (Y) ↑"));
    // Target outline (solid) and this layer's target slice (dashed).
    p.setPen(QPen(QColor(255, 60, 60), 2));
    for (const QLineF& l : outline_) p.drawLine(t.map(l));
    p.setPen(QPen(QColor(255, 160, 60), 1.5, Qt::DashLine));
    for (const QLineF& l : slab_) p.drawLine(t.map(l));
    const int b = plan_->currentBeam();
    if (b >= 0 && plan_->beam(b).isPhoton()) return paintPhotonField(p, t);
    const proton::EnergyLayer* layer = shownLayer();
    if (!layer) {
      p.setPen(QColor(220, 220, 220));
      p.drawText(rect().adjusted(8, 24, -8, -8), Qt::AlignTop | Qt::TextWordWrap,
                 plan_->currentBeam() < 0 ? tr("No beam") : tr("No spots: generate spots for this beam."));
      return;
    }
    // Weights relative to the beam's heaviest spot, so that layers compare.
    double wMax = 0;
    for (const auto& l : plan_->beam(plan_->currentBeam()).beam.layers)
      for (const auto& s : l.spots) wMax = std::max(wMax, s.weight);
    // Scan path in delivery order, then the spots on top.
    QPolygonF path;
    for (const auto& s : layer->spots) path << t.map(QPointF(s.x, s.y));
    p.setPen(QPen(QColor(170, 170, 190), 1));
    p.drawPolyline(path);
    for (std::size_t i = 0; i < layer->spots.size(); ++i) {
      const auto& s = layer->spots[i];
      const double f = wMax > 0 ? s.weight / wMax : 1;
      // Colour (blue-green-yellow) and area both grow with the weight.
      const auto c = colorMapAt(DoseColorMap::Dose, 0.1 + 0.55 * f);
      const double r = std::max(2.0, 0.17 * mmPx * plan_->beam(plan_->currentBeam()).options.spotSpacingMm *
                                          std::sqrt(f));
      p.setBrush(QColor::fromRgbF(c[0], c[1], c[2]));
      p.setPen(int(i) == selected_ ? QPen(Qt::white, 2) : QPen(Qt::NoPen));
      p.drawEllipse(path[int(i)], r, r);
    }
  }
  /// Photon beams: the jaws (yellow rectangle) and the conformal aperture (cyan), over the
  /// target outline drawn above, and a line saying how the field is shaped.
  void paintPhotonField(QPainter& p, const QTransform& t) {
    p.setPen(QPen(QColor(255, 220, 60), 2));
    for (const QLineF& l : jaws_) p.drawLine(t.map(l));
    p.setPen(QPen(QColor(60, 220, 255), 2));
    for (const QLineF& l : aperture_) p.drawLine(t.map(l));
    const PhotonField& f = plan_->beam(plan_->currentBeam()).photon;
    p.setPen(QColor(220, 220, 220));
    QString note = f.apertureTarget.isEmpty() ? tr("Open field (jaws)")
                                              : tr("Aperture: %1 + %2 mm").arg(f.apertureTarget).arg(f.apertureMarginMm);
    if (f.shapesStale) note += tr(" (outdated: the geometry changed)");
    p.drawText(rect().adjusted(8, 4, -8, -8), Qt::AlignTop | Qt::AlignLeft, note);
  }
  void mousePressEvent(QMouseEvent* e) override {
    const proton::EnergyLayer* layer = shownLayer();
    if (!layer) return;
    const QPointF at = view().inverted().map(e->position());
    double best = 1e300;
    selected_ = -1;
    for (std::size_t i = 0; i < layer->spots.size(); ++i) {
      const double d = std::hypot(layer->spots[i].x - at.x(), layer->spots[i].y - at.y());
      if (d < best && d < 0.6 * plan_->beam(plan_->currentBeam()).options.spotSpacingMm)
        best = d, selected_ = int(i);
    }
    update();
    if (onSelection) onSelection();
  }
  void keyPressEvent(QKeyEvent* e) override {
    if ((e->key() == Qt::Key_Delete || e->key() == Qt::Key_Backspace) && selected_ >= 0 && onDelete)
      return onDelete();
    QWidget::keyPressEvent(e);
  }

public:
  std::function<void()> onDelete;

private:
  PlanModel* plan_;
  int layer_ = 0;
  int selected_ = -1;
  std::vector<QLineF> outline_, slab_, aperture_, jaws_;
};

BevPanel::BevPanel(PlanModel* plan, QWidget* parent)
    : QWidget(parent), plan_(plan), canvas_(new BevCanvas(plan)) {
  setObjectName("bevPanel");
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel;
  title_->setObjectName("bevTitleLabel");
  v->addWidget(title_);
  v->addWidget(canvas_, 1);
  auto* row = new QHBoxLayout;
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setObjectName("bevLayerSlider");
  slider_->setRange(0, 0);
  layerLabel_ = new QLabel;
  layerLabel_->setObjectName("bevLayerLabel");
  row->addWidget(new QLabel(tr("Layer")));
  row->addWidget(slider_, 1);
  v->addLayout(row);
  v->addWidget(layerLabel_);
  auto* buttons = new QHBoxLayout;
  deleteSpot_ = new QPushButton(tr("Delete spot"));
  deleteSpot_->setObjectName("deleteSpotButton");
  deleteLayer_ = new QPushButton(tr("Delete layer"));
  deleteLayer_->setObjectName("bevDeleteLayerButton");
  buttons->addWidget(deleteSpot_);
  buttons->addWidget(deleteLayer_);
  v->addLayout(buttons);
  connect(slider_, &QSlider::valueChanged, this, [this](int l) {
    canvas_->setLayer(l);
    refreshLabel();
  });
  connect(deleteSpot_, &QPushButton::clicked, this, &BevPanel::deleteSelectedSpot);
  connect(deleteLayer_, &QPushButton::clicked, this, &BevPanel::deleteShownLayer);
  canvas_->onSelection = [this] { refreshLabel(); };
  canvas_->onDelete = [this] { deleteSelectedSpot(); };
  connect(plan, &PlanModel::planChanged, this, &BevPanel::refresh);
  connect(plan, &PlanModel::currentBeamChanged, this, &BevPanel::refresh);
  refresh();
}

int BevPanel::layer() const { return slider_->value(); }
void BevPanel::setLayer(int layer) { slider_->setValue(layer); }
int BevPanel::selectedSpot() const { return canvas_->selected(); }
int BevPanel::outlineSegments() const { return canvas_->outlineSegments(); }
int BevPanel::apertureSegments() const { return canvas_->apertureSegments(); }

void BevPanel::refresh() {
  const int b = plan_->currentBeam();
  const int layers = b >= 0 ? int(plan_->beam(b).beam.layers.size()) : 0;
  const int keep = std::min(slider_->value(), std::max(0, layers - 1));
  slider_->blockSignals(true);
  slider_->setRange(0, std::max(0, layers - 1));
  slider_->setValue(keep);
  slider_->blockSignals(false);
  slider_->setEnabled(layers > 1);
  canvas_->setLayer(layers > 0 ? keep : -1);
  if (b >= 0 && plan_->beam(b).isPhoton()) {
    const auto& p = plan_->beam(b);
    title_->setText(tr("%1 (photons): gantry %2°, couch %3°, collimator %4°, target %5")
                        .arg(QString::fromStdString(p.beam.name)).arg(p.beam.gantryDeg).arg(p.beam.couchDeg)
                        .arg(p.photon.beam.collimatorDeg).arg(p.targetName.isEmpty() ? tr("-") : p.targetName));
  } else if (b >= 0) {
    const auto& p = plan_->beam(b);
    title_->setText(tr("%1: gantry %2°, couch %3°, target %4")
                        .arg(QString::fromStdString(p.beam.name)).arg(p.beam.gantryDeg).arg(p.beam.couchDeg)
                        .arg(p.targetName.isEmpty() ? tr("-") : p.targetName));
  } else {
    title_->setText(tr("No beam"));
  }
  refreshLabel();
}

void BevPanel::refreshLabel() {
  const int b = plan_->currentBeam();
  const int l = canvas_->layer();
  if (b >= 0 && plan_->beam(b).isPhoton()) {
    const photon::PhotonBeam& j = plan_->beam(b).photon.beam;
    layerLabel_->setText(tr("Jaws X %1 to %2 mm, Y %3 to %4 mm; %5 MU")
                             .arg(j.x1Mm, 0, 'f', 1).arg(j.x2Mm, 0, 'f', 1).arg(j.y1Mm, 0, 'f', 1)
                             .arg(j.y2Mm, 0, 'f', 1).arg(j.monitorUnits, 0, 'f', 1));
    deleteSpot_->setEnabled(false);
    deleteLayer_->setEnabled(false);
    return;
  }
  if (b < 0 || l < 0 || l >= int(plan_->beam(b).beam.layers.size())) {
    layerLabel_->setText(tr("No layers"));
    deleteSpot_->setEnabled(false);
    deleteLayer_->setEnabled(false);
    return;
  }
  const auto& p = plan_->beam(b);
  const auto& layer = p.beam.layers[std::size_t(l)];
  QString text = tr("Layer %1/%2: %3 MeV, %4").arg(l + 1).arg(p.beam.layers.size())
                     .arg(layer.energyMeV, 0, 'f', 1).arg(countOf(qsizetype(layer.spots.size()), "spot"));
  if (l < int(p.layerRangesMm.size())) text += tr(", range %1 mm").arg(p.layerRangesMm[std::size_t(l)], 0, 'f', 1);
  if (canvas_->selected() >= 0) {
    const auto& s = layer.spots[std::size_t(canvas_->selected())];
    text += tr("; spot (%1, %2) mm, weight %3").arg(s.x, 0, 'f', 1).arg(s.y, 0, 'f', 1).arg(s.weight, 0, 'g', 3);
  }
  layerLabel_->setText(text);
  deleteSpot_->setEnabled(canvas_->selected() >= 0);
  deleteLayer_->setEnabled(true);
}

void BevPanel::deleteSelectedSpot() {
  if (canvas_->selected() < 0) return;
  plan_->removeSpot(plan_->currentBeam(), canvas_->layer(), canvas_->selected());
}

void BevPanel::deleteShownLayer() { plan_->removeLayer(plan_->currentBeam(), canvas_->layer()); }

}  // namespace penumbra::gui
