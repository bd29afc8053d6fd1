// DvhPanel: its layout and the structure and dose-set lists that choose what is drawn and
// tabulated (dvh_panel.hpp). The chart is in dvh_panel_chart.cpp, the statistics table and
// its queries in dvh_panel_table.cpp, the CSV export in dvh_panel_export.cpp.
#include "gui/dose/dvh_panel.hpp"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include "gui/dose/dvh_line_style.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/views/patient_tree.hpp"  // colorSwatch

namespace penumbra::gui {

namespace {

constexpr int kNameRole = Qt::UserRole;
constexpr int kIdRole = Qt::UserRole + 1;

}  // namespace

DvhPanel::DvhPanel(ViewState* state, DvhStore* dvhs, PlanModel* plan, QWidget* parent)
    : QWidget(parent), state_(state), dvhs_(dvhs), plan_(plan) {
  setObjectName("dvhPanel");
  chart_ = new QChart;
  chart_->legend()->hide();  // the structure list is the legend (colour swatches)
  chart_->setMargins(QMargins(4, 4, 4, 4));
  axisX_ = new QValueAxis;
  axisX_->setTitleText(tr("Dose (Gy)"));
  axisX_->setLabelFormat("%.1f");
  axisY_ = new QValueAxis;
  axisY_->setTitleText(tr("Volume (%)"));
  axisY_->setRange(0, 100);
  axisY_->setLabelFormat("%.0f");
  axisY_->setTickCount(6);
  chart_->addAxis(axisX_, Qt::AlignBottom);
  chart_->addAxis(axisY_, Qt::AlignLeft);
  view_ = new QChartView(chart_);
  view_->setObjectName("dvhChartView");
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(160);

  structures_ = new QListWidget;
  structures_->setObjectName("dvhStructureList");
  structures_->setToolTip(tr("Structures drawn in the DVH and listed in the table"));
  doseSets_ = new QListWidget;
  doseSets_->setObjectName("dvhDoseSetList");
  doseSets_->setToolTip(tr("Dose sets overlaid for comparison (one line style each)"));
  status_ = new QLabel(tr("No dose yet: compute a dose to see DVHs."));
  status_->setObjectName("dvhStatusLabel");
  status_->setWordWrap(true);
  auto* lists = new QWidget;
  auto* listLayout = new QVBoxLayout(lists);
  listLayout->setContentsMargins(0, 0, 0, 0);
  listLayout->addWidget(new QLabel(tr("Structures")));
  listLayout->addWidget(structures_, 3);
  listLayout->addWidget(new QLabel(tr("Dose sets")));
  listLayout->addWidget(doseSets_, 1);
  listLayout->addWidget(status_);

  table_ = new QTableWidget(0, kStatColumns);
  table_->setObjectName("dvhStatsTable");
  table_->setHorizontalHeaderLabels({tr("Structure"), tr("Dose set"), tr("Volume (cc)"), tr("Dmin (Gy)"),
                                     tr("Dmean (Gy)"), tr("Dmax (Gy)"), tr("D98 (Gy)"), tr("D95 (Gy)"),
                                     tr("D50 (Gy)"), tr("D2 (Gy)"), tr("V95 (%)"), tr("V107 (%)")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setToolTip(tr("V95/V107: % of the structure receiving at least 95/107 % of the prescription"));

  queryEdit_ = new QLineEdit;
  queryEdit_->setObjectName("dvhQueryEdit");
  queryEdit_->setPlaceholderText(tr("D0.03cc, V20Gy, D95%, V95%"));
  queryEdit_->setClearButtonEnabled(true);
  queryEdit_->setToolTip(tr("More columns, read off the cumulative DVH (linear interpolation):\n"
                            "D95% / D0.03cc: dose [Gy] to 95 % / the hottest 0.03 cc of the structure\n"
                            "V20Gy / V95%: volume [%] receiving 20 Gy / 95 % of the prescription\n"
                            "Dmean, Dmax, Dmin; [%] after a D gives % of the prescription, [cc] after a V cc"));
  export_ = new QPushButton(tr("Export CSV..."));
  export_->setObjectName("exportDvhCsv");
  export_->setToolTip(tr("The curves shown: structure, dose set, dose (Gy), volume (% and cc)"));
  export_->setEnabled(false);
  auto* queryBar = new QHBoxLayout;
  queryBar->setContentsMargins(0, 0, 0, 0);
  queryBar->addWidget(new QLabel(tr("Queries")));
  queryBar->addWidget(queryEdit_, 1);
  // In the query bar, not under the lists: the lists column sets the dock's minimum height,
  // which the views above it pay for at 1280 x 800.
  bandsCheck_ = new QCheckBox(tr("Robustness bands"));
  bandsCheck_->setObjectName("dvhBandsCheck");
  bandsCheck_->setToolTip(tr("Each structure's DVH range over the error scenarios of the last robustness "
                             "evaluation (Robustness dock), until the plan changes"));
  bandsCheck_->setVisible(false);  // until a robustness model is set
  queryBar->addWidget(bandsCheck_);
  queryBar->addWidget(export_);
  auto* bottom = new QWidget;
  auto* bottomLayout = new QVBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 0, 0, 0);
  bottomLayout->setSpacing(2);
  bottomLayout->addLayout(queryBar);
  bottomLayout->addWidget(table_, 1);
  connect(queryEdit_, &QLineEdit::editingFinished, this, [this] { setQueries(queryEdit_->text()); });
  connect(export_, &QPushButton::clicked, this, &DvhPanel::chooseAndExportCsv);

  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(lists);
  top->addWidget(view_);
  top->setStretchFactor(1, 1);
  top->setSizes({180, 600});
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(split);

  connect(structures_, &QListWidget::itemChanged, this, &DvhPanel::onItemChanged);
  connect(doseSets_, &QListWidget::itemChanged, this, &DvhPanel::onItemChanged);
  connect(state, &ViewState::sceneChanged, this, [this] {
    uncheckedSets_.clear();
    rebuildStructureList();
    rebuildDoseSetList();
    refresh();
  });
  DoseSetStore* store = dvhs->doseSets();
  connect(store, &DoseSetStore::doseSetAdded, this, &DvhPanel::rebuildDoseSetList);
  connect(store, &DoseSetStore::doseSetChanged, this, &DvhPanel::rebuildDoseSetList);
  connect(store, &DoseSetStore::doseSetRemoved, this, &DvhPanel::rebuildDoseSetList);
  connect(dvhs, &DvhStore::dvhsChanged, this, &DvhPanel::refresh);
  connect(dvhs, &DvhStore::cleared, this, &DvhPanel::refresh);
  connect(dvhs, &DvhStore::computeStarted, this, [this] { status_->setText(tr("Computing DVHs...")); });
  connect(plan, &PlanModel::prescriptionChanged, this, &DvhPanel::refreshTable);
  rebuildStructureList();
}

void DvhPanel::rebuildStructureList() {
  updating_ = true;
  structures_->clear();
  if (const auto& scene = state_->scene()) {
    for (const auto& s : scene->patient().structures.structures) {
      if (s.contours.empty() && s.mask.empty()) continue;
      const QString name = QString::fromStdString(s.name);
      auto* item = new QListWidgetItem(colorSwatch(QColor(s.color[0], s.color[1], s.color[2])), name, structures_);
      item->setData(kNameRole, name);
      item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
      item->setCheckState(hidden_.contains(name) ? Qt::Unchecked : Qt::Checked);
    }
  }
  updating_ = false;
}

void DvhPanel::rebuildDoseSetList() {
  updating_ = true;
  doseSets_->clear();
  DoseSetStore* store = dvhs_->doseSets();
  for (int i = 0; i < store->count(); ++i) {
    const auto set = store->at(i);
    auto* item = new QListWidgetItem(lineStyleIcon(doseSetLineStyle(i)), set->name, doseSets_);
    item->setData(kIdRole, set->id);
    item->setToolTip(set->name);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(uncheckedSets_.contains(set->id) ? Qt::Unchecked : Qt::Checked);
  }
  updating_ = false;
  refresh();
}

void DvhPanel::onItemChanged(QListWidgetItem* item) {
  if (updating_) return;
  const bool on = item->checkState() == Qt::Checked;
  if (item->listWidget() == structures_) {
    const QString name = item->data(kNameRole).toString();
    hidden_.removeAll(name);
    if (!on) hidden_.append(name);
    // Toggling a structure hides or shows its curves without rebuilding the others.
    for (QLineSeries* s : series_.value(name)) s->setVisible(on);
    if (QAreaSeries* b = bands_.value(name)) b->setVisible(on);
    refreshTable();
    emit refreshed();
  } else {
    const int id = item->data(kIdRole).toInt();
    uncheckedSets_.removeAll(id);
    if (!on) uncheckedSets_.append(id);
    refresh();
  }
}

void DvhPanel::setStructureChecked(const QString& structure, bool on) {
  for (int r = 0; r < structures_->count(); ++r)
    if (structures_->item(r)->data(kNameRole).toString() == structure)
      structures_->item(r)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
}

void DvhPanel::setDoseSetChecked(int doseSetId, bool on) {
  for (int r = 0; r < doseSets_->count(); ++r)
    if (doseSets_->item(r)->data(kIdRole).toInt() == doseSetId)
      doseSets_->item(r)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
}

QStringList DvhPanel::hiddenStructures() const { return hidden_; }

void DvhPanel::setHiddenStructures(const QStringList& names) {
  hidden_ = names;
  rebuildStructureList();
  refresh();
}

}  // namespace penumbra::gui
