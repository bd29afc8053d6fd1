#pragma once
/// DVH queries typed by the user ("D0.03cc, V20Gy, D95%, V95%"), read off a cumulative DVH
/// with the same linear interpolation between bin edges as the statistics (dvh.hpp).
///
/// Grammar (case-insensitive, separated by commas, semicolons or spaces), in the notation of
/// clinical protocols and planning systems (Eclipse's "D95%[Gy]", "V20Gy[cc]"):
///   D<x>%   dose [Gy] received by at least x % of the structure      (D95%, D2%)
///   D<x>cc  dose [Gy] received by the hottest x cm^3                  (D0.03cc, D2cc)
///   V<x>Gy  volume [% of the structure] receiving at least x Gy      (V20Gy)
///   V<x>%   volume [%] receiving at least x % of the prescription    (V95%, V107%)
///   Dmean, Dmax, Dmin                                                 [Gy]
/// An optional result unit in brackets: D...[%] gives the dose in % of the prescription,
/// D...[Gy] Gy (default); V...[cc] the volume in cm^3, V...[%] % (default).
/// Values that cannot be read are NaN: D<x>cc with x above the structure volume, anything in %
/// of the prescription without a prescription, an empty curve.
#include <string>
#include <vector>

#include "dvh/dvh.hpp"

namespace penumbra::dvh {

struct DvhQuery {
  enum class Kind { DoseAtVolume, VolumeAtDose, Mean, Max, Min };
  /// Unit of the number after D or V: the volume of a D query (Percent of the structure or Cc),
  /// the dose of a V query (Gy or Percent of the prescription).
  enum class Unit { Percent, Cc, Gy };
  Kind kind = Kind::DoseAtVolume;
  double value = 0;
  Unit argumentUnit = Unit::Percent;
  Unit resultUnit = Unit::Gy;  ///< D: Gy or Percent (of Rx); V: Percent (of volume) or Cc

  /// Canonical text, e.g. "D95%", "D0.03cc", "V20Gy", "V95%[cc]", "Dmean".
  std::string label() const;
  /// Unit of the result for a column header: "Gy", "%", "% Rx" or "cc".
  std::string resultUnitLabel() const;
};

struct DvhQueryParse {
  std::vector<DvhQuery> queries;
  std::vector<std::string> errors;  ///< one per token that is not a query, naming it
  bool ok() const { return errors.empty(); }
};

/// Parses a list of queries; duplicates (same label) are kept once.
DvhQueryParse parseDvhQueries(const std::string& text);

/// The value of `q` for one structure's DVH (NaN where it cannot be read, see above).
/// `prescriptionGy` serves V<x>% and results in % of the prescription.
double evaluateDvhQuery(const DvhQuery& q, const DvhResult& dvh, double prescriptionGy);

}  // namespace penumbra::dvh
