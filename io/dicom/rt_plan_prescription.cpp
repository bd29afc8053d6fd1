// Prescription of an RT Plan / RT Ion Plan (rt_plan_prescription.hpp says which value is used
// and why), read with DCMTK's typed dcmrt classes; every OFCondition is checked.
#include "dicom/rt_plan_prescription.hpp"

#include <dcmtk/dcmrt/drtionpl.h>
#include <dcmtk/dcmrt/drtplan.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"

namespace fs = std::filesystem;

namespace penumbra::io {

namespace {

std::string gy(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f Gy", v);
  return buf;
}

std::string str(const OFString& s) { return std::string(s.c_str()); }

/// A Dose Reference Sequence item as far as the prescription is concerned.
struct DoseReference {
  long number = 0;
  std::string structureType, type, description;
  double prescriptionGy = 0;  ///< Target Prescription Dose; 0 when absent
  double deliveryMaxGy = 0;   ///< Delivery Maximum Dose; 0 when absent
  std::string label() const {
    return "DoseReference '" + (description.empty() ? std::to_string(number) : description) + "'";
  }
  /// SITE and VOLUME describe the target itself; POINT and COORDINATES are points in it.
  bool isSite() const { return structureType == "SITE" || structureType == "VOLUME"; }
};

template <class Iod>
std::vector<DoseReference> doseReferences(Iod& rt) {
  std::vector<DoseReference> out;
  DRTDoseReferenceSequence& seq = rt.getDoseReferenceSequence();
  for (std::size_t i = 0; i < seq.getNumberOfItems(); ++i) {
    const DRTDoseReferenceSequence::Item& item = seq.getItem(i);
    DoseReference d;
    Sint32 number = 0;
    if (item.getDoseReferenceNumber(number).good()) d.number = number;
    OFString s;
    if (item.getDoseReferenceStructureType(s).good()) d.structureType = str(s);
    if (item.getDoseReferenceType(s).good()) d.type = str(s);
    if (item.getDoseReferenceDescription(s).good()) d.description = str(s);
    Float64 v = 0;
    if (item.getTargetPrescriptionDose(v).good() && std::isfinite(v) && v > 0) d.prescriptionGy = v;
    if (item.getDeliveryMaximumDose(v).good() && std::isfinite(v) && v > 0) d.deliveryMaxGy = v;
    out.push_back(d);
  }
  return out;
}

/// Beam doses per fraction summed per beam dose specification point, for the warnings.
struct PointDose {
  std::vector<double> point;  ///< empty: no point given
  double perFractionGy = 0;
  int beams = 0;
};

template <class Iod>
void readPrescription(Iod& rt, PlanPrescription& p) {
  const std::string name = dcm::shortName(p.file);
  const std::vector<DoseReference> refs = doseReferences(rt);

  // Fraction groups: fractions, dose-reference doses, beam doses.
  std::map<long, double> groupDose;  // dose reference number -> summed Target Prescription Dose
  std::map<long, std::vector<long>> groupsOf;
  std::vector<PointDose> points;
  DRTFractionGroupSequence& fgs = rt.getFractionGroupSequence();
  for (std::size_t g = 0; g < fgs.getNumberOfItems(); ++g) {
    DRTFractionGroupSequence::Item& fg = fgs.getItem(g);
    Sint32 fractions = 0, groupNumber = 0;
    if (fg.getNumberOfFractionsPlanned(fractions).good() && fractions > 0) p.fractions += fractions;
    if (fg.getFractionGroupNumber(groupNumber).bad()) groupNumber = Sint32(g + 1);
    auto& rdrs = fg.getReferencedDoseReferenceSequence();
    for (std::size_t i = 0; i < rdrs.getNumberOfItems(); ++i) {
      Sint32 ref = 0;
      Float64 dose = 0;
      if (rdrs.getItem(i).getReferencedDoseReferenceNumber(ref).good() &&
          rdrs.getItem(i).getTargetPrescriptionDose(dose).good() && std::isfinite(dose) && dose > 0) {
        groupDose[ref] += dose;
        groupsOf[ref].push_back(groupNumber);
      }
    }
    auto& rbs = fg.getReferencedBeamSequence();
    for (std::size_t i = 0; i < rbs.getNumberOfItems(); ++i) {
      Float64 dose = 0;
      if (rbs.getItem(i).getBeamDose(dose).bad() || !std::isfinite(dose) || dose <= 0) continue;
      OFVector<Float64> xyz;
      std::vector<double> point;
      if (rbs.getItem(i).getBeamDoseSpecificationPoint(xyz).good() && xyz.size() == 3) point.assign(xyz.begin(), xyz.end());
      auto it = std::find_if(points.begin(), points.end(), [&](const PointDose& d) {
        if (d.point.size() != point.size()) return false;
        for (std::size_t c = 0; c < point.size(); ++c)
          if (std::abs(d.point[c] - point[c]) > 1e-3) return false;
        return true;
      });
      if (it == points.end()) it = points.insert(points.end(), PointDose{point, 0.0, 0});
      it->perFractionGy += dose;
      ++it->beams;
    }
  }

  // 1. Dose Reference Sequence: TARGET items with a prescription, sites/volumes first.
  std::vector<const DoseReference*> candidates;
  for (const DoseReference& d : refs)
    if (d.type == "TARGET" && d.prescriptionGy > 0) candidates.push_back(&d);
  const bool anySite = std::any_of(candidates.begin(), candidates.end(), [](const DoseReference* d) { return d->isSite(); });
  const DoseReference* best = nullptr;
  for (const DoseReference* d : candidates)
    if ((!anySite || d->isSite()) && (!best || d->prescriptionGy > best->prescriptionGy)) best = d;
  if (best) {
    p.source = PrescriptionSource::DoseReference;
    p.totalGy = best->prescriptionGy;
    p.sourceText = best->label();
    if (!best->structureType.empty() && !best->isSite()) p.sourceText += " (" + best->structureType + ")";
  } else {
    // 2. Fraction groups' doses to TARGET dose references (or to references not described).
    for (const auto& [ref, dose] : groupDose) {
      const auto d = std::find_if(refs.begin(), refs.end(), [ref = ref](const DoseReference& r) { return r.number == ref; });
      if (d != refs.end() && d->type != "TARGET") continue;
      if (p.found() && dose <= p.totalGy) continue;
      p.source = PrescriptionSource::FractionGroup;
      p.totalGy = dose;
      std::string groups;
      for (long g : groupsOf[ref]) groups += (groups.empty() ? "" : "+") + std::to_string(g);
      p.sourceText = "FractionGroup " + groups + ", " +
                     (d != refs.end() ? d->label() : "DoseReference " + std::to_string(ref));
    }
  }

  // What else the plan says, so that the user can judge.
  for (const DoseReference* d : candidates)
    if (p.source == PrescriptionSource::DoseReference && d != best)
      p.messages.warn(name + ": " + d->label() + " " + (d->structureType.empty() ? "" : d->structureType + " ") +
                      "prescribes " + gy(d->prescriptionGy) + "; " + p.sourceText + " (" + gy(p.totalGy) + ") is used");
  for (const DoseReference& d : refs)
    if (d.deliveryMaxGy > 0 && d.prescriptionGy <= 0)
      p.messages.warn(name + ": " + d.label() + " (" + (d.type.empty() ? "no type" : d.type) + ") has a delivery maximum of " +
                      gy(d.deliveryMaxGy) + ": a limit, not a prescription (not used)");
  if (!p.found()) {
    std::string why = refs.empty() ? "it has no Dose Reference Sequence (RT Prescription)"
                                   : "no TARGET dose reference in it has a Target Prescription Dose";
    p.messages.warn(name + (p.planLabel.empty() ? "" : " ('" + p.planLabel + "')") + ": no prescription: " + why +
                    (groupDose.empty() ? ", and its fraction groups give no dose-reference doses" : ""));
    for (const PointDose& d : points) {
      std::string where = "no point";
      if (d.point.size() == 3) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "(%.1f, %.1f, %.1f) mm", d.point[0], d.point[1], d.point[2]);
        where = buf;
      }
      const int fx = std::max(1, p.fractions);
      p.messages.warn(name + ": beam doses at " + where + ": " + gy(d.perFractionGy * fx) + " from " +
                      std::to_string(d.beams) + (d.beams == 1 ? " beam" : " beams") + " over " + std::to_string(fx) +
                      (fx == 1 ? " fraction" : " fractions") +
                      " (a point dose of those beams, not a prescription: not used)");
    }
  }
}

}  // namespace

