#include "gui/dose/dvh_line_style.hpp"

#include <algorithm>

#include <QPainter>
#include <QPen>
#include <QPixmap>

namespace penumbra::gui {

Qt::PenStyle doseSetLineStyle(int doseSetIndex) {
  static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                        Qt::DashDotDotLine};
  return styles[std::max(0, doseSetIndex) % 5];
}

QIcon lineStyleIcon(Qt::PenStyle style) {
  QPixmap pix(28, 14);
  pix.fill(Qt::transparent);
  QPainter p(&pix);
  p.setPen(QPen(Qt::black, 2, style));
  p.drawLine(1, 7, 27, 7);
  return QIcon(pix);
}

}  // namespace penumbra::gui
