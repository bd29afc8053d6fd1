#include "gui/widgets/elided_label.hpp"

#include <QFontMetrics>
#include <QResizeEvent>

namespace penumbra::gui {

ElidedLabel::ElidedLabel(const char* objectName, QWidget* parent) : QLabel(parent) {
  setObjectName(objectName);
  setTextFormat(Qt::PlainText);
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
  full_ = text;
  setToolTip(text);
  elideToWidth();
}

QSize ElidedLabel::minimumSizeHint() const { return {0, QLabel::minimumSizeHint().height()}; }

void ElidedLabel::resizeEvent(QResizeEvent* e) {
  QLabel::resizeEvent(e);
  elideToWidth();
}

void ElidedLabel::elideToWidth() {
  const int room = contentsRect().width();
  QLabel::setText(room <= 0 ? full_ : fontMetrics().elidedText(full_, Qt::ElideMiddle, room));
}

}  // namespace penumbra::gui
