// RT Ion Plan import with DRTIonPlanIOD (dcmrt): the pencil-beam-scanning beams of a plan
// (ours or another system's) back into proton::ProtonBeam. Parts we cannot represent
// (setup beams, passive scattering, arcs, non-HFS setups) are skipped or reported as warnings.
#include <dcmtk/dcmrt/drtionpl.h>

#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"
#include "dicom/rt_ion_plan_writer.hpp"

namespace penumbra::io {

namespace {

using ControlPoint = DRTIonControlPointSequence::Item;

// BeamMeterset per beam number from the first fraction group.
std::map<long, double> beamMetersets(DRTIonPlanIOD& rt) {
  std::map<long, double> out;
  DRTFractionGroupSequence& fgs = rt.getFractionGroupSequence();
  if (fgs.getNumberOfItems() == 0) return out;
  auto& rbs = fgs.getItem(0).getReferencedBeamSequence();
  for (std::size_t i = 0; i < rbs.getNumberOfItems(); ++i) {
    Sint32 number = 0;
    Float64 meterset = 0;
    if (rbs.getItem(i).getReferencedBeamNumber(number).good() &&
        rbs.getItem(i).getBeamMeterset(meterset).good())
      out[number] = meterset;
  }
  return out;
}

// Spots of one control point; false when the map or weights are missing or inconsistent.
bool readSpots(const ControlPoint& cp, std::vector<proton::ProtonSpot>& spots) {
  Sint32 n = 0;
  if (cp.getNumberOfScanSpotPositions(n).bad() || n <= 0) return false;
  spots.assign(std::size_t(n), {});
  for (Sint32 i = 0; i < n; ++i) {
    Float32 x = 0, y = 0, w = 0;
    if (cp.getScanSpotPositionMap(x, 2 * i).bad() ||
        cp.getScanSpotPositionMap(y, 2 * i + 1).bad() || cp.getScanSpotMetersetWeights(w, i).bad())
      return false;
    spots[std::size_t(i)] = {double(x), double(y), double(w)};
  }
  return true;
}

// Layers from the control points. The weights of a control point are what is delivered
// between it and the next (PS3.3 C.8.8.25.6), so a control point with weights opens a layer; a
// control point with all-zero weights closes the layer opened just before it (the pattern of
// our writer, Eclipse and RayStation), or else opens a layer of zero-weight spots. Plans that
// put the weights on the second control point of a pair instead (zeros, then weights at the
// same energy and spots) give one layer with those weights. Returns whether an isocentre was
// found.
bool readLayers(const DRTIonBeamSequence::Item& ib, proton::ProtonBeam& beam,
                const std::string& label, std::vector<std::string>& warnings) {
  const DRTIonControlPointSequence& cps = ib.getIonControlPointSequence();
  double energy = 0;
  bool opened = false, openedWithZeros = false, haveIsocenter = false, arcWarned = false;
  for (std::size_t i = 0; i < cps.getNumberOfItems(); ++i) {
    const ControlPoint& cp = cps.getItem(i);
    Float64 value = 0;
    if (cp.getNominalBeamEnergy(value).good()) energy = value;
    if (i == 0) {
      if (cp.getGantryAngle(value).good()) beam.gantryDeg = value;
      if (cp.getPatientSupportAngle(value).good()) beam.couchDeg = value;
    } else if (!arcWarned &&
               ((cp.getGantryAngle(value).good() && std::abs(value - beam.gantryDeg) > 1e-6) ||
                (cp.getPatientSupportAngle(value).good() &&
                 std::abs(value - beam.couchDeg) > 1e-6))) {
      arcWarned = true;
      warnings.push_back(label +
                         ": the angles change between control points (arc); the first "
                         "control point's angles are used");
    }
    OFVector<Float64> iso;
    if (!haveIsocenter && cp.getIsocenterPosition(iso).good() && iso.size() == 3) {
      beam.isocenter = {iso[0], iso[1], iso[2]};
      haveIsocenter = true;
    }
    std::vector<proton::ProtonSpot> spots;
    if (!readSpots(cp, spots)) {
      if (i + 1 < cps.getNumberOfItems())
        warnings.push_back(label + ": control point " + std::to_string(i) +
                           " has no usable spot map; skipped");
      opened = false;
      continue;
    }
    bool anyWeight = false;
    for (const auto& s : spots) anyWeight |= s.weight > 0;
    if (!anyWeight && opened) {
      opened = false;  // the closing control point of the layer
      continue;
    }
    if (energy <= 0) {
      warnings.push_back(label + ": control point " + std::to_string(i) +
                         " has no nominal beam energy; skipped");
      continue;
    }
    const bool samePair = opened && openedWithZeros && beam.layers.back().energyMeV == energy &&
                          beam.layers.back().spots.size() == spots.size();
    if (samePair)
      beam.layers.back().spots = std::move(spots);  // weights on the second control point
    else
      beam.layers.push_back({energy, std::move(spots)});
    openedWithZeros = !anyWeight && !samePair;
    opened = !samePair;
  }
  return haveIsocenter;
}

}  // namespace

std::vector<proton::ProtonBeam> readRtIonPlan(const std::string& path,
                                              std::vector<std::string>* warningsOut) {
  std::vector<std::string> warnings;
  std::string error;
  auto file = dcm::loadFile(path, dcm::LoadDepth::Full, error);
  if (!file) throw Error(ErrorCode::Io, error, __FILE__, __LINE__);
  const std::string sopClass = dcm::getString(*file->getDataset(), DCM_SOPClassUID);
  if (sopClass != UID_RTIonPlanStorage)
    throw Error(
        ErrorCode::Format,
        dcm::shortName(path) + ": not an RT Ion Plan (SOP class " +
            (sopClass.empty() ? "missing" : dcmFindNameOfUID(sopClass.c_str(), sopClass.c_str())) +
            ")",
        __FILE__, __LINE__);
  DRTIonPlanIOD rt;
  const OFCondition read = rt.read(*file->getDataset());
  if (read.bad())
    throw Error(ErrorCode::Format,
                dcm::shortName(path) + ": not a readable RT Ion Plan (" + read.text() + ")",
                __FILE__, __LINE__);

  DRTPatientSetupSequence& setups = rt.getPatientSetupSequence();
  for (std::size_t i = 0; i < setups.getNumberOfItems(); ++i) {
    OFString position;
    if (setups.getItem(i).getPatientPosition(position).good() && position != "HFS")
      warnings.push_back("patient position " + std::string(position.c_str()) +
                         ": beam angles are interpreted as for head-first supine");
  }
  const std::map<long, double> metersets = beamMetersets(rt);

  std::vector<proton::ProtonBeam> beams;
  DRTIonBeamSequence& ibs = rt.getIonBeamSequence();
  for (std::size_t b = 0; b < ibs.getNumberOfItems(); ++b) {
    const DRTIonBeamSequence::Item& ib = ibs.getItem(b);
    OFString name, radiation, delivery, scanMode, unit;
    Sint32 number = 0;
    ib.getBeamName(name);
    ib.getBeamNumber(number);
    const std::string label = "beam " + std::to_string(number) + " '" + name.c_str() + "'";
    ib.getRadiationType(radiation);
    ib.getTreatmentDeliveryType(delivery);
    ib.getScanMode(scanMode);
    if (!delivery.empty() && delivery != "TREATMENT") {
      warnings.push_back(label + ": " + delivery.c_str() + " beam skipped");
      continue;
    }
    if (radiation != "PROTON" || (scanMode != "MODULATED" && scanMode != "MODULATED_SPEC")) {
      warnings.push_back(label + ": " + radiation.c_str() + " " + scanMode.c_str() +
                         " beam skipped (only proton pencil-beam scanning is supported)");
      continue;
    }
    proton::ProtonBeam beam;
    beam.name = name.c_str();
    Float32 vsadX = 0, vsadY = 0;
    if (ib.getVirtualSourceAxisDistances(vsadX, 0).good() &&
        ib.getVirtualSourceAxisDistances(vsadY, 1).good()) {
      beam.virtualSourceDistanceMm = 0.5 * (double(vsadX) + double(vsadY));
      if (std::abs(vsadX - vsadY) > 1e-3f)
        warnings.push_back(label +
                           ": virtual source distances differ in X and Y; their mean "
                           "is used");
    } else {
      warnings.push_back(label + ": no virtual source axis distances; " +
                         dcm::decimalString(beam.virtualSourceDistanceMm) + " mm assumed");
    }
    if (!readLayers(ib, beam, label, warnings))
      warnings.push_back(label + ": no isocentre position; (0, 0, 0) assumed");
    if (beam.layers.empty()) {
      warnings.push_back(label + ": no energy layers with spots; skipped");
      continue;
    }

    // Spot weights -> units of kProtonsPerWeightUnit protons: the delivered meterset of a
    // spot is BeamMeterset * weight / FinalCumulativeMetersetWeight.
    Float64 final = 0;
    ib.getFinalCumulativeMetersetWeight(final);
    ib.getPrimaryDosimeterUnit(unit);
    const auto meterset = metersets.find(number);
    double scale = 1;
    if (meterset == metersets.end() || final <= 0) {
      warnings.push_back(label + ": no beam meterset; spot weights are left relative");
    } else {
      scale = meterset->second / final;
      if (unit == "NP")
        scale /= proton::kProtonsPerWeightUnit;
      else
        warnings.push_back(label + ": meterset unit " + (unit.empty() ? "(none)" : unit.c_str()) +
                           ", not NP: spot weights are in that unit, not 1e9 protons");
    }
    for (auto& l : beam.layers)
      for (auto& s : l.spots) s.weight *= scale;
    beams.push_back(std::move(beam));
  }
  if (beams.empty()) warnings.push_back(dcm::shortName(path) + ": no usable ion beams");
  if (warningsOut) warningsOut->insert(warningsOut->end(), warnings.begin(), warnings.end());
  return beams;
}

}  // namespace penumbra::io
