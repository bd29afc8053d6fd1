#include "gui/views/slice_view.hpp"

#include <algorithm>
#include <cmath>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <vtkCamera.h>
#include <vtkRenderer.h>

#include "gui/model/profile_model.hpp"
#include "gui/overlays/contour_display.hpp"
#include "gui/overlays/ct_slice_display.hpp"
#include "gui/overlays/slice_decorations.hpp"

namespace penumbra::gui {

SliceView::SliceView(SliceOrientation orientation, ViewState* state, QWidget* parent)
    : VtkView(parent), orientation_(orientation), state_(state) {
  setObjectName(objectNameFor(orientation));
  renderer()->SetBackground(0, 0, 0);
  renderer()->GetActiveCamera()->ParallelProjectionOn();
  connect(state, &ViewState::sceneChanged, this, [this] {
    userCamera_ = false;
    resetCamera();
  });
}

SliceView::~SliceView() {
  // Overlays remove their actors from renderer(), which VtkView's members own: delete them
  // before ~VtkView rather than with the QObject children afterwards.
  for (SliceOverlay* o : overlays_) delete o;
}

void SliceView::addOverlay(SliceOverlay* overlay) {
  overlay->setParent(this);
  overlays_.push_back(overlay);
  connect(overlay, &SliceOverlay::renderRequested, this, &VtkView::requestRender);
}

void SliceView::resetCamera() {
  const auto& scene = state_->scene();
  if (!scene) return requestRender();
  const Grid& g = scene->grid();
  const auto centre = scene->displayPoint(scene->centreIndex());
  const auto axes = cameraAxes(orientation_);
  double extent[3];
  for (int a = 0; a < 3; ++a) extent[a] = g.dims[a] * g.spacing[a];
  const double diag = std::sqrt(extent[0] * extent[0] + extent[1] * extent[1] + extent[2] * extent[2]);
  vtkCamera* cam = renderer()->GetActiveCamera();
  cam->SetFocalPoint(centre.data());
  cam->SetPosition(centre[0] - axes.directionOfProjection[0] * diag,
                   centre[1] - axes.directionOfProjection[1] * diag,
                   centre[2] - axes.directionOfProjection[2] * diag);
  cam->SetViewUp(axes.viewUp.data());
  // Screen-horizontal and -vertical extents of the slice.
  int hAxis = 0, vAxis = 1;
  if (orientation_ == SliceOrientation::Coronal) vAxis = 2;
  if (orientation_ == SliceOrientation::Sagittal) hAxis = 1, vAxis = 2;
  const double aspect = height() > 0 ? double(width()) / height() : 1.0;
  cam->SetParallelScale(1.04 * std::max(extent[vAxis] / 2, extent[hAxis] / 2 / aspect));
  requestRender();
  emit cameraChanged();
}

void SliceView::matchCamera(const SliceView& other) {
  if (other.orientation_ != orientation_ || &other == this) return;
  vtkCamera* mine = renderer()->GetActiveCamera();
  vtkCamera* theirs = other.renderer()->GetActiveCamera();
  mine->SetFocalPoint(theirs->GetFocalPoint());
  mine->SetPosition(theirs->GetPosition());
  mine->SetViewUp(theirs->GetViewUp());
  mine->SetParallelScale(theirs->GetParallelScale());
  userCamera_ = other.userCamera_;
  requestRender();
}

void SliceView::resizeEvent(QResizeEvent* e) {
  VtkView::resizeEvent(e);
  // Keep the slice fitted until the user zooms or pans.
  if (!userCamera_) resetCamera();
}

void SliceView::beforeRender() {
  renderer()->ResetCameraClippingRange();
  const int* size = renderer()->GetSize();
  for (SliceOverlay* o : overlays_) o->layout(size[0], size[1]);
}

bool SliceView::worldAt(QPoint pos, double world[3]) const {
  if (!state_->scene()) return false;
  const qreal dpr = devicePixelRatioF();
  const QSize px = framebufferSizePx();
  renderer()->SetDisplayPoint(pos.x() * dpr, px.height() - 1 - pos.y() * dpr, 0);
  renderer()->DisplayToWorld();
  double w[4];
  renderer()->GetWorldPoint(w);
  if (w[3] == 0) return false;
  for (int a = 0; a < 3; ++a) world[a] = w[a] / w[3];
  return true;
}

QPointF SliceView::displayPixelOf(QPoint pos) const {
  const qreal dpr = devicePixelRatioF();
  return QPointF(pos.x() * dpr, framebufferSizePx().height() - 1 - pos.y() * dpr);
}

SliceOverlay* SliceView::handleAt(QPoint pos) const {
  const QPointF d = displayPixelOf(pos);
  for (SliceOverlay* o : overlays_)
    if (o->handleAt(d.x(), d.y())) return o;
  return nullptr;
}

bool SliceView::indexAt(QPoint pos, Vec3& ijk) const {
  double world[3];
  if (!worldAt(pos, world)) return false;
  ijk = state_->scene()->indexOfDisplayPoint(world);
  ijk[normalAxis(orientation_)] = state_->sliceIndex(orientation_);
  return true;
}

QString SliceView::describePosition(QPoint pos) const {
  Vec3 ijk;
  if (!indexAt(pos, ijk)) return tr("No patient");
  const auto& scene = state_->scene();
  const Vec3 p = scene->worldOf(ijk);
  int hu = 0;
  const QString where = tr("%1  x %2  y %3  z %4 mm (LPS)")
                            .arg(QString::fromUtf8(displayName(orientation_)))
                            .arg(p.x, 0, 'f', 1)
                            .arg(p.y, 0, 'f', 1)
                            .arg(p.z, 0, 'f', 1);
  if (!scene->huAt(ijk, hu)) return where + tr("   outside the CT");
  // The voxel as numbered in the imported series (k = slice in file order), not the
  // display grid's index, which differs for feet-first or prone series.
  const Vec3 v = scene->importIndexOf(ijk);
  return where + tr("   voxel (%1, %2, %3)   %4 HU")
                     .arg(std::lround(v.x))
                     .arg(std::lround(v.y))
                     .arg(std::lround(v.z))
                     .arg(hu);
}

void SliceView::reportCursor(QPoint pos) {
  emit cursorInfoChanged(describePosition(pos));
  Vec3 ijk;
  if (indexAt(pos, ijk)) emit cursorIndexChanged(ijk.x, ijk.y, ijk.z);
}

void SliceView::setCrosshairAt(QPoint pos) {
  Vec3 ijk;
  if (indexAt(pos, ijk)) state_->setCrosshair(ijk);
}

void SliceView::zoomBy(double factor) {
  vtkCamera* cam = renderer()->GetActiveCamera();
  cam->SetParallelScale(std::clamp(cam->GetParallelScale() / factor, 1.0, 1e5));
  userCamera_ = true;
  requestRender();
  emit cameraChanged();
}

void SliceView::mousePressEvent(QMouseEvent* e) {
  pressPos_ = lastPos_ = e->position().toPoint();
  double side = 1;
  Drag handle = Drag::None;
  if (e->button() == Qt::LeftButton && profile_ && profile_->toolActive() && indexAt(pressPos_, profileStart_)) {
    drag_ = Drag::Profile;
  } else if (e->button() == Qt::LeftButton && (handle_ = handleAt(pressPos_))) {
    drag_ = Drag::Handle;
  } else if (e->button() == Qt::LeftButton && !(e->modifiers() & Qt::ShiftModifier) &&
             (handle = beamHandleAt(pressPos_, side)) != Drag::None) {
    drag_ = handle;
    axisSide_ = side;
    setCursor(Qt::ClosedHandCursor);
  } else if (e->button() == Qt::LeftButton) {
    drag_ = (e->modifiers() & Qt::ShiftModifier) ? Drag::Crosshair : Drag::Pending;
    if (drag_ == Drag::Crosshair) setCrosshairAt(pressPos_);
  } else if (e->button() == Qt::MiddleButton) {
    drag_ = Drag::Pan;
  } else if (e->button() == Qt::RightButton) {
    drag_ = Drag::Zoom;
  }
  e->accept();
}

void SliceView::mouseMoveEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  const QPoint delta = pos - lastPos_;
  if (drag_ == Drag::Pending && (pos - pressPos_).manhattanLength() > 3) drag_ = Drag::WindowLevel;
  switch (drag_) {
    case Drag::WindowLevel: {
      WindowLevel wl = state_->windowLevel();
      const double step = std::max(1.0, wl.window / 256.0);
      wl.window += delta.x() * step;
      wl.level -= delta.y() * step;
      state_->setWindowLevel(wl);
      break;
    }
    case Drag::Crosshair: setCrosshairAt(pos); break;
    case Drag::Pan: {
      double a[3], b[3];
      if (worldAt(lastPos_, a) && worldAt(pos, b)) {
        vtkCamera* cam = renderer()->GetActiveCamera();
        double f[3], p[3];
        cam->GetFocalPoint(f);
        cam->GetPosition(p);
        for (int i = 0; i < 3; ++i) f[i] -= b[i] - a[i], p[i] -= b[i] - a[i];
        cam->SetFocalPoint(f);
        cam->SetPosition(p);
        userCamera_ = true;
        requestRender();
        emit cameraChanged();
      }
      break;
    }
    case Drag::Zoom: zoomBy(std::pow(1.01, -delta.y())); break;
    case Drag::Profile: {
      Vec3 end;
      // The line follows the mouse (the Profile panel replots as it moves).
      if ((pos - pressPos_).manhattanLength() > 3 && indexAt(pos, end)) profile_->setLine(orientation_, profileStart_, end);
      break;
    }
    case Drag::Handle: {
      const QPointF d = displayPixelOf(pos);
      handle_->dragHandleTo(d.x(), d.y());
      break;
    }
    case Drag::Isocentre:
    case Drag::BeamAxis: dragBeam(pos); break;
    case Drag::None: {
      // Hovering: say which handle a press would take (an overlay's handle - the swipe
      // divider - first, then the current beam's isocentre cross or axis).
      double side = 1;
      const Drag h = handleAt(pos) ? Drag::Handle : beamHandleAt(pos, side);
      if (h == Drag::Handle) setCursor(Qt::SplitHCursor);
      else if (h == Drag::None) unsetCursor();
      else setCursor(h == Drag::Isocentre ? Qt::SizeAllCursor : Qt::OpenHandCursor);
      break;
    }
    case Drag::Pending: break;
  }
  lastPos_ = pos;
  reportCursor(pos);
}