PlanPrescription readPlanPrescription(const std::string& file) {
  dcm::initialiseDcmtk();
  PlanPrescription p;
  p.file = file;
  std::string error;
  auto ff = dcm::loadFile(file, dcm::LoadDepth::Full, error);
  if (!ff) {
    p.messages.error(error);
    return p;
  }
  DcmDataset& ds = *ff->getDataset();
  const std::string sopClass = dcm::getString(ds, DCM_SOPClassUID);
  const std::string name = dcm::shortName(file);
  p.sopInstanceUid = dcm::getString(ds, DCM_SOPInstanceUID);
  p.planLabel = dcm::getString(ds, DCM_RTPlanLabel);
  if (sopClass == UID_RTIonPlanStorage) {
    DRTIonPlanIOD rt;
    const OFCondition c = rt.read(ds);
    if (c.bad()) {
      p.messages.error(name + ": not a readable RT Ion Plan (" + c.text() + ")");
      return p;
    }
    readPrescription(rt, p);
  } else if (sopClass == UID_RTPlanStorage) {
    DRTPlanIOD rt;
    const OFCondition c = rt.read(ds);
    if (c.bad()) {
      p.messages.error(name + ": not a readable RT Plan (" + c.text() + ")");
      return p;
    }
    readPrescription(rt, p);
  } else {
    p.messages.error(name + ": not an RT Plan or RT Ion Plan (SOP class " + (sopClass.empty() ? "absent" : sopClass) + ")");
  }
  return p;
}

