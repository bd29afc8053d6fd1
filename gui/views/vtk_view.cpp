#include "gui/views/vtk_view.hpp"

#include <algorithm>

#include <QOpenGLContext>
#include <QElapsedTimer>
#include <QOpenGLFunctions>
#include <QSurfaceFormat>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>

namespace penumbra::gui {

VtkView::VtkView(QWidget* parent)
    : QOpenGLWidget(parent),
      renderWindow_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()) {
  renderWindow_->AddRenderer(renderer_);
  renderWindow_->AddObserver(vtkCommand::WindowMakeCurrentEvent, this, &VtkView::onMakeCurrent);
  renderWindow_->AddObserver(vtkCommand::WindowIsCurrentEvent, this, &VtkView::onIsCurrent);
  renderWindow_->SetMultiSamples(0);  // image comparisons need deterministic edges (STYLE.md)
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumSize(160, 160);
  frameTimer_.setSingleShot(true);
  connect(&frameTimer_, &QTimer::timeout, this, [this] { update(); });
}

VtkView::~VtkView() {
  // Release VTK's GL resources while our context still exists.
  if (initialized_ && context()) {
    makeCurrent();
    renderWindow_->Finalize();
    doneCurrent();
  }
}

void VtkView::onMakeCurrent(vtkObject*, unsigned long, void*) {
  // Inside paintGL (and grabFramebuffer) the context is current with the framebuffer Qt bound
  // for this frame; makeCurrent() would bind the widget's own one instead.
  if (initialized_ && context() && QOpenGLContext::currentContext() != context()) makeCurrent();
}

void VtkView::onIsCurrent(vtkObject*, unsigned long, void* isCurrent) {
  *static_cast<bool*>(isCurrent) = initialized_ && context() && QOpenGLContext::currentContext() == context();
}

vtkRenderer* VtkView::renderer() const { return renderer_; }
vtkGenericOpenGLRenderWindow* VtkView::renderWindow() const { return renderWindow_; }

void VtkView::setDefaultSurfaceFormat() {
  QSurfaceFormat fmt;
  fmt.setRenderableType(QSurfaceFormat::OpenGL);
  fmt.setVersion(3, 2);
  fmt.setProfile(QSurfaceFormat::CoreProfile);
  fmt.setDepthBufferSize(24);
  fmt.setStencilBufferSize(8);
  fmt.setSamples(0);
  QSurfaceFormat::setDefaultFormat(fmt);
}

QSize VtkView::framebufferSizePx() const {
  const qreal dpr = devicePixelRatioF();
  return QSize(qRound(width() * dpr), qRound(height() * dpr));
}

void VtkView::requestRender() {
  if (frameTimer_.isActive()) return;  // a later frame is booked: it draws this request too
  // A view that took d ms to render waits d ms before its next render, so its rendering never
  // takes more than half of the event loop's time. Measured in gui.live_dose under Xvfb
  // (software GL, the 3D view 20-40 ms a frame): a beam edit and a queued dose surface asked
  // for two 3D renders that ran back to back in one pass of the event loop (110 ms).
  const qint64 wait = lastRenderMs_ - (sinceRender_.isValid() ? sinceRender_.elapsed() : lastRenderMs_);
  if (wait <= 0) return update();
  frameTimer_.start(int(wait));
}

void VtkView::initializeGL() {
  renderWindow_->SetOwnContext(false);
  renderWindow_->SetFrameBlitModeToBlitToCurrent();
  renderWindow_->SetReadyForRendering(false);
  renderWindow_->InitializeFromCurrentContext();
  const QSize px = framebufferSizePx();
  renderWindow_->SetSize(px.width(), px.height());
  initialized_ = true;
}

void VtkView::resizeGL(int w, int h) {
  const qreal dpr = devicePixelRatioF();
  renderWindow_->SetSize(qRound(w * dpr), qRound(h * dpr));
}

void VtkView::paintGL() { renderVtk(); }

void VtkView::renderVtk() {
  if (!initialized_) return;
  QElapsedTimer took;
  took.start();
  beforeRender();
  // Qt may have touched GL state between frames (its compositor uses the same context
  // share group); make VTK's state cache re-read it.
  vtkOpenGLState* state = renderWindow_->GetState();
  state->Reset();
  state->Push();
  renderWindow_->SetReadyForRendering(true);
  renderWindow_->SetIsCurrent(true);
  renderWindow_->Render();
  renderWindow_->SetReadyForRendering(false);
  state->Pop();
  lastRenderMs_ = std::min<qint64>(took.elapsed(), 100);  // a slow first frame must not stall the next
  sinceRender_.start();
  ++renderCount_;
  emit rendered();
}

bool VtkView::renderNow() {
  if (!initialized_ || !context()) return false;
  makeCurrent();
  renderVtk();
  context()->functions()->glFinish();
  doneCurrent();
  return true;
}

}  // namespace penumbra::gui
