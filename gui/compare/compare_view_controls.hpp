#pragma once
/// What the views show, in the Compare panel ("compareViewControls"), both ways bound to the
/// ComparisonModel: the slice views' wash ("compareViewCombo": the dose, the gamma map or
/// A - B), whether the central area shows the compare views ("compareSideBySideCheck"), their
/// layout ("compareLayoutCombo": A | B | map, Swipe A/B, Checkerboard A/B; choosing one shows
/// the compare views) and the checkerboard's square size ("compareCheckerSizeSpin", mm, only
/// in that layout).
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;

namespace penumbra::gui {

class ComparisonModel;

class CompareViewControls : public QWidget {
  Q_OBJECT
public:
  explicit CompareViewControls(ComparisonModel* model, QWidget* parent = nullptr);

private:
  void showModel();

  ComparisonModel* model_;
  QComboBox* view_ = nullptr;
  QCheckBox* sideBySide_ = nullptr;
  QComboBox* layout_ = nullptr;
  QDoubleSpinBox* checkerSize_ = nullptr;
};

}  // namespace penumbra::gui
