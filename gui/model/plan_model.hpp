#pragma once
/// The plan being edited: proton beams with their layers and spots and photon beams with their
/// jaws or target-conformal aperture, the target each was placed on, and the prescription.
/// Panels (beam editor, BEV, DICOM export and case save) observe it through the signals below;
/// nothing here renders or computes.
///
/// Both modalities keep their name, gantry and couch angles and isocentre in PlannedBeam::beam
/// (a proton::ProtonBeam without layers for a photon beam), so the beam list, the patient tree
/// and the beam displays treat every beam alike; the photon-only fields live in
/// PlannedBeam::photon, and photonEngineBeam() assembles what the photon engine reads.
///
/// Coordinates: isocentres are patient LPS mm (as the engines want). The display frame of the
/// views is PatientScene::grid(), which is LPS too for every series the importer accepts.
#include <array>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include "photon/photon_dose.hpp"
#include "proton/beam_geometry.hpp"
#include "proton/proton_plan.hpp"
#include "proton/spot_generation.hpp"

namespace penumbra::gui {

enum class BeamModality { Proton, Photon };

/// BEV polygons at the isocentre plane (u, v mm), as photon::PhotonBeam::aperture.
using BevPolygons = std::vector<std::vector<std::array<double, 2>>>;

/// What a photon beam adds to the shared geometry.
struct PhotonField {
  /// Collimator angle, SAD, jaws, aperture polygons and MU. Its name, gantry, couch and
  /// isocentre are ignored: PlannedBeam::beam holds them (photonEngineBeam() copies them in).
  photon::PhotonBeam beam;
  /// Structure the aperture conforms to (photon::conformalAperture, grown by apertureMarginMm);
  /// empty: an open field shaped by the jaws alone.
  QString apertureTarget;
  double apertureMarginMm = 5;
  /// The beam's target (PlannedBeam::targetName) projected from the source onto the isocentre
  /// plane (margin 0), for the BEV; empty when there is no target or it misses the beam.
  BevPolygons targetOutline;
  /// The aperture and outline were made for other angles or another isocentre: the controller
  /// recomputes them (PlanModel::photonShapesStale).
  bool shapesStale = false;
};

/// One beam and what the BEV panel needs to draw it.
struct PlannedBeam {
  BeamModality modality = BeamModality::Proton;
  /// Name, gantry, couch, isocentre (both modalities); layers and spots (protons only). For a
  /// photon beam virtualSourceDistanceMm mirrors the SAD, so proton::makeBeamFrame(beam) puts
  /// the source where the photon engine does (the collimator rotation aside: beamFrame()).
  proton::ProtonBeam beam;
  QString targetName;  ///< structure the spots were generated on (empty: none yet)
  proton::SpotGenerationOptions options;
  /// Target seen from the source (from the last spot generation); absent until spots exist.
  std::optional<proton::BevTargetProjection> projection;
  std::vector<double> layerRangesMm;  ///< per layer, the range R its energy was chosen for
  double layerSpacingMm = 0;          ///< actual range spacing used [WE mm]
  PhotonField photon;                 ///< photon beams only

  bool isPhoton() const { return modality == BeamModality::Photon; }
};

/// The photon engine's beam: PlannedBeam::photon.beam with the shared geometry copied in.
photon::PhotonBeam photonEngineBeam(const PlannedBeam& beam);
/// Source, axis and lateral axes of any beam; for photon beams u and v are the IEC
/// beam-limiting-device axes after the collimator rotation (IEC 61217: positive collimator
/// angles turn the device counter-clockwise seen from the source, u' = cos c u + sin c v,
/// v' = -sin c u + cos c v), the axes the jaws and aperture polygons are given in.
proton::BeamFrame beamFrame(const PlannedBeam& beam);

class PlanModel : public QObject {
  Q_OBJECT
public:
  explicit PlanModel(QObject* parent = nullptr);

  int beamCount() const { return int(beams_.size()); }
  const PlannedBeam& beam(int index) const { return beams_.at(std::size_t(index)); }
  const std::vector<PlannedBeam>& beams() const { return beams_; }
  /// The proton engine's view of the plan: every proton beam that has spots.
  std::vector<proton::ProtonBeam> engineBeams() const;
  std::size_t totalSpots() const;
  /// The photon engine's view of the plan: every photon beam (an open field needs nothing
  /// more), in plan order.
  std::vector<photon::PhotonBeam> photonEngineBeams() const;
  int photonBeamCount() const;

  int currentBeam() const { return current_; }
  void setCurrentBeam(int index);

  /// Adds a proton beam (name made unique) and makes it current; returns its index.
  int addBeam(proton::ProtonBeam beam, const QString& targetName = {});
  /// Adds a photon beam (name, gantry, couch and isocentre taken from `field.beam`; name made
  /// unique) and makes it current; returns its index.
  int addPhotonBeam(PhotonField field, const QString& targetName = {});
  void removeBeam(int index);
  void clear();
  /// Changes gantry/couch/isocentre/name. Spots were generated for the old geometry, so a
  /// change of angles or isocentre deletes them (the BEV says to generate again); a photon
  /// beam's aperture and target outline become stale (photonShapesStale).
  void setGeometry(int index, double gantryDeg, double couchDeg, Vec3 isocenter);
  /// Photon beams: collimator angle, SAD, jaws (x1 < x2, y1 < y2, mm at the isocentre plane)
  /// and MU. A new collimator angle or SAD makes the aperture and outline stale.
  void setPhotonSettings(int index, double collimatorDeg, double sadMm, std::array<double, 4> jawsMm,
                         double monitorUnits);
  /// Photon beams: the conformal aperture (target, margin, polygons; empty target: open field)
  /// and the target outline, as computed by the controller; clears the stale flag.
  void setPhotonShapes(int index, const QString& apertureTarget, double marginMm, BevPolygons aperture,
                       BevPolygons targetOutline);
  /// Multiplies every photon beam's MU by `factor` (plan normalisation).
  void scaleMonitorUnits(double factor);
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

  /// The prescription [Gy] doses are shown against: isodose levels, V95/V107 and the cursor
  /// read-out are % of it. For the plan's own doses (one fraction) the dose per fraction; for
  /// an imported RT Dose what that dose sums (the plan's total for a PLAN dose).
  double prescriptionGy() const { return prescriptionGy_; }
  /// Where the prescription came from, for the user ("RP1.2.dcm, DoseReference 'PTV'"; empty:
  /// the default or typed in the Dose panel).
  QString prescriptionSource() const { return prescriptionSource_; }
  /// Sets the prescription (ignored unless > 0) and clears its source.
  void setPrescriptionGy(double gy);
  /// Sets the prescription and says where it came from.
  void setPrescription(double gy, const QString& source);

signals:
  void beamAdded(int index);
  void beamRemoved(int index);
  /// Geometry, name or target changed.
  void beamChanged(int index);
  /// Layers or spots (or weights) changed.
  void spotsChanged(int index);
  void currentBeamChanged(int index);
  void prescriptionChanged(double gy);
  /// A photon beam's aperture or target outline no longer matches its geometry.
  void photonShapesStale(int index);
  /// Any change above (one signal for observers that simply redraw everything).
  void planChanged();

private:
  QString uniqueName(const QString& wanted) const;
  bool valid(int index) const { return index >= 0 && index < beamCount(); }

  std::vector<PlannedBeam> beams_;
  int current_ = -1;
  double prescriptionGy_ = 2.0;
  QString prescriptionSource_;
};

}  // namespace penumbra::gui
