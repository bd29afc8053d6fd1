#pragma once
/// The patient tree: Patient > CT, Structures (one checkable item per structure with a colour
/// swatch), Plan (empty until beams and doses exist). Structure items carry the structure's
/// name in Qt::UserRole and its index in the StructureSet in Qt::UserRole + 1.
#include <QTreeWidget>

#include "gui/model/view_state.hpp"

namespace penumbra::gui {

class PatientTree : public QTreeWidget {
  Q_OBJECT
public:
  static constexpr int kNameRole = Qt::UserRole;
  static constexpr int kIndexRole = Qt::UserRole + 1;

  explicit PatientTree(ViewState* state, QWidget* parent = nullptr);

  /// The item of a structure by name, or null.
  QTreeWidgetItem* structureItem(const QString& name) const;
  /// Names of the listed structures, in order.
  QStringList structureNames() const;
  QTreeWidgetItem* structuresBranch() const { return structures_; }
  QTreeWidgetItem* planBranch() const { return plan_; }

private:
  void rebuild();
  void onItemChanged(QTreeWidgetItem* item, int column);

  ViewState* state_;
  QTreeWidgetItem* patient_ = nullptr;
  QTreeWidgetItem* structures_ = nullptr;
  QTreeWidgetItem* plan_ = nullptr;
  bool rebuilding_ = false;
};

/// A square icon filled with `color` and a thin dark border.
QIcon colorSwatch(const QColor& color, int size = 14);

}  // namespace penumbra::gui
