#include "gui/compare/compare_views.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/overlays/comparison_wash_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/overlays/profile_line_display.hpp"
#include "gui/overlays/split_dose_wash_display.hpp"
#include "gui/views/slice_view.hpp"

namespace penumbra::gui {

namespace {
const char* kViewNames[CompareViews::kViewCount] = {"compareViewA", "compareViewB", "compareViewMap",
                                                    "compareViewSplit"};
}

CompareViews::CompareViews(ViewState* state, ComparisonModel* model, const DoseSetStore* store,
                           const DoseDisplaySettings* settings, const PlanModel* plan, ProfileModel* profile,
                           QWidget* parent)
    : QWidget(parent), state_(state), model_(model), store_(store), settings_(settings), plan_(plan), profile_(profile) {
  setObjectName("compareViews");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 0);
  intro_ = new QLabel;
  bar->addWidget(intro_);
  orientationCombo_ = new QComboBox;
  orientationCombo_->setObjectName("compareViewsOrientationCombo");
  for (SliceOrientation o : {SliceOrientation::Axial, SliceOrientation::Coronal, SliceOrientation::Sagittal})
    orientationCombo_->addItem(QString::fromUtf8(displayName(o)), int(o));
  bar->addWidget(orientationCombo_);
  bar->addStretch(1);
  layout->addLayout(bar);
  auto* row = new QHBoxLayout;
  row->setSpacing(2);
  // The split view first: in its layout it stands left of the map.
  for (int i : {kViewSplit, kViewA, kViewB, kViewMap}) {
    auto* cell = new QWidget;
    auto* column = new QVBoxLayout(cell);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    auto* title = new QLabel;
    title->setObjectName(QString(kViewNames[i]) + "Title");
    // Long dose-set names must not widen the column (the tooltip holds the whole title).
    title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    column->addWidget(title);
    row->addWidget(cell, 1);
    cells_[std::size_t(i)] = cell;
    cellLayouts_[std::size_t(i)] = column;
    titles_[std::size_t(i)] = title;
  }
  layout->addLayout(row, 1);
  connect(orientationCombo_, &QComboBox::activated, this,
          [this] { setOrientation(SliceOrientation(orientationCombo_->currentData().toInt())); });
  connect(model_, &ComparisonModel::comparisonChanged, this, &CompareViews::updateTitles);
  connect(model_, &ComparisonModel::viewModeChanged, this, &CompareViews::updateTitles);
  connect(model_, &ComparisonModel::splitChanged, this, &CompareViews::updateTitles);
  connect(model_, &ComparisonModel::compareLayoutChanged, this, &CompareViews::showLayout);
  buildViews();
  showLayout();
}

void CompareViews::setOrientation(SliceOrientation o) {
  if (o == orientation_) return;
  orientation_ = o;
  orientationCombo_->setCurrentIndex(orientationCombo_->findData(int(o)));
  buildViews();
}

void CompareViews::buildViews() {
  for (SliceView*& v : views_) {
    delete v;  // its overlays go with it (SliceView's destructor)
    v = nullptr;
  }
  for (int i = 0; i < kViewCount; ++i) {
    SliceView* v = createStandardSliceView(orientation_, state_, this);
    v->setObjectName(kViewNames[i]);
    if (i == kViewA || i == kViewB) {
      const ComparisonSide side = i == kViewA ? ComparisonSide::Reference : ComparisonSide::Evaluated;
      auto* wash = new DoseWashDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      wash->pinToComparison(model_, side);
      auto* iso = new IsodoseDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      iso->pinToComparison(model_, side);
      v->addOverlay(wash);
      v->addOverlay(iso);
      washes_[std::size_t(i)] = wash;
    } else if (i == kViewMap) {
      map_ = new ComparisonWashDisplay(v->renderer(), state_, orientation_, model_);
      map_->setAlwaysShown(true);
      v->addOverlay(map_);
      // Both doses' isodose lines over the map: A dashed (as in its own view), B dotted.
      auto* isoA = new IsodoseDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      isoA->pinToComparison(model_, ComparisonSide::Reference);
      isoA->setLineStyle(6, 4, "A dashed, B dotted");
      auto* isoB = new IsodoseDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      isoB->pinToComparison(model_, ComparisonSide::Evaluated);
      isoB->setLineStyle(1.5, 3, {});
      v->addOverlay(isoA);
      v->addOverlay(isoB);
    } else {
      split_ = new SplitDoseWashDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_, model_);
      v->addOverlay(split_);
    }
    // The profile line is drawn (and can be drawn) on the compare views too.
    v->setProfileModel(profile_);
    v->addOverlay(new ProfileLineDisplay(v->renderer(), state_, orientation_, profile_));
    cellLayouts_[std::size_t(i)]->addWidget(v, 1);
    views_[std::size_t(i)] = v;
  }
  // One camera for all: whichever view the user zooms or pans, the others follow.
  for (SliceView* from : views_)
    connect(from, &SliceView::cameraChanged, this, [this, from] {
      for (SliceView* to : views_)
        if (to != from) to->matchCamera(*from);
    });
}

void CompareViews::showLayout() {
  const bool split = model_->compareLayout() != CompareLayout::SideBySide;
  cells_[kViewSplit]->setVisible(split);
  cells_[kViewA]->setVisible(!split);
  cells_[kViewB]->setVisible(!split);
  intro_->setText(split ? tr("A and B on one view beside the map, one crosshair, zoom and pan linked:")
                        : tr("Side by side, one crosshair, zoom and pan linked:"));
  updateTitles();
}

void CompareViews::updateTitles() {
  const auto c = model_->current();
  auto name = [](const std::shared_ptr<const DoseSet>& s) { return s ? s->name.toHtmlEscaped() : QString("-"); };
  const QString a = name(c ? c->reference : nullptr), b = name(c ? c->evaluated : nullptr);
  titles_[kViewA]->setText(tr("<b>A</b> (reference): %1").arg(a));
  titles_[kViewB]->setText(tr("<b>B</b> (evaluated): %1").arg(b));
  const bool diff = map_ && map_->shownMode() == CompareViewMode::Difference;
  titles_[kViewMap]->setText(!c ? tr("Compute a comparison in the Compare panel")
                                : diff ? tr("<b>A - B</b> (Gy)")
                                       : tr("<b>%1</b>").arg(ComparisonModel::criteriaText(c->criteria).toHtmlEscaped()));
  // The names are on the view (its third line), as A's and B's own views give them.
  const bool checkerboard = model_->compareLayout() == CompareLayout::Checkerboard;
  titles_[kViewSplit]->setText(checkerboard ? tr("<b>Checkerboard</b>: A and B in %1 mm squares")
                                                  .arg(model_->checkerSizeMm(), 0, 'g', 3)
                                            : tr("<b>Swipe</b>: A left, B right of the divider (drag it)"));
  for (QLabel* t : titles_) t->setToolTip(t->text());
}

}  // namespace penumbra::gui
