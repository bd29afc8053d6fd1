#pragma once
// Helpers shared by the GUI tests: find widgets by objectName and open the demo case through
// the same path as File > Open DICOM folder, waiting on signals (never on sleeps).
#include <QObject>
#include <QSignalSpy>
#include <QString>

#include "gui/shell/main_window.hpp"
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

}  // namespace penumbra::test
