#pragma once
/// Pieces the light-dose panel's source files share (light_dose_panel.cpp, light_dose_inputs.cpp,
/// light_dose_results.cpp, light_dose_file_actions.cpp); not for use outside gui/light.
#include <QString>
#include <QTableWidgetItem>

#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui::light_panel {

enum LayerColumn { ColN, ColMua, ColMus, ColG, ColD, ColCount };
/// Lo et al. (2009), Figure 6.
inline constexpr const char* kDefaultLevels = "1000, 100, 10, 1, 0.01, 1e-5";
/// Batches the engine splits a run into for its standard errors.
constexpr int kBatches = 10;

inline QTableWidgetItem* numberItem(double v, int precision = 6) {
  auto* item = new QTableWidgetItem(QString::number(v, 'g', precision));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace penumbra::gui::light_panel
