#pragma once
/// The dose sets of the open patient: one per engine run (later also imported RT Doses), and
/// which one is shown. Displays (wash, isodose lines and surfaces, cursor read-out) and panels
/// (dose display; later DVH, profiling, export) observe it; a dose set is immutable once added
/// (shared_ptr<const>), and replace() swaps in a new version (e.g. after normalisation).
#include <memory>
#include <vector>

#include <QObject>
#include <QString>

#include "core/dose_volume.hpp"
#include "core/kernel_profile.hpp"
#include "proton/proton_plan.hpp"

namespace penumbra::gui {

struct DoseSet {
  int id = 0;             ///< unique within the store, never reused
  QString name;           ///< "Dose 1: 2 beams, CPU, 12:03"
  DoseVolume dose;        ///< Gy on the dose grid (patient LPS)
  std::vector<proton::ProtonBeam> beams;  ///< plan snapshot the dose was computed for
  std::vector<KernelProfile> profiles;    ///< the engine's records (profiling panel)
  std::vector<std::string> messages;      ///< engine notes (fallbacks, skipped beams)
  double maxGy = 0;       ///< maximum voxel dose
  /// Factor applied to weights and dose by normalisation (1: as computed).
  double normalisation = 1;
  QString normalisationNote;  ///< "target mean = 2.00 Gy" or empty
  /// A running optimisation's current dose D w (replaced as it improves): its DVH jobs start
  /// beside the optimisation job instead of queueing behind it.
  bool live = false;
};

class DoseSetStore : public QObject {
  Q_OBJECT
public:
  explicit DoseSetStore(QObject* parent = nullptr);

  int count() const { return int(sets_.size()); }
  std::shared_ptr<const DoseSet> at(int index) const;
  /// Index of the dose set with `id`, or -1.
  int indexOfId(int id) const;
  int currentIndex() const { return current_; }
  /// The dose set shown, or null.
  std::shared_ptr<const DoseSet> current() const { return at(current_); }

  /// Adds a set (its id is assigned here), makes it current; returns its index.
  int add(DoseSet set);
  /// Replaces the set at `index` (same id) and emits doseSetChanged.
  void replace(int index, DoseSet set);
  void remove(int index);
  void clear();
  void setCurrentIndex(int index);

signals:
  void doseSetAdded(int index);
  void doseSetChanged(int index);
  void doseSetRemoved(int index);
  /// The shown set changed (index -1: none); also emitted when the current set is replaced.
  void currentDoseSetChanged(int index);

private:
  std::vector<std::shared_ptr<const DoseSet>> sets_;
  int current_ = -1;
  int nextId_ = 1;
};

/// Maximum of a dose volume (0 when empty).
double maxDose(const Volume<float>& dose);
/// Trilinear dose at a patient point (LPS mm); false outside the dose grid.
bool sampleDose(const Volume<float>& dose, Vec3 lps, double& gy);

}  // namespace penumbra::gui
