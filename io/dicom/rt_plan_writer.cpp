// RT Plan (photon) export with DRTPlanIOD (dcmrt), every OFCondition checked, atomic file
// replace. The modules shared with the RT Ion Plan come from rt_plan_modules.hpp.
//
// A static beam is two control points (PS3.3 C.8.8.14): the first states energy, jaw
// positions, angles and isocentre with CumulativeMetersetWeight 0, the second only its index
// and CumulativeMetersetWeight 1 (= FinalCumulativeMetersetWeight), so the beam's whole
// meterset (BeamMeterset, MU, in the fraction group) is delivered between them with nothing
// changing.
#include "dicom/rt_plan_writer.hpp"

#include <dcmtk/dcmrt/drtplan.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"
#include "dicom/rt_plan_modules.hpp"

namespace penumbra::io {

namespace {

constexpr const char* kContext = "RT Plan export";
// A DS element's value length is a 16-bit field in explicit VR little endian.
constexpr std::size_t kMaxDsElementChars = 65534;

void check(const OFCondition& c, const char* what) { dcm::check(c, kContext, what); }
std::string ds(double v) { return dcm::decimalString(v); }
std::string is(long v) { return std::to_string(v); }

/// IEC 61217 angles as DICOM wants them: [0, 360) degrees.
double angle360(double deg) {
  double a = std::fmod(deg, 360.0);
  if (a < 0) a += 360.0;
  if (a >= 360.0) a = 0;  // -1e-14 + 360 rounds to 360
  return a;
}

using Polygon = std::vector<std::array<double, 2>>;

/// BlockData of one polygon: "u0\v0\u1\v1..." with coordinates rounded to 0.001 mm (far below
/// the aperture's 0.25-1 mm tracing pixels; keeps large apertures inside one DS element). A
/// closing vertex equal to the first is dropped (DICOM closes the polygon itself).
std::string blockData(const Polygon& poly, std::size_t& points) {
  auto rounded = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  std::size_t n = poly.size();
  if (n > 3 && rounded(poly[n - 1][0]) == rounded(poly[0][0]) &&
      rounded(poly[n - 1][1]) == rounded(poly[0][1]))
    --n;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += '\\';
    s += ds(rounded(poly[i][0]));
    s += '\\';
    s += ds(rounded(poly[i][1]));
  }
  points = n;
  return s;
}

bool finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

void validate(const std::vector<photon::PhotonBeam>& beams, const RtPlanWriteOptions& o) {
  dcm::validatePlanOptions(o, kContext);
  dcm::requireLength(o.blockMaterialId, 16, kContext, "the block material ID");
  PENUMBRA_REQUIRE(!beams.empty(), InvalidArgument, "RT Plan export: the plan has no photon beams");
  PENUMBRA_REQUIRE(o.nominalBeamEnergyMV > 0 && std::isfinite(o.nominalBeamEnergyMV),
                   InvalidArgument, "RT Plan export: the nominal beam energy must be > 0 MV");
  PENUMBRA_REQUIRE(
      o.blockThicknessMm > 0 && std::isfinite(o.blockThicknessMm) &&
          o.sourceToBlockTrayDistanceMm > 0 && std::isfinite(o.sourceToBlockTrayDistanceMm),
      InvalidArgument, "RT Plan export: the block thickness and tray distance must be > 0 mm");
  for (const auto& b : beams) {
    const std::string beam = "RT Plan export: beam '" + b.name + "'";
    dcm::requireLength(b.name, 64, kContext, "the beam name");
    PENUMBRA_REQUIRE(
        std::isfinite(b.gantryDeg) && std::isfinite(b.couchDeg) && std::isfinite(b.collimatorDeg),
        InvalidArgument, beam + ": the gantry, couch or collimator angle is not a finite number");
    PENUMBRA_REQUIRE(finite(b.isocenter), InvalidArgument,
                     beam + ": the isocentre is not a finite position");
    PENUMBRA_REQUIRE(b.sadMm > 0 && std::isfinite(b.sadMm), InvalidArgument,
                     beam + ": the source-axis distance must be a finite number > 0 mm");
    PENUMBRA_REQUIRE(std::isfinite(b.x1Mm) && std::isfinite(b.x2Mm) && std::isfinite(b.y1Mm) &&
                         std::isfinite(b.y2Mm),
                     InvalidArgument, beam + ": a jaw position is not a finite number");
    PENUMBRA_REQUIRE(b.x1Mm < b.x2Mm && b.y1Mm < b.y2Mm, InvalidArgument,
                     beam + ": the jaws are closed or crossed (need x1 < x2 and y1 < y2; got x " +
                         ds(b.x1Mm) + ".." + ds(b.x2Mm) + ", y " + ds(b.y1Mm) + ".." + ds(b.y2Mm) +
                         " mm)");
    PENUMBRA_REQUIRE(
        b.monitorUnits > 0 && std::isfinite(b.monitorUnits), InvalidArgument,
        beam + ": the monitor units must be a finite number > 0 (got " + ds(b.monitorUnits) + ")");
    for (std::size_t p = 0; p < b.aperture.size(); ++p) {
      const std::string poly = beam + ": aperture polygon " + std::to_string(p + 1);
      PENUMBRA_REQUIRE(b.aperture[p].size() >= 3, InvalidArgument,
                       poly + " has fewer than 3 points");
      for (const auto& q : b.aperture[p])
        PENUMBRA_REQUIRE(std::isfinite(q[0]) && std::isfinite(q[1]), InvalidArgument,
                         poly + " has a non-finite point");
      std::size_t points = 0;
      const std::size_t chars = blockData(b.aperture[p], points).size();
      PENUMBRA_REQUIRE(chars <= kMaxDsElementChars, InvalidArgument,
                       poly + " has " + std::to_string(points) +
                           " points, too many for one BlockData element (" + std::to_string(chars) +
                           " characters, at most " + std::to_string(kMaxDsElementChars) + ")");
    }
  }
}

void addJaws(DRTBeamLimitingDevicePositionSequence& seq, const char* type, double a, double b) {
  DRTBeamLimitingDevicePositionSequence::Item* item = nullptr;
  check(seq.addItem(item), "BeamLimitingDevicePositionSequence");
  check(item->setRTBeamLimitingDeviceType(type), "RTBeamLimitingDeviceType");
  check(item->setLeafJawPositions(dcm::decimalStrings({a, b}).c_str()), "LeafJawPositions");
}

void addBlocks(DRTBeamSequence::Item& beam, const photon::PhotonBeam& b,
               const RtPlanWriteOptions& o) {
  long number = 0;
  for (const auto& poly : b.aperture) {
    DRTBlockSequenceInRTBeamsModule::Item* block = nullptr;
    check(beam.getBlockSequence().addItem(block), "BlockSequence");
    std::size_t points = 0;
    const std::string data = blockData(poly, points);
    check(block->setBlockNumber(is(++number).c_str()), "BlockNumber");
    check(block->setBlockName(("Aperture " + is(number)).c_str()), "BlockName");
    // APERTURE: the radiation passes inside the polygon, the material is outside it.
    check(block->setBlockType("APERTURE"), "BlockType");
    check(block->setBlockDivergence("PRESENT"), "BlockDivergence");
    check(block->setSourceToBlockTrayDistance(ds(o.sourceToBlockTrayDistanceMm).c_str()),
          "SourceToBlockTrayDistance");
    check(block->setMaterialID(o.blockMaterialId.c_str()), "MaterialID");
    check(block->setBlockThickness(ds(o.blockThicknessMm).c_str()), "BlockThickness");
    check(block->setBlockNumberOfPoints(is(long(points)).c_str()), "BlockNumberOfPoints");
    check(block->setBlockData(data.c_str()), "BlockData");
  }
}

void addBeam(DRTPlanIOD& rt, const photon::PhotonBeam& b, long number,
             const RtPlanWriteOptions& o) {
  DRTBeamSequence::Item* item = nullptr;
  check(rt.getBeamSequence().addItem(item), "BeamSequence");
  DRTBeamSequence::Item& beam = *item;
  const std::string name = b.name.empty() ? "Beam " + is(number) : b.name;
  check(beam.setBeamNumber(is(number).c_str()), "BeamNumber");
  check(beam.setBeamName(name.c_str()), "BeamName");
  check(beam.setBeamType("STATIC"), "BeamType");
  check(beam.setRadiationType("PHOTON"), "RadiationType");
  check(beam.setTreatmentDeliveryType("TREATMENT"), "TreatmentDeliveryType");
  check(beam.setTreatmentMachineName(o.treatmentMachineName.c_str()), "TreatmentMachineName");
  check(beam.setManufacturer("Penumbra"), "Manufacturer");
  check(beam.setPrimaryDosimeterUnit("MU"), "PrimaryDosimeterUnit");
  check(beam.setSourceAxisDistance(ds(b.sadMm).c_str()), "SourceAxisDistance");
  check(beam.setReferencedPatientSetupNumber("1"), "ReferencedPatientSetupNumber");

  // The jaws: one asymmetric pair along IEC X and one along IEC Y.
  for (const char* type : {"ASYMX", "ASYMY"}) {
    DRTBeamLimitingDeviceSequenceInRTBeamsModule::Item* device = nullptr;
    check(beam.getBeamLimitingDeviceSequence().addItem(device), "BeamLimitingDeviceSequence");
    check(device->setRTBeamLimitingDeviceType(type), "RTBeamLimitingDeviceType");
    check(device->setNumberOfLeafJawPairs("1"), "NumberOfLeafJawPairs");
  }

  check(beam.setNumberOfWedges("0"), "NumberOfWedges");
  check(beam.setNumberOfCompensators("0"), "NumberOfCompensators");
  check(beam.setNumberOfBoli("0"), "NumberOfBoli");
  check(beam.setNumberOfBlocks(is(long(b.aperture.size())).c_str()), "NumberOfBlocks");
  addBlocks(beam, b, o);

  check(beam.setNumberOfControlPoints("2"), "NumberOfControlPoints");
  check(beam.setFinalCumulativeMetersetWeight("1"), "FinalCumulativeMetersetWeight");
  DRTControlPointSequence::Item* cp = nullptr;
  check(beam.getControlPointSequence().addItem(cp), "ControlPointSequence");
  check(cp->setControlPointIndex("0"), "ControlPointIndex");
  check(cp->setNominalBeamEnergy(ds(o.nominalBeamEnergyMV).c_str()), "NominalBeamEnergy");
  addJaws(cp->getBeamLimitingDevicePositionSequence(), "ASYMX", b.x1Mm, b.x2Mm);
  addJaws(cp->getBeamLimitingDevicePositionSequence(), "ASYMY", b.y1Mm, b.y2Mm);
  dcm::setStaticBeamGeometry(*cp, angle360(b.gantryDeg), angle360(b.collimatorDeg),
                             angle360(b.couchDeg), b.isocenter, kContext);
  // Required on the first control point of the RT Beams module (not of the ion one).
  check(cp->setTableTopEccentricAngle("0"), "TableTopEccentricAngle");
  check(cp->setTableTopEccentricRotationDirection("NONE"), "TableTopEccentricRotationDirection");
  check(cp->setCumulativeMetersetWeight("0"), "CumulativeMetersetWeight");
  cp = nullptr;
  check(beam.getControlPointSequence().addItem(cp), "ControlPointSequence");
  check(cp->setControlPointIndex("1"), "ControlPointIndex");
  check(cp->setCumulativeMetersetWeight("1"), "CumulativeMetersetWeight");
}

}  // namespace

