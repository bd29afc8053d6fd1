#pragma once
/// The proton plan being edited: beams with their layers and spots, the target they were
/// generated on, and the prescription. Panels (beam editor, BEV, future DICOM export and case
/// save) observe it through the signals below; nothing here renders or computes.
///
/// Coordinates: isocentres are patient LPS mm (as the engine wants). The display frame of the
/// views is PatientScene::grid(), which is LPS too for every series the importer accepts.
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include "proton/proton_plan.hpp"
#include "proton/spot_generation.hpp"

namespace penumbra::gui {

/// One beam and what the BEV panel needs to draw it.
struct PlannedBeam {
  proton::ProtonBeam beam;
  QString targetName;  ///< structure the spots were generated on (empty: none yet)
  proton::SpotGenerationOptions options;
  /// Target seen from the source (from the last spot generation); absent until spots exist.
  std::optional<proton::BevTargetProjection> projection;
  std::vector<double> layerRangesMm;  ///< per layer, the range R its energy was chosen for
  double layerSpacingMm = 0;          ///< actual range spacing used [WE mm]
};

class PlanModel : public QObject {
  Q_OBJECT
public:
  explicit PlanModel(QObject* parent = nullptr);

  int beamCount() const { return int(beams_.size()); }
  const PlannedBeam& beam(int index) const { return beams_.at(std::size_t(index)); }
  const std::vector<PlannedBeam>& beams() const { return beams_; }
  /// The engine's view of the plan: every beam that has spots.
  std::vector<proton::ProtonBeam> engineBeams() const;
  std::size_t totalSpots() const;

  int currentBeam() const { return current_; }
  void setCurrentBeam(int index);

  /// Adds a beam (name made unique) and makes it current; returns its index.
  int addBeam(proton::ProtonBeam beam, const QString& targetName = {});
  void removeBeam(int index);
  void clear();
  /// Changes gantry/couch/isocentre/name. Spots were generated for the old geometry, so a
  /// change of angles or isocentre deletes them (the BEV says to generate again).
  void setGeometry(int index, double gantryDeg, double couchDeg, Vec3 isocenter);
  void setTargetName(int index, const QString& name);
  /// Replaces a beam's layers and spots with a spot-generation result.
  void setSpots(int index, proton::SpotGenerationResult result,
                const proton::SpotGenerationOptions& options, const QString& targetName);
  void removeLayer(int index, int layer);
  void removeSpot(int index, int layer, int spot);
  /// Multiplies every spot weight of every beam by `factor` (plan normalisation).
  void scaleWeights(double factor);
  /// Sets every spot weight, in engineBeams() order (beam, layer, spot; beams without spots
  /// skipped), e.g. from an optimiser. False (nothing changed) when the count differs.
  bool setEngineWeights(const std::vector<double>& weights);

  /// Prescription dose per fraction [Gy]; isodose levels are % of it.
  double prescriptionGy() const { return prescriptionGy_; }
  void setPrescriptionGy(double gy);

signals:
  void beamAdded(int index);
  void beamRemoved(int index);
  /// Geometry, name or target changed.
  void beamChanged(int index);
  /// Layers or spots (or weights) changed.
  void spotsChanged(int index);
  void currentBeamChanged(int index);
  void prescriptionChanged(double gy);
  /// Any change above (one signal for observers that simply redraw everything).
  void planChanged();

private:
  QString uniqueName(const QString& wanted) const;
  bool valid(int index) const { return index >= 0 && index < beamCount(); }

  std::vector<PlannedBeam> beams_;
  int current_ = -1;
  double prescriptionGy_ = 2.0;
};

}  // namespace penumbra::gui
