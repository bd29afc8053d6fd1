#include "gui/views/patient_tree.hpp"

#include <QHeaderView>
#include <QPainter>
#include <QPixmap>

namespace penumbra::gui {

QIcon colorSwatch(const QColor& color, int size) {
  QPixmap pm(size, size);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setPen(QColor(40, 40, 40));
  p.setBrush(color);
  p.drawRect(0, 0, size - 1, size - 1);
  return QIcon(pm);
}

PatientTree::PatientTree(ViewState* state, QWidget* parent) : QTreeWidget(parent), state_(state) {
  setObjectName("patientTree");
  setColumnCount(2);
  setHeaderLabels({tr("Item"), tr("Details")});
  header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  setRootIsDecorated(true);
  connect(state, &ViewState::sceneChanged, this, &PatientTree::rebuild);
  connect(this, &QTreeWidget::itemChanged, this, &PatientTree::onItemChanged);
  connect(state, &ViewState::structureVisibilityChanged, this, [this](int index, bool visible) {
    if (!structures_ || index < 0 || index >= structures_->childCount()) return;
    const Qt::CheckState want = visible ? Qt::Checked : Qt::Unchecked;
    if (structures_->child(index)->checkState(0) != want) structures_->child(index)->setCheckState(0, want);
  });
  rebuild();
}

void PatientTree::rebuild() {
  rebuilding_ = true;
  clear();
  patient_ = structures_ = plan_ = nullptr;
  const auto& scene = state_->scene();
  if (!scene) {
    auto* none = new QTreeWidgetItem(this, {tr("No patient"), tr("File > Open DICOM folder")});
    none->setFlags(Qt::ItemIsEnabled);
    rebuilding_ = false;
    return;
  }
  const Patient& p = scene->patient();
  const QString name = p.name.empty() ? tr("(unnamed)") : QString::fromStdString(p.name);
  patient_ = new QTreeWidgetItem(this, {tr("Patient %1").arg(name), QString::fromStdString(p.id)});
  patient_->setData(0, kNameRole, QStringLiteral("patient"));

  const Grid& g = p.ct.grid;
  auto* ct = new QTreeWidgetItem(patient_, {tr("CT"), tr("%1 x %2 x %3, %4 x %5 x %6 mm")
                                                         .arg(g.dims[0]).arg(g.dims[1]).arg(g.dims[2])
                                                         .arg(g.spacing.x, 0, 'g', 4)
                                                         .arg(g.spacing.y, 0, 'g', 4)
                                                         .arg(g.spacing.z, 0, 'g', 4)});
  ct->setData(0, kNameRole, QStringLiteral("ct"));
  ct->setToolTip(0, QString::fromStdString(p.ctDescription));

  const auto& list = p.structures.structures;
  structures_ = new QTreeWidgetItem(patient_, {tr("Structures"), tr("%1").arg(list.size())});
  structures_->setData(0, kNameRole, QStringLiteral("structures"));
  for (std::size_t n = 0; n < list.size(); ++n) {
    const Structure& s = list[n];
    auto* item = new QTreeWidgetItem(structures_, {QString::fromStdString(s.name),
                                                   QString::fromUtf8(toString(s.kind))});
    item->setData(0, kNameRole, QString::fromStdString(s.name));
    item->setData(0, kIndexRole, int(n));
    item->setIcon(0, colorSwatch(QColor(s.color[0], s.color[1], s.color[2])));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
    item->setCheckState(0, state_->isStructureVisible(int(n)) ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(0, tr("%1 (%2), ROI %3").arg(QString::fromStdString(s.name),
                                                 QString::fromStdString(s.interpretedType))
                            .arg(s.roiNumber));
  }
  plan_ = new QTreeWidgetItem(patient_, {tr("Plan"), tr("no beams yet")});
  plan_->setData(0, kNameRole, QStringLiteral("plan"));
  plan_->setToolTip(0, tr("Beams, doses and optimisation results will appear here."));
  expandAll();
  rebuilding_ = false;
}

void PatientTree::onItemChanged(QTreeWidgetItem* item, int column) {
  if (rebuilding_ || column != 0 || item->parent() != structures_ || !structures_) return;
  state_->setStructureVisible(item->data(0, kIndexRole).toInt(), item->checkState(0) == Qt::Checked);
}

QTreeWidgetItem* PatientTree::structureItem(const QString& name) const {
  if (!structures_) return nullptr;
  for (int i = 0; i < structures_->childCount(); ++i)
    if (structures_->child(i)->data(0, kNameRole).toString() == name) return structures_->child(i);
  return nullptr;
}

QStringList PatientTree::structureNames() const {
  QStringList names;
  if (structures_)
    for (int i = 0; i < structures_->childCount(); ++i)
      names << structures_->child(i)->data(0, kNameRole).toString();
  return names;
}

}  // namespace penumbra::gui