RtPlanWriteResult writeRtPlan(const std::string& path, const std::vector<photon::PhotonBeam>& beams,
                              const RtPlanWriteOptions& o) {
  dcm::initialiseDcmtk();
  validate(beams, o);
  RtPlanWriteResult res;
  dcm::settlePlanUids(o, res);
  const dcm::DateTime when = dcm::now();

  DRTPlanIOD rt;
  dcm::setPlanModules(rt, o, res, when, kContext);
  std::vector<double> metersets;  // MU per fraction (PrimaryDosimeterUnit MU)
  for (const auto& b : beams) metersets.push_back(b.monitorUnits);
  dcm::setFractionScheme(rt, o.fractions, metersets, kContext);

  for (std::size_t i = 0; i < beams.size(); ++i) {
    addBeam(rt, beams[i], long(i + 1), o);
    if (beams[i].aperture.size() > 1)
      res.warnings.push_back("beam '" + beams[i].name + "': the aperture has " +
                             std::to_string(beams[i].aperture.size()) +
                             " separate openings, written as as many APERTURE blocks; systems "
                             "that take one aperture block per beam will read only the first");
  }

  DcmFileFormat file;
  check(rt.write(*file.getDataset()), "the RT Plan dataset (a required attribute is missing)");
  dcm::saveFileAtomically(file, path);
  return res;
}

}  // namespace penumbra::io