PlanPrescription findPlanPrescription(const std::string& folder, const std::string& referencedPlanUid,
                                      bool recursive) {
  dcm::initialiseDcmtk();
  std::error_code ec;
  PENUMBRA_REQUIRE(fs::is_directory(folder, ec), Io, "no such folder: " + folder);
  std::vector<std::string> files;
  auto add = [&](const fs::directory_entry& e) {
    if (e.is_regular_file(ec)) files.push_back(e.path().string());
  };
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      add(*it);
  } else {
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) add(*it);
  }
  std::sort(files.begin(), files.end());

  struct Plan {
    std::string file, uid;
  };
  std::vector<Plan> plans;
  for (const std::string& f : files) {
    std::string error;
    auto ff = dcm::loadFile(f, dcm::LoadDepth::Headers, error);
    if (!ff || dcm::getString(*ff->getDataset(), DCM_Modality) != "RTPLAN") continue;
    plans.push_back({f, dcm::getString(*ff->getDataset(), DCM_SOPInstanceUID)});
  }
  PlanPrescription none;
  if (plans.empty()) {
    none.messages.warn("no RT Plan in " + folder + ": no prescription to read");
    return none;
  }
  if (!referencedPlanUid.empty()) {
    for (const Plan& plan : plans)
      if (plan.uid == referencedPlanUid) return readPlanPrescription(plan.file);
    none.messages.warn("the RT Dose references RT Plan " + referencedPlanUid + ", which is not in " + folder +
                       " (" + std::to_string(plans.size()) + (plans.size() == 1 ? " other plan" : " other plans") +
                       " there): no prescription read");
    return none;
  }
  if (plans.size() > 1) {
    none.messages.warn("the RT Dose references no RT Plan and " + folder + " holds " + std::to_string(plans.size()) +
                       " plans: no prescription read");
    return none;
  }
  PlanPrescription p = readPlanPrescription(plans.front().file);
  p.messages.warn("the RT Dose references no RT Plan: the only plan of the folder, " +
                  dcm::shortName(plans.front().file) + ", is assumed to be its plan");
  return p;
}

double prescriptionForDose(const PlanPrescription& p, const std::string& summationType, std::string* note) {
  if (!p.found()) return 0;
  const std::string fx = std::to_string(p.fractions) + (p.fractions == 1 ? " fraction" : " fractions");
  if (summationType == "FRACTION") {
    if (p.fractions > 0) {
      if (note) *note = gy(p.perFractionGy()) + " per fraction (" + gy(p.totalGy) + " / " + fx + ")";
      return p.perFractionGy();
    }
    if (note) *note = gy(p.totalGy) + " (a FRACTION dose, but the plan states no number of fractions: the total is used)";
    return p.totalGy;
  }
  if (summationType == "PLAN" || summationType == "MULTI_PLAN" || summationType.empty()) {
    if (note) *note = gy(p.totalGy) + (p.fractions > 0 ? " over " + fx : "");
    return p.totalGy;
  }
  if (note) *note = gy(p.totalGy) + " (the plan's total; the dose is summed per " + summationType + ")";
  return p.totalGy;
}

}  // namespace penumbra::io
