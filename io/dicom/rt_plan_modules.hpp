#pragma once
// The parts of an RT Plan and an RT Ion Plan that do not depend on the radiation: UIDs, the
// common modules, RT General Plan (with the structure set reference), RT Prescription, RT
// Patient Setup, RT Fraction Scheme, and the angles, isocentre and table of a static beam's
// first control point. Templates over the dcmrt classes (DRTPlanIOD / DRTIonPlanIOD and their
// control point items share the setter names) and over the write options (RtPlanWriteOptions /
// RtIonPlanWriteOptions share the field names), so both writers say these things one way.
// Internal to io/dicom, like dcmtk_util.hpp.
#include <dcmtk/dcmrt/seq/drtdrs.h>   // DoseReferenceSequence
#include <dcmtk/dcmrt/seq/drtfgs.h>   // FractionGroupSequence
#include <dcmtk/dcmrt/seq/drtpss.h>   // PatientSetupSequence
#include <dcmtk/dcmrt/seq/drtrsss.h>  // ReferencedStructureSetSequence

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/vec3.hpp"
#include "dicom/dcmtk_util.hpp"

namespace penumbra::io::dcm {

/// DCMTK's setters check VM and characters but not the VR's maximum length; dciodvfy does.
/// Throws InvalidArgument "<context>: <what> '<value>' is longer than <max> characters".
inline void requireLength(const std::string& value, std::size_t max, const char* context,
                          const char* what) {
  PENUMBRA_REQUIRE(value.size() <= max, InvalidArgument,
                   std::string(context) + ": " + what + " '" + value + "' is longer than " +
                       std::to_string(max) + " characters");
}

/// The checks every plan export makes on its options: texts within their VR (SH 16, LO 64),
/// at least one fraction, a finite prescription.
template <class Options>
void validatePlanOptions(const Options& o, const char* context) {
  requireLength(o.planLabel, 16, context, "the plan label");
  requireLength(o.treatmentMachineName, 16, context, "the treatment machine name");
  requireLength(o.studyId, 16, context, "the study ID");
  requireLength(o.planName, 64, context, "the plan name");
  requireLength(o.patientId, 64, context, "the patient ID");
  requireLength(o.targetName, 64, context, "the target name");
  requireLength(o.seriesDescription, 64, context, "the series description");
  PENUMBRA_REQUIRE(o.fractions >= 1, InvalidArgument,
                   std::string(context) + ": the number of fractions must be at least 1");
  PENUMBRA_REQUIRE(std::isfinite(o.dosePerFractionGy), InvalidArgument,
                   std::string(context) + ": the dose per fraction is not a finite number");
}

/// The UIDs of a new plan: the given study, series and frame of reference or new ones (a new
/// frame of reference with a warning: the isocentres then do not register with the CT).
template <class Options, class Result>
void settlePlanUids(const Options& o, Result& res) {
  res.studyInstanceUid = o.studyInstanceUid.empty() ? newUid() : o.studyInstanceUid;
  res.seriesInstanceUid = o.seriesInstanceUid.empty() ? newUid() : o.seriesInstanceUid;
  res.sopInstanceUid = newUid();
  res.frameOfReferenceUid = o.frameOfReferenceUid;
  if (res.frameOfReferenceUid.empty()) {
    res.frameOfReferenceUid = newUid();
    res.warnings.push_back(
        "no frame of reference given: a new one was created, so the plan's "
        "isocentres will not register with the CT in other systems");
  }
}

/// Common modules (patient, study, RT series, frame of reference, equipment, SOP common), RT
/// General Plan, RT Prescription (when a target or dose is given) and RT Patient Setup (HFS:
/// the engines' geometry assumes head-first supine).
template <class Iod, class Options, class Result>
void setPlanModules(Iod& rt, const Options& o, Result& res, const DateTime& when, const char* ctx) {
  setCommonModules(rt, commonModulesOf(o, res, "RTPLAN"), when, ctx);

  // RT General Plan.
  check(rt.setRTPlanLabel(o.planLabel.c_str()), ctx, "RTPlanLabel");
  if (!o.planName.empty()) check(rt.setRTPlanName(o.planName.c_str()), ctx, "RTPlanName");
  if (!o.planDescription.empty())
    check(rt.setRTPlanDescription(o.planDescription.c_str()), ctx, "RTPlanDescription");
  check(rt.setRTPlanDate(when.date.c_str()), ctx, "RTPlanDate");
  check(rt.setRTPlanTime(when.time.c_str()), ctx, "RTPlanTime");
  check(rt.setApprovalStatus("UNAPPROVED"), ctx, "ApprovalStatus");
  if (!o.referencedStructureSetSopInstanceUid.empty()) {
    check(rt.setRTPlanGeometry("PATIENT"), ctx, "RTPlanGeometry");
    DRTReferencedStructureSetSequence::Item* ss = nullptr;
    check(rt.getReferencedStructureSetSequence().addItem(ss), ctx,
          "ReferencedStructureSetSequence");
    check(ss->setReferencedSOPClassUID(UID_RTStructureSetStorage), ctx, "ReferencedSOPClassUID");
    check(ss->setReferencedSOPInstanceUID(o.referencedStructureSetSopInstanceUid.c_str()), ctx,
          "ReferencedSOPInstanceUID");
  } else {
    // PS3.3 C.8.8.9: the structure set reference is required when the geometry is PATIENT.
    check(rt.setRTPlanGeometry("TREATMENT_DEVICE"), ctx, "RTPlanGeometry");
    res.warnings.push_back(
        "no structure set given: RTPlanGeometry written as TREATMENT_DEVICE "
        "(PATIENT requires a referenced structure set)");
  }

  // RT Prescription: the target as a site, since we do not know its ROI number.
  if (!o.targetName.empty() || o.dosePerFractionGy > 0) {
    DRTDoseReferenceSequence::Item* dr = nullptr;
    check(rt.getDoseReferenceSequence().addItem(dr), ctx, "DoseReferenceSequence");
    check(dr->setDoseReferenceNumber("1"), ctx, "DoseReferenceNumber");
    check(dr->setDoseReferenceUID(newUid().c_str()), ctx, "DoseReferenceUID");
    check(dr->setDoseReferenceStructureType("SITE"), ctx, "DoseReferenceStructureType");
    check(dr->setDoseReferenceDescription(o.targetName.c_str()), ctx, "DoseReferenceDescription");
    check(dr->setDoseReferenceType("TARGET"), ctx, "DoseReferenceType");
    if (o.dosePerFractionGy > 0)
      check(dr->setTargetPrescriptionDose(decimalString(o.dosePerFractionGy * o.fractions).c_str()),
            ctx, "TargetPrescriptionDose");
  }

  // RT Patient Setup: the engine's geometry assumes head-first supine.
  DRTPatientSetupSequence::Item* ps = nullptr;
  check(rt.getPatientSetupSequence().addItem(ps), ctx, "PatientSetupSequence");
  check(ps->setPatientSetupNumber("1"), ctx, "PatientSetupNumber");
  check(ps->setPatientPosition("HFS"), ctx, "PatientPosition");
}

/// RT Fraction Scheme: one fraction group of `fractions` fractions referencing beams 1..n with
/// BeamMeterset `metersets[i]` per fraction (in the beams' PrimaryDosimeterUnit).
template <class Iod>
void setFractionScheme(Iod& rt, int fractions, const std::vector<double>& metersets,
                       const char* ctx) {
  DRTFractionGroupSequence::Item* fg = nullptr;
  check(rt.getFractionGroupSequence().addItem(fg), ctx, "FractionGroupSequence");
  check(fg->setFractionGroupNumber("1"), ctx, "FractionGroupNumber");
  check(fg->setNumberOfFractionsPlanned(std::to_string(fractions).c_str()), ctx,
        "NumberOfFractionsPlanned");
  check(fg->setNumberOfBeams(std::to_string(metersets.size()).c_str()), ctx, "NumberOfBeams");
  check(fg->setNumberOfBrachyApplicationSetups("0"), ctx, "NumberOfBrachyApplicationSetups");
  for (std::size_t i = 0; i < metersets.size(); ++i) {
    DRTReferencedBeamSequenceInRTFractionSchemeModule::Item* rb = nullptr;
    check(fg->getReferencedBeamSequence().addItem(rb), ctx, "ReferencedBeamSequence");
    check(rb->setReferencedBeamNumber(std::to_string(i + 1).c_str()), ctx, "ReferencedBeamNumber");
    check(rb->setBeamMeterset(decimalString(metersets[i]).c_str()), ctx, "BeamMeterset");
  }
}

/// The attributes a static beam states once, on its first control point: gantry, beam
/// limiting device (collimator) and patient support angles with rotation direction NONE, a
/// level table top (pitch and roll 0) at positions not known here (empty, type 2C), and the
/// isocentre (patient LPS mm). Angles are written as given (degrees).
template <class ControlPoint>
void setStaticBeamGeometry(ControlPoint& cp, double gantryDeg, double collimatorDeg,
                           double couchDeg, const Vec3& isocenter, const char* ctx) {
  check(cp.setGantryAngle(decimalString(gantryDeg).c_str()), ctx, "GantryAngle");
  check(cp.setGantryRotationDirection("NONE"), ctx, "GantryRotationDirection");
  check(cp.setBeamLimitingDeviceAngle(decimalString(collimatorDeg).c_str()), ctx,
        "BeamLimitingDeviceAngle");
  check(cp.setBeamLimitingDeviceRotationDirection("NONE"), ctx,
        "BeamLimitingDeviceRotationDirection");
  check(cp.setPatientSupportAngle(decimalString(couchDeg).c_str()), ctx, "PatientSupportAngle");
  check(cp.setPatientSupportRotationDirection("NONE"), ctx, "PatientSupportRotationDirection");
  check(cp.setTableTopPitchAngle(0.0f), ctx, "TableTopPitchAngle");
  check(cp.setTableTopPitchRotationDirection("NONE"), ctx, "TableTopPitchRotationDirection");
  check(cp.setTableTopRollAngle(0.0f), ctx, "TableTopRollAngle");
  check(cp.setTableTopRollRotationDirection("NONE"), ctx, "TableTopRollRotationDirection");
  check(cp.setTableTopVerticalPosition(""), ctx, "TableTopVerticalPosition");
  check(cp.setTableTopLongitudinalPosition(""), ctx, "TableTopLongitudinalPosition");
  check(cp.setTableTopLateralPosition(""), ctx, "TableTopLateralPosition");
  check(cp.setIsocenterPosition(decimalStrings({isocenter.x, isocenter.y, isocenter.z}).c_str()),
        ctx, "IsocenterPosition");
}

}  // namespace penumbra::io::dcm