void SliceView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && drag_ == Drag::Pending) setCrosshairAt(e->position().toPoint());
  const bool beam = drag_ == Drag::Isocentre || drag_ == Drag::BeamAxis;
  drag_ = Drag::None;
  handle_ = nullptr;
  if (beam) {
    unsetCursor();
    emit beamDragFinished();
  }
}

void SliceView::wheelEvent(QWheelEvent* e) {
  if (e->modifiers() & Qt::ControlModifier) {
    zoomBy(std::pow(1.1, e->angleDelta().y() / 120.0));
  } else {
    wheelAccumulator_ += e->angleDelta().y();
    const int steps = wheelAccumulator_ / 120;
    wheelAccumulator_ -= steps * 120;
    if (steps) state_->stepSlice(orientation_, steps);
    reportCursor(e->position().toPoint());
  }
  e->accept();
}

void SliceView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_PageUp:
    case Qt::Key_Up: state_->stepSlice(orientation_, +1); break;
    case Qt::Key_PageDown:
    case Qt::Key_Down: state_->stepSlice(orientation_, -1); break;
    case Qt::Key_R:
      userCamera_ = false;
      resetCamera();
      break;
    default: VtkView::keyPressEvent(e); return;
  }
  e->accept();
}

SliceView* createStandardSliceView(SliceOrientation orientation, ViewState* state,
                                   QWidget* parent) {
  auto* view = new SliceView(orientation, state, parent);
  vtkRenderer* r = view->renderer();
  view->addOverlay(new CtSliceDisplay(r, state, orientation));
  view->addOverlay(new ContourDisplay(r, state, orientation));
  view->addOverlay(new CrosshairDisplay(r, state, orientation));
  view->addOverlay(new SliceAnnotationDisplay(r, state, orientation));
  return view;
}

}  // namespace penumbra::gui
