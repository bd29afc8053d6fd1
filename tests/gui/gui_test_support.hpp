#pragma once
// Helpers shared by the GUI tests: find widgets by objectName and open the demo case through
// the same path as File > Open DICOM folder, waiting on signals (never on sleeps).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include <QColor>
#include <QImage>
#include <QObject>
#include <QSignalSpy>
#include <QString>
#include <vtkRenderer.h>

#include "gui/shell/main_window.hpp"
#include "gui/views/slice_view.hpp"
#include "test_data.hpp"

namespace penumbra::test {

template <typename T>
T* find(QObject* root, const char* name) {
  T* w = root->findChild<T*>(name);
  if (!w) qWarning("widget '%s' not found", name);
  return w;
}

inline QString boxPhantomFolder() { return QString::fromStdString(dataPath("phantoms/BOXPHANTOM")); }

/// Opens BOXPHANTOM in `window` and waits for its scene; false on failure or timeout.
inline bool openBoxPhantom(gui::MainWindow& window, int timeoutMs) {
  QSignalSpy ready(&window, &gui::MainWindow::sceneReady);
  if (!window.openFolder(boxPhantomFolder(), {}, gui::MainWindow::ImportConfirm::Auto)) return false;
  return ready.count() > 0 || ready.wait(timeoutMs);
}

/// The framebuffer pixel of `view` where the display-frame point `p` [mm] is drawn.
inline QColor pixelAt(gui::SliceView* view, const std::array<double, 3>& p) {
  vtkRenderer* r = view->renderer();
  r->SetWorldPoint(p[0], p[1], p[2], 1.0);
  r->WorldToDisplay();
  double d[3];
  r->GetDisplayPoint(d);
  const QImage img = view->grabFramebuffer();
  const int x = int(std::lround(d[0])), y = int(std::lround(img.height() - 1 - d[1]));
  return img.pixelColor(std::clamp(x, 0, img.width() - 1), std::clamp(y, 0, img.height() - 1));
}

/// Largest difference of the two colours' channels (0-255).
inline int colourDistance(QColor a, QColor b) {
  return std::max({std::abs(a.red() - b.red()), std::abs(a.green() - b.green()),
                   std::abs(a.blue() - b.blue())});
}

}  // namespace penumbra::test
