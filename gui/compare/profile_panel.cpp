#include "gui/compare/profile_panel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include "gui/compare/chart_colours.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/profile_model.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
/// 1, 2 or 5 times a power of ten, at least `v`: distance ticks read 0, 10, 20 mm, not 15.1.
double niceStep(double v) {
  const double p = std::pow(10.0, std::floor(std::log10(std::max(v, 1e-6))));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}
}  // namespace

ProfileSamples sampleProfile(const PatientScene& scene, Vec3 start, Vec3 end, const Volume<float>* a,
                             const Volume<float>* b, const Volume<float>* gamma, int n) {
  ProfileSamples s;
  if (n < 2) return s;
  const Vec3 p0 = scene.worldOf(start);
  for (int i = 0; i < n; ++i) {
    const double t = double(i) / (n - 1);
    const Vec3 ijk = start + (end - start) * t;
    const Vec3 p = scene.worldOf(ijk);
    s.mm.push_back(norm(p - p0));
    double gy = 0;
    s.a.push_back(a && sampleDose(*a, p, gy) ? gy : kNan);
    s.b.push_back(b && sampleDose(*b, p, gy) ? gy : kNan);
    std::array<int, 3> c;
    s.gamma.push_back(gamma && gamma->grid.worldToNearestIndex(p, c) ? double(gamma->at(c[0], c[1], c[2])) : kNan);
  }
  return s;
}

ProfilePanel::ProfilePanel(ViewState* state, ProfileModel* profile, DoseSetStore* doseSets,
                           ComparisonModel* comparison, QWidget* parent)
    : QWidget(parent), state_(state), profile_(profile), doseSets_(doseSets), comparison_(comparison) {
  setObjectName("profilePanel");
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  tool_ = new QPushButton(tr("Profile tool"));
  tool_->setObjectName("profileToolButton");
  tool_->setCheckable(true);
  tool_->setToolTip(tr("While on, a left drag on a slice view draws the profile line"));
  top->addWidget(tool_);
  status_ = new QLabel;
  status_->setObjectName("profileStatusLabel");
  status_->setWordWrap(true);
  top->addWidget(status_, 1);
  layout->addLayout(top);
  connect(tool_, &QPushButton::toggled, profile_, &ProfileModel::setToolActive);
  connect(profile_, &ProfileModel::toolActiveChanged, tool_, &QPushButton::setChecked);

  chart_ = new QChart;
  a_ = new QLineSeries;
  b_ = new QLineSeries;
  QPen pa(QColor(20, 60, 160));
  pa.setWidthF(2);
  a_->setPen(pa);
  QPen pb(QColor(230, 120, 0));
  pb.setWidthF(2);
  pb.setStyle(Qt::DashLine);
  b_->setPen(pb);
  pass_ = new QScatterSeries;
  fail_ = new QScatterSeries;
  pass_->setName(tr("gamma pass"));
  fail_->setName(tr("gamma fail"));
  for (QScatterSeries* sc : {pass_, fail_}) {
    sc->setMarkerSize(5);
    sc->setBorderColor(Qt::transparent);
  }
  pass_->setColor(gammaPassChartColour());
  fail_->setColor(gammaFailChartColour());
  threshold_ = new QLineSeries;
  threshold_->setName(tr("gamma = 1"));
  QPen pt(Qt::gray);
  pt.setStyle(Qt::DotLine);
  threshold_->setPen(pt);
  axisX_ = new QValueAxis;
  axisX_->setTitleText(tr("distance from the start (mm)"));
  axisDose_ = new QValueAxis;
  axisDose_->setTitleText(tr("dose (Gy)"));
  axisGamma_ = new QValueAxis;
  axisGamma_->setTitleText(tr("gamma"));
  chart_->addAxis(axisX_, Qt::AlignBottom);
  chart_->addAxis(axisDose_, Qt::AlignLeft);
  chart_->addAxis(axisGamma_, Qt::AlignRight);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{a_, b_}) {
    chart_->addSeries(s);
    s->attachAxis(axisX_);
    s->attachAxis(axisDose_);
  }
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{threshold_, pass_, fail_}) {
    chart_->addSeries(s);
    s->attachAxis(axisX_);
    s->attachAxis(axisGamma_);
  }
  chart_->legend()->setAlignment(Qt::AlignTop);
  chart_->setMargins(QMargins(2, 2, 2, 2));
  auto* view = new QChartView(chart_);
  view->setObjectName("profileChartView");
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(160);
  layout->addWidget(view, 1);

  connect(profile_, &ProfileModel::lineChanged, this, &ProfilePanel::refresh);
  connect(comparison_, &ComparisonModel::comparisonChanged, this, &ProfilePanel::refresh);
  connect(doseSets_, &DoseSetStore::currentDoseSetChanged, this, &ProfilePanel::refresh);
  connect(state_, &ViewState::sceneChanged, profile_, &ProfileModel::clear);
  refresh();
}

