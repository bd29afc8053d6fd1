#include "gui/widgets/form_controls.hpp"

#include <QDoubleSpinBox>
#include <QPushButton>

namespace penumbra::gui {

QDoubleSpinBox* makeDoubleSpinBox(const char* objectName, double lo, double hi, double value,
                                  double step, int decimals, const QString& suffix) {
  auto* s = new QDoubleSpinBox;
  s->setObjectName(objectName);
  s->setRange(lo, hi);
  s->setDecimals(decimals);
  s->setSingleStep(step);
  s->setValue(value);
  s->setSuffix(suffix);
  s->setKeyboardTracking(false);  // valueChanged on Enter / focus out / arrows, not per key
  return s;
}

QPushButton* makeButton(const QString& text, const char* objectName) {
  auto* b = new QPushButton(text);
  b->setObjectName(objectName);
  return b;
}

}  // namespace penumbra::gui
