// SliceView's beam handles (declared in slice_view.hpp): the current beam's isocentre cross
// (every slice view) and its central axis (axial view) can be dragged. The drawing is
// BeamSliceDisplay's; this file only finds what is under the mouse and turns a drag into
// PlanModel::setGeometry calls, one per mouse move, which the live dose merges and coalesces.
#include <cmath>

#include <vtkRenderer.h>

#include "gui/model/plan_model.hpp"
#include "gui/views/slice_view.hpp"

namespace penumbra::gui {

namespace {
/// How close the mouse must come to a handle [logical px]: the cross's arms are 6 mm, a few
/// pixels at the usual zoom, so the grab radius is what makes them easy to hit.
constexpr double kHandlePx = 7;

double roundTo(double v, double step) { return std::round(v / step) * step; }
}  // namespace

bool SliceView::widgetPosOf(const Vec3& lps, QPointF& pos) const {
  const auto& scene = state_->scene();
  if (!scene) return false;
  Vec3 ijk = scene->grid().worldToIndex(lps);
  ijk[normalAxis(orientation_)] = state_->sliceIndex(orientation_);
  const auto p = scene->displayPoint(ijk);
  renderer()->SetWorldPoint(p[0], p[1], p[2], 1.0);
  renderer()->WorldToDisplay();
  double d[3];
  renderer()->GetDisplayPoint(d);
  const qreal dpr = devicePixelRatioF();
  pos = QPointF(d[0] / dpr, (framebufferSizePx().height() - 1 - d[1]) / dpr);
  return true;
}

bool SliceView::gantryTowards(const Vec3& towardsSource, double couchDeg, double& gantryDeg) {
  // makeBeamFrame's source direction in LPS is (cos c sin g, -cos g, -sin c sin g) (IEC 61217,
  // head-first supine): in the axial plane (cos c sin g, -cos g), which gives g up to the
  // couch's foreshortening of the x component.
  const double cc = std::cos(couchDeg * M_PI / 180.0);
  const double x = towardsSource.x, y = towardsSource.y;
  if (std::abs(cc) < 0.1 || std::hypot(x, y) < 1e-9) return false;
  gantryDeg = std::atan2(x / cc, -y) * 180.0 / M_PI;
  if (gantryDeg < 0) gantryDeg += 360;
  return true;
}

SliceView::Drag SliceView::beamHandleAt(QPoint pos, double& side) const {
  const int b = plan_ && state_->scene() ? plan_->currentBeam() : -1;
  if (b < 0) return Drag::None;
  const PlannedBeam& p = plan_->beam(b);
  const proton::BeamFrame f = beamFrame(p);
  QPointF iso, source;
  if (!widgetPosOf(f.isocenter, iso) || !widgetPosOf(f.source, source)) return Drag::None;
  const QPointF d = QPointF(pos) - iso;
  const double toIso = std::hypot(d.x(), d.y());
  if (toIso <= kHandlePx) return Drag::Isocentre;
  double unused = 0;
  // The axis: away from the cross (so the two handles never overlap), in the axial view only,
  // and only while the gantry can steer it there.
  if (orientation_ != SliceOrientation::Axial || toIso < 3 * kHandlePx ||
      !gantryTowards(Vec3{0, -1, 0}, p.beam.couchDeg, unused))
    return Drag::None;
  const QPointF a = source - iso;
  const double len = std::hypot(a.x(), a.y());
  if (len < 1e-6) return Drag::None;
  const double along = (d.x() * a.x() + d.y() * a.y()) / len;
  const double across = std::abs(d.x() * a.y() - d.y() * a.x()) / len;
  if (across > kHandlePx) return Drag::None;
  side = along >= 0 ? 1 : -1;
  return Drag::BeamAxis;
}

void SliceView::dragBeam(QPoint pos) {
  const int b = plan_ ? plan_->currentBeam() : -1;
  Vec3 ijk;
  if (b < 0 || !indexAt(pos, ijk)) return;
  const auto& scene = state_->scene();
  const PlannedBeam& p = plan_->beam(b);
  if (drag_ == Drag::Isocentre) {
    // In the slice plane only: the isocentre keeps its depth along the view's normal.
    const int n = normalAxis(orientation_);
    ijk[n] = scene->grid().worldToIndex(p.beam.isocenter)[n];
    Vec3 iso = scene->worldOf(ijk);
    for (int a = 0; a < 3; ++a) iso[a] = roundTo(iso[a], 0.1);  // the editor's precision
    plan_->setGeometry(b, p.beam.gantryDeg, p.beam.couchDeg, iso);
    return;
  }
  double gantry = 0;
  if (!gantryTowards(axisSide_ * (scene->worldOf(ijk) - p.beam.isocenter), p.beam.couchDeg, gantry)) return;
  gantry = roundTo(gantry, 0.1);
  if (gantry >= 360) gantry -= 360;
  plan_->setGeometry(b, gantry, p.beam.couchDeg, p.beam.isocenter);
}

}  // namespace penumbra::gui