void ProfilePanel::refresh() {
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{a_, b_, pass_, fail_, threshold_}) s->clear();
  samples_ = {};
  const auto& scene = state_->scene();
  const auto c = comparison_->current();
  const auto current = doseSets_->current();
  if (!scene || !profile_->hasLine() || (!c && !current)) {
    status_->setText(tr("Press Profile tool, then drag a line on a slice view."));
    for (QAbstractSeries* s : chart_->series()) s->setVisible(false);
    return emit refreshed();
  }
  // A comparison shows A, B and gamma; otherwise the dose shown in the views.
  const DoseSet* setA = c ? c->reference.get() : current.get();
  const DoseSet* setB = c ? c->evaluated.get() : nullptr;
  const Volume<float>* gamma = c && c->result ? &c->result->gamma : nullptr;
  samples_ = sampleProfile(*scene, profile_->start(), profile_->end(), &setA->dose.dose,
                           setB ? &setB->dose.dose : nullptr, gamma, kSamples);
  a_->setName(c ? tr("A: %1").arg(setA->name) : setA->name);
  if (setB) b_->setName(tr("B: %1").arg(setB->name));
  double top = 0;
  for (std::size_t i = 0; i < samples_.mm.size(); ++i) {
    const double x = samples_.mm[i];
    if (std::isfinite(samples_.a[i])) a_->append(x, samples_.a[i]), top = std::max(top, samples_.a[i]);
    if (std::isfinite(samples_.b[i])) b_->append(x, samples_.b[i]), top = std::max(top, samples_.b[i]);
    const double g = samples_.gamma[i];
    if (std::isfinite(g)) (g <= 1 ? pass_ : fail_)->append(x, g);
  }
  const double length = samples_.mm.empty() ? 1 : std::max(samples_.mm.back(), 1e-3);
  const double cap = c ? c->criteria.gammaCap : 2;
  threshold_->append(0, 1);
  threshold_->append(length, 1);
  axisX_->setRange(0, length);
  axisX_->setTickType(QValueAxis::TicksDynamic);
  axisX_->setTickAnchor(0);
  axisX_->setTickInterval(niceStep(length / 6));
  axisX_->setLabelFormat("%.0f");
  axisDose_->setRange(0, std::max(top * 1.05, 1e-3));
  axisDose_->applyNiceNumbers();
  axisGamma_->setRange(0, cap);
  a_->setVisible(true);
  b_->setVisible(setB != nullptr);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{pass_, fail_, threshold_}) s->setVisible(gamma != nullptr);
  axisGamma_->setVisible(gamma != nullptr);
  status_->setText(tr("%1 profile, %2 mm%3")
                       .arg(QString::fromUtf8(displayName(profile_->orientation())))
                       .arg(length, 0, 'f', 1)
                       .arg(gamma ? tr(": A, B and %1").arg(ComparisonModel::criteriaText(c->criteria)) : QString()));
  emit refreshed();
}

}  // namespace penumbra::gui
