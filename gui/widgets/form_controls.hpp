#pragma once
/// Small factories for the form controls the panels share, so that every spin box of a plan
/// editor behaves the same (named for GUI tests, committed on Enter, focus out or arrows).
#include <QString>

class QDoubleSpinBox;
class QPushButton;

namespace penumbra::gui {

/// A named spin box over [lo, hi] showing `decimals` digits and `suffix` (" mm", " deg"). It
/// emits valueChanged on Enter, focus out and the arrows, not on every key stroke, so a plan
/// is not recomputed for each digit typed.
QDoubleSpinBox* makeDoubleSpinBox(const char* objectName, double lo, double hi, double value,
                                  double step, int decimals, const QString& suffix);

/// A push button with a stable objectName for the GUI tests.
QPushButton* makeButton(const QString& text, const char* objectName);

}  // namespace penumbra::gui
