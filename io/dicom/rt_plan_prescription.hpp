#pragma once
/// The prescription of an RT Plan or RT Ion Plan (DCMTK dcmrt), for showing another system's
/// RT Dose against the dose it was planned to (isodose %, V95/V107).
///
/// Which value is the prescription (PS3.3 C.8.8.10 RT Prescription, C.8.8.13 RT Fraction
/// Scheme), in this order:
///  1. Dose Reference Sequence items of type TARGET with a Target Prescription Dose. Clinical
///     sites and volumes (structure type SITE or VOLUME) come before points (POINT,
///     COORDINATES: calculation points of a plan carry their own doses, e.g. 11.3 Gy at the
///     "CALC POINT" of a 14 Gy Eclipse breast plan). Among several, the highest dose (the
///     primary target of a simultaneous boost); the others are listed in the warnings.
///  2. Fraction Group Sequence > Referenced Dose Reference Sequence: a Target Prescription
///     Dose given per fraction group for a TARGET dose reference, summed over the groups.
/// Target Prescription Dose is the dose over all the fractions (what Eclipse and the pydicom
/// sample write: 14 Gy = 7 x 2 Gy; 30.83 Gy = 30 x the 1.028 Gy beam dose), read the same way
/// in both places.
/// Never used, only reported: Delivery Maximum Dose and the organ-at-risk doses (limits, not
/// prescriptions), and the Beam Dose of each beam at its beam dose specification point (a
/// point dose of one beam per fraction: RayStation's brain SRS plans have no prescription at
/// all and put three isocentre groups' beam doses at three points, 19.6-27.0 Gy over 5
/// fractions, for PTVs that receive 42-62 Gy; summing them, as some tools do, gives 70 Gy).
#include <string>
#include <vector>

#include "import_messages.hpp"

namespace penumbra::io {

enum class PrescriptionSource {
  None,           ///< no prescription in the plan (or no plan)
  DoseReference,  ///< RT Prescription module, Dose Reference Sequence
  FractionGroup   ///< RT Fraction Scheme module, Referenced Dose Reference Sequence
};

struct PlanPrescription {
  PrescriptionSource source = PrescriptionSource::None;
  double totalGy = 0;  ///< prescribed dose over all fractions [Gy]; 0 when none was found
  int fractions = 0;   ///< NumberOfFractionsPlanned summed over the fraction groups (0: absent)
  /// Where the value came from, for the user: "DoseReference 'PTV'" or
  /// "FractionGroup 1, DoseReference 2 'PTV'" (empty when none).
  std::string sourceText;
  std::string file;  ///< the RT Plan read (empty when no plan was found)
  std::string planLabel, sopInstanceUid;
  ImportMessages messages;  ///< warnings: other candidates and what was not used; errors: unreadable

  bool found() const { return source != PrescriptionSource::None && totalGy > 0; }
  /// Dose per fraction [Gy] (0 when the number of fractions is unknown).
  double perFractionGy() const { return fractions > 0 ? totalGy / fractions : 0.0; }
};

/// Reads the prescription of one RT Plan or RT Ion Plan file. Never throws: an unreadable file
/// or another kind of object comes back with an error in messages.
PlanPrescription readPlanPrescription(const std::string& file);

/// The RT Plan of an RT Dose among the files of `folder` (recursively when `recursive`): the
/// one whose SOP Instance UID is `referencedPlanUid`; without a reference, the only plan of the
/// folder. Not found (with a warning saying why): no plan, the referenced plan absent, or
/// several plans and no reference. Never throws except for a missing folder (Error Io).
PlanPrescription findPlanPrescription(const std::string& folder, const std::string& referencedPlanUid,
                                      bool recursive);

/// The dose an RT Dose of DoseSummationType `summationType` is compared with: the total for a
/// PLAN or MULTI_PLAN dose, the dose per fraction for a FRACTION dose (total / fractions); 0
/// when `p` has none. `note` (if given) gets what was done ("62.0 Gy over 5 fractions",
/// "12.4 Gy per fraction (62.0 Gy / 5)", or why the total was kept for another summation type).
double prescriptionForDose(const PlanPrescription& p, const std::string& summationType,
                           std::string* note = nullptr);

}  // namespace penumbra::io
