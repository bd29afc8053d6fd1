#pragma once
// Helpers shared by the GUI tests: find widgets by objectName, open the demo case through the
// same path as File > Open DICOM folder (waiting on signals, never on sleeps), and find where a
// slice view draws a point: its framebuffer pixel and the widget position a mouse event needs.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>

#include <QColor>
#include <QImage>
#include <QObject>
#include <QPointF>
#include <QRect>
#include <QSignalSpy>
#include <QString>
#include <QTest>
#include <vtkRenderer.h>

#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"
#include "test_data.hpp"

namespace penumbra::test {

template <typename T>
T* find(QObject* root, const char* name) {
  T* w = root->findChild<T*>(name);
  if (!w) qWarning("widget '%s' not found", name);
  return w;
}

/// In a test slot: skips it, naming the folder and the setting, when BOXPHANTOM is not there.
#define PENUMBRA_SKIP_WITHOUT_BOXPHANTOM()                                                     \
  do {                                                                                         \
    if (!::penumbra::test::haveData("phantoms/BOXPHANTOM"))                                     \
      QSKIP(qPrintable("test data not found: " + ::penumbra::test::boxPhantomFolder() +          \
                       " (set PENUMBRA_TEST_DATA)"));                                          \
  } while (0)

inline QString boxPhantomFolder() { return QString::fromStdString(dataPath("phantoms/BOXPHANTOM")); }

/// Opens BOXPHANTOM in `window` and waits for its scene; false on failure or timeout.
inline bool openBoxPhantom(gui::MainWindow& window, int timeoutMs) {
  QSignalSpy ready(&window, &gui::MainWindow::sceneReady);
  if (!window.openFolder(boxPhantomFolder(), {}, gui::MainWindow::ImportConfirm::Auto)) return false;
  return ready.count() > 0 || ready.wait(timeoutMs);
}

/// A main window, shown and exposed, that reports errors through signals instead of dialogs;
/// null when the window system does not expose it.
inline std::unique_ptr<gui::MainWindow> openQuietWindow() {
  auto w = std::make_unique<gui::MainWindow>();
  w->show();
  if (!QTest::qWaitForWindowExposed(w.get())) return nullptr;
  w->planning()->controller()->setShowErrorDialogs(false);
  w->planning()->fileActions()->setShowDialogs(false);
  return w;
}

/// Opens the case file `path` in `window` and waits until it is applied; false when it is
/// refused (the reason goes to the log) or the wait times out.
inline bool openCaseAndWait(gui::MainWindow& window, const QString& path, int timeoutMs) {
  QSignalSpy opened(window.planning()->fileActions(), &gui::PlanFileActions::caseOpened);
  if (!window.planning()->fileActions()->openCase(path)) return false;
  if (opened.isEmpty() && !opened.wait(timeoutMs)) return false;
  if (!opened.first().first().toBool())
    qWarning("case not opened: %s", qPrintable(opened.first().at(1).toString()));
  return opened.first().first().toBool();
}

/// Display pixel (x from the left, y from the bottom, device pixels) where `view` draws the
/// display-frame point `p` [mm] with its current camera.
inline QPointF displayPixelOf(gui::SliceView* view, const std::array<double, 3>& p) {
  vtkRenderer* r = view->renderer();
  r->SetWorldPoint(p[0], p[1], p[2], 1.0);
  r->WorldToDisplay();
  double d[3];
  r->GetDisplayPoint(d);
  return {d[0], d[1]};
}

/// The pixel of `img` (a grabFramebuffer() of `view`) where `view` draws `p`, clamped into it.
inline QColor pixelOf(const QImage& img, gui::SliceView* view, const std::array<double, 3>& p) {
  const QPointF d = displayPixelOf(view, p);
  const int x = int(std::lround(d.x())), y = int(std::lround(img.height() - 1 - d.y()));
  return img.pixelColor(std::clamp(x, 0, img.width() - 1), std::clamp(y, 0, img.height() - 1));
}

/// The framebuffer pixel of `view` where the display-frame point `p` [mm] is drawn.
inline QColor pixelAt(gui::SliceView* view, const std::array<double, 3>& p) {
  return pixelOf(view->grabFramebuffer(), view, p);
}

/// Widget position (logical pixels from the top left) at which `view` shows `p`: where a mouse
/// event must go to reach it (the inverse of the view's own mouse-to-world mapping).
inline QPointF widgetPosOf(gui::SliceView* view, const std::array<double, 3>& p) {
  const QPointF d = displayPixelOf(view, p);
  const double dpr = view->devicePixelRatioF();
  return {d.x() / dpr, (view->framebufferSizePx().height() - 1 - d.y()) / dpr};
}

/// Largest difference of the two colours' channels (0-255).
inline int colourDistance(QColor a, QColor b) {
  return std::max({std::abs(a.red() - b.red()), std::abs(a.green() - b.green()),
                   std::abs(a.blue() - b.blue())});
}

/// Pixels of `region` where `a` and `b` (images of one size) differ by more than `tol` in some
/// channel (colourDistance).
inline int countDifferentPixels(const QImage& a, const QImage& b, const QRect& region, int tol) {
  const QRect r = region & a.rect() & b.rect();
  int n = 0;
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) n += colourDistance(a.pixelColor(x, y), b.pixelColor(x, y)) > tol;
  return n;
}

}  // namespace penumbra::test
