#include "gui/compare/compare_view_controls.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>

#include "gui/model/comparison_model.hpp"
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

CompareViewControls::CompareViewControls(ComparisonModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setObjectName("compareViewControls");
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(new QLabel(tr("Slice views show:")), 0, 0);
  view_ = new QComboBox;
  view_->setObjectName("compareViewCombo");
  for (CompareViewMode m : {CompareViewMode::Dose, CompareViewMode::Gamma, CompareViewMode::Difference})
    view_->addItem(tr(toString(m)), int(m));
  view_->setToolTip(tr("Gamma: pass (<= 1) cool blue-grey, fail (> 1) red to yellow. Difference: A - B, "
                       "blue where B is higher, red where A is higher"));
  grid->addWidget(view_, 0, 1, 1, 2);

  // Rows of one or two controls: the panel must fit the right column (340 px) at 1280 x 800.
  sideBySide_ = new QCheckBox(tr("Side by side:"));
  sideBySide_->setObjectName("compareSideBySideCheck");
  sideBySide_->setToolTip(tr("The central area shows the compare views instead of the planning views"));
  grid->addWidget(sideBySide_, 1, 0);
  layout_ = new QComboBox;
  layout_->setObjectName("compareLayoutCombo");
  for (CompareLayout l : {CompareLayout::SideBySide, CompareLayout::Swipe, CompareLayout::Checkerboard})
    layout_->addItem(tr(toString(l)), int(l));
  layout_->setToolTip(tr("A | B | map: three linked views.\nSwipe A/B: A left of a divider (drag it) and B right "
                         "of it, on one view beside the map.\nCheckerboard A/B: squares of A and B alternate.\n"
                         "Both on A and B's one colour scale: where the doses differ, the wash steps."));
  checkerSize_ = makeDoubleSpinBox("compareCheckerSizeSpin", 1, 200, model->checkerSizeMm(), 1, 0, " mm");
  checkerSize_->setToolTip(tr("Side of the checkerboard's squares"));
  // The combos shrink to the dock's width (their longest item would widen the panel).
  for (QComboBox* c : {view_, layout_}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(8);
  }
  grid->addWidget(layout_, 1, 1);
  grid->addWidget(checkerSize_, 1, 2);
  grid->setColumnStretch(1, 1);

  connect(view_, &QComboBox::activated, this,
          [this] { model_->setViewMode(CompareViewMode(view_->currentData().toInt())); });
  connect(sideBySide_, &QCheckBox::toggled, model_, &ComparisonModel::setSideBySide);
  connect(layout_, &QComboBox::activated, this, [this] {
    model_->setCompareLayout(CompareLayout(layout_->currentData().toInt()));
    model_->setSideBySide(true);  // a layout is chosen to be seen
  });
  connect(checkerSize_, &QDoubleSpinBox::valueChanged, model_, &ComparisonModel::setCheckerSizeMm);
  connect(model_, &ComparisonModel::sideBySideChanged, this, &CompareViewControls::showModel);
  connect(model_, &ComparisonModel::viewModeChanged, this, &CompareViewControls::showModel);
  connect(model_, &ComparisonModel::compareLayoutChanged, this, &CompareViewControls::showModel);
  connect(model_, &ComparisonModel::splitChanged, this, &CompareViewControls::showModel);
  showModel();
}

void CompareViewControls::showModel() {
  const QSignalBlocker b1(view_), b2(sideBySide_), b3(layout_), b4(checkerSize_);
  view_->setCurrentIndex(view_->findData(int(model_->viewMode())));
  sideBySide_->setChecked(model_->sideBySide());
  layout_->setCurrentIndex(layout_->findData(int(model_->compareLayout())));
  checkerSize_->setValue(model_->checkerSizeMm());
  checkerSize_->setVisible(model_->compareLayout() == CompareLayout::Checkerboard);
}

}  // namespace penumbra::gui
