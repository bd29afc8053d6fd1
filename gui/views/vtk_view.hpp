#pragma once
/// A QOpenGLWidget that hosts a vtkGenericOpenGLRenderWindow (PLATFORM.md: Debian's VTK Qt
/// module is Qt 5 only). Rendering happens on the GUI thread only, inside paintGL().
///
/// Displays call requestRender(); requests are coalesced into one paintGL() per frame by
/// QOpenGLWidget::update(), and a view that took d ms to render waits d ms before its next
/// one (slow software GL leaves the event loop half its time). renderNow() renders
/// synchronously (benchmarks, screenshots).
///
/// VTK frees a prop's GL objects when the prop leaves the renderer (RemoveViewProp), which the
/// overlays do outside paintGL. Vertex array objects are per context, so the view answers VTK's
/// MakeCurrent (and IsCurrent truthfully): removeViewProp() in slice_overlay.hpp makes this
/// view's context current first. Before, the ids were freed in whichever view had painted
/// last, and that view's text labels and images with the same ids stopped being drawn.
#include <QElapsedTimer>
#include <QOpenGLWidget>
#include <QTimer>
#include <vtkSmartPointer.h>

class vtkGenericOpenGLRenderWindow;
class vtkObject;
class vtkRenderer;

namespace penumbra::gui {

class VtkView : public QOpenGLWidget {
  Q_OBJECT
public:
  explicit VtkView(QWidget* parent = nullptr);
  ~VtkView() override;

  vtkRenderer* renderer() const;
  vtkGenericOpenGLRenderWindow* renderWindow() const;

  /// Number of VTK renders done so far (tests wait on it instead of sleeping).
  int renderCount() const { return renderCount_; }
  /// Size of the GL framebuffer in device pixels.
  QSize framebufferSizePx() const;

  /// The default QSurfaceFormat VTK needs (OpenGL 3.2 core, 24-bit depth, no multisampling).
  /// Call before constructing the QApplication.
  static void setDefaultSurfaceFormat();

public slots:
  /// Coalesced: many calls before the next frame give one render.
  void requestRender();
  /// Renders now and waits for the GL pipeline to finish (glFinish). Returns false when the
  /// widget has no GL context yet (never shown).
  bool renderNow();

signals:
  void rendered();

protected:
  /// Hook for subclasses to update camera clipping etc. right before VTK renders.
  virtual void beforeRender() {}

  void initializeGL() override;
  void resizeGL(int w, int h) override;
  void paintGL() override;

private:
  void renderVtk();
  /// vtkGenericOpenGLRenderWindow's WindowMakeCurrentEvent / WindowIsCurrentEvent.
  void onMakeCurrent(vtkObject*, unsigned long, void*);
  void onIsCurrent(vtkObject*, unsigned long, void* isCurrent);

  vtkSmartPointer<vtkGenericOpenGLRenderWindow> renderWindow_;
  vtkSmartPointer<vtkRenderer> renderer_;
  int renderCount_ = 0;
  bool initialized_ = false;
  QTimer frameTimer_;          ///< books a deferred frame (requestRender)
  QElapsedTimer sinceRender_;  ///< since the last render ended
  qint64 lastRenderMs_ = 0;    ///< how long it took [ms]
};

}  // namespace penumbra::gui
