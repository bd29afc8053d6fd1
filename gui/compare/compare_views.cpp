#include "gui/compare/compare_views.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/overlays/comparison_wash_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/overlays/profile_line_display.hpp"
#include "gui/views/slice_view.hpp"

namespace penumbra::gui {

namespace {
const char* kViewNames[3] = {"compareViewA", "compareViewB", "compareViewMap"};
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
  bar->addWidget(new QLabel(tr("Side by side, one crosshair, zoom and pan linked:")));
  orientationCombo_ = new QComboBox;
  orientationCombo_->setObjectName("compareViewsOrientationCombo");
  for (SliceOrientation o : {SliceOrientation::Axial, SliceOrientation::Coronal, SliceOrientation::Sagittal})
    orientationCombo_->addItem(QString::fromUtf8(displayName(o)), int(o));
  bar->addWidget(orientationCombo_);
  bar->addStretch(1);
  layout->addLayout(bar);
  auto* grid = new QGridLayout;
  grid->setSpacing(2);
  for (int i = 0; i < 3; ++i) {
    titles_[std::size_t(i)] = new QLabel;
    titles_[std::size_t(i)]->setObjectName(QString(kViewNames[i]) + "Title");
    // Long dose-set names must not widen the column (the tooltip holds the whole title).
    titles_[std::size_t(i)]->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    grid->addWidget(titles_[std::size_t(i)], 0, i);
    grid->setColumnStretch(i, 1);
  }
  row_ = new QHBoxLayout;
  row_->setSpacing(2);
  grid->addLayout(row_, 1, 0, 1, 3);
  grid->setRowStretch(1, 1);
  layout->addLayout(grid, 1);
  connect(orientationCombo_, &QComboBox::activated, this,
          [this] { setOrientation(SliceOrientation(orientationCombo_->currentData().toInt())); });
  connect(model_, &ComparisonModel::comparisonChanged, this, &CompareViews::updateTitles);
  connect(model_, &ComparisonModel::viewModeChanged, this, &CompareViews::updateTitles);
  buildViews();
  updateTitles();
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
  for (int i = 0; i < 3; ++i) {
    SliceView* v = createStandardSliceView(orientation_, state_, this);
    v->setObjectName(kViewNames[i]);
    if (i < 2) {
      const ComparisonSide side = i == 0 ? ComparisonSide::Reference : ComparisonSide::Evaluated;
      auto* wash = new DoseWashDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      wash->pinToComparison(model_, side);
      auto* iso = new IsodoseDisplay(v->renderer(), state_, orientation_, store_, settings_, plan_);
      iso->pinToComparison(model_, side);
      v->addOverlay(wash);
      v->addOverlay(iso);
      washes_[std::size_t(i)] = wash;
    } else {
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
    }
    // The profile line is drawn (and can be drawn) on the side-by-side views too.
    v->setProfileModel(profile_);
    v->addOverlay(new ProfileLineDisplay(v->renderer(), state_, orientation_, profile_));
    row_->addWidget(v, 1);
    views_[std::size_t(i)] = v;
  }
  // One camera for the three: whichever view the user zooms or pans, the others follow.
  for (SliceView* from : views_)
    connect(from, &SliceView::cameraChanged, this, [this, from] {
      for (SliceView* to : views_)
        if (to != from) to->matchCamera(*from);
    });
}

void CompareViews::updateTitles() {
  const auto c = model_->current();
  auto name = [](const std::shared_ptr<const DoseSet>& s) { return s ? s->name : QString("-"); };
  titles_[0]->setText(tr("<b>A</b> (reference): %1").arg(name(c ? c->reference : nullptr)));
  titles_[1]->setText(tr("<b>B</b> (evaluated): %1").arg(name(c ? c->evaluated : nullptr)));
  const bool diff = map_ && map_->shownMode() == CompareViewMode::Difference;
  titles_[2]->setText(!c ? tr("Compute a comparison in the Compare panel")
                         : diff ? tr("<b>A - B</b> (Gy)")
                                : tr("<b>%1</b>").arg(ComparisonModel::criteriaText(c->criteria).toHtmlEscaped()));
  for (QLabel* t : titles_) t->setToolTip(t->text());
}

}  // namespace penumbra::gui
