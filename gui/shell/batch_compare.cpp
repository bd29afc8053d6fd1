// BatchRunner, --compare-screenshot FILE (issue 13, item 3): the first two dose sets of the
// opened case (e.g. `--open-dose` on a folder with two RT Doses) compared with the Compare
// panel's default criteria (gamma 3 %/3 mm global, 10 % cut-off) on the backend Auto picks,
// shown side by side (A | B | gamma map; --compare-layout: swipe or checkerboard and the map)
// through A's maximum, with the Compare dock raised
// and given the right column's height (the beam's-eye view is hidden: there is no beam), and
// the whole window saved once the DVHs of both sets are in the panel's table. Isodose lines
// are turned off: a dose opened in batch mode keeps the default prescription (2 Gy), whose
// levels would mean nothing on these doses.
#include <cstdio>

#include <QCoreApplication>
#include <QDockWidget>
#include <QImage>

#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_panel.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/shell/batch_runner.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

void BatchRunner::runCompare() {
  PlanningWorkspace* ws = window_->planning();
  DoseSetStore* store = ws->doseSets();
  if (store->count() < 2) {
    std::fprintf(stderr, "penumbra: --compare-screenshot needs two dose sets, the case has %d (open a folder "
                         "with two RT Doses with --open-dose DIR)\n", store->count());
    return emit done(6);
  }
  ComparePanel* panel = ws->comparePanel();
  panel->setDoseSets(store->at(0)->id, store->at(1)->id);
  connect(ws->compareController(), &CompareController::finished, this,
          [this, ws](bool ok, const QString& message) {
            std::printf("%s\n", qPrintable(message));
            std::fflush(stdout);
            if (!ok) return emit done(6);
            // The slices through A's maximum (the target), in the gamma map.
            const auto c = ws->comparison()->current();
            const Volume<float>& a = c->reference->dose.dose;
            std::size_t best = 0;
            for (std::size_t i = 1; i < a.data.size(); ++i)
              if (a.data[i] > a.data[best]) best = i;
            const auto& g = a.grid;
            const Vec3 ijk{double(best % std::size_t(g.dims[0])), double(best / std::size_t(g.dims[0]) % std::size_t(g.dims[1])),
                           double(best / (std::size_t(g.dims[0]) * std::size_t(g.dims[1])))};
            const auto& scene = window_->viewState()->scene();
            window_->viewState()->setCrosshair(scene->grid().worldToIndex(g.indexToWorld(ijk)));
            ws->comparison()->setViewMode(CompareViewMode::Gamma);
            ws->comparison()->setCompareLayout(options_.compareLayout == "swipe"          ? CompareLayout::Swipe
                                               : options_.compareLayout == "checkerboard" ? CompareLayout::Checkerboard
                                                                                          : CompareLayout::SideBySide);
            ws->comparison()->setSideBySide(true);
            ws->displaySettings()->setIsodosesVisible(false);
            whenDisplaysIdle([this] {
              if (auto* bev = window_->findChild<QDockWidget*>("bevDock")) bev->hide();
              if (auto* dock = window_->findChild<QDockWidget*>("compareDock")) {
                dock->show();
                dock->raise();
              }
              QCoreApplication::processEvents();
              const QImage image = window_->grabWindowImage();
              if (image.isNull() || !image.save(options_.compareScreenshot)) {
                std::fprintf(stderr, "penumbra: could not save the compare screenshot to %s\n",
                             qPrintable(options_.compareScreenshot));
                return emit done(5);
              }
              std::printf("compare screenshot saved to %s (%dx%d)\n", qPrintable(options_.compareScreenshot),
                          image.width(), image.height());
              emit done(grabAndBench());
            });
          });
  panel->compute();
}

}  // namespace penumbra::gui
