// MainWindow: whole-window capture and slice-render timing (batch mode, tests, benchmarks).
#include <chrono>
#include <vector>

#include <QPainter>

#include "core/kernel_profile.hpp"  // medianOf
#include "gui/shell/main_window.hpp"
#include "gui/views/slice_view.hpp"
#include "gui/views/view3d.hpp"

namespace penumbra::gui {

QImage MainWindow::grabWindowImage() {
  QImage image = grab().toImage().convertToFormat(QImage::Format_RGB32);
  QPainter painter(&image);
  // The views of the central area that are on screen: the four planning views, or the
  // side-by-side comparison views.
  for (VtkView* v : centralWidget()->findChildren<VtkView*>()) {
    if (!v->isVisible()) continue;
    const QImage fb = v->grabFramebuffer();  // renders the view
    const QPoint at = v->mapTo(this, QPoint(0, 0));
    painter.drawImage(QRectF(at.x(), at.y(), v->width(), v->height()), fb);
  }
  return image;
}

double MainWindow::benchmarkSliceRender(SliceOrientation o, int renders, bool changeSlice) {
  SliceView* view = sliceView(o);
  if (!state_->scene() || renders <= 0 || !view->renderNow()) return -1;
  const int start = state_->sliceIndex(o);
  std::vector<double> ms;
  for (int r = 0; r < renders + 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (changeSlice) state_->setSliceIndex(o, start + ((r % 2) ? 1 : -1) * (1 + r % 7));
    view->renderNow();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 2) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());  // 2 warm-ups
  }
  state_->setSliceIndex(o, start);
  return medianOf(ms);
}

}  // namespace penumbra::gui
