#include "gui/views/vtk_view.hpp"

#include <QOpenGLContext>
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

void VtkView::requestRender() { update(); }

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
