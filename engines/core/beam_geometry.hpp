#pragma once
/// Beam geometry per IEC 61217 for a head-first-supine (HFS) patient.
///
/// Coordinate systems (all right-handed except the BEV triad noted below):
///  - IEC fixed (f): X_f = patient left, Y_f = towards the gantry = patient superior, Z_f = up =
///    patient anterior. For HFS: x_LPS = X, y_LPS = -Z, z_LPS = Y (LPS: +x left, +y posterior,
///    +z superior).
///  - Gantry (g): rotated about Y_f by the gantry angle theta. At theta = 0 the source is above
///    the patient (+Z_f, anterior), at 90 deg it has moved towards +X_f (patient left), at 180 deg
///    it is below (posterior), at 270 deg on the patient's right. Source in f:
///    SAD (sin theta, 0, cos theta). X_g = (cos theta, 0, -sin theta), Y_g = Y_f.
///  - Patient support (s): rotated about Z_f by the couch angle phi, positive counter-clockwise
///    seen from above (IEC 61217). A vector fixed in the room has support coordinates
///    R_z(-phi) v_f. At couch 90 deg and gantry 90 deg the beam enters from the patient's feet.
///  - Beam's-eye view (BEV): u = X_g, v = Y_g (IEC beam-limiting device axes at collimator 0,
///    where DICOM spot positions live), w = beam axis from the source towards the isocentre
///    (= -Z_g). (u, v, w) is left-handed since u x v = Z_g = -w; only the names matter here.
///
/// Shared by every engine that places beams (proton pencil beam, photon collapsed cone); the
/// frame of a proton::ProtonBeam is in proton/beam_geometry.hpp.
#include "core/vec3.hpp"

namespace penumbra {

/// Source, axis and lateral axes of one beam in patient LPS coordinates [mm].
struct BeamFrame {
  Vec3 source;     ///< virtual source position, LPS mm
  Vec3 isocenter;  ///< LPS mm
  Vec3 u, v;       ///< unit lateral axes (IEC beam-limiting device X and Y at collimator 0)
  Vec3 w;          ///< unit beam axis, source -> isocentre
  double sad = 0;  ///< source to isocentre distance [mm]

  /// Patient point of BEV coordinates (a, b) at the isocentre plane [mm] projected from the
  /// source to axial distance d from the source [mm]: S + d w + (d / SAD)(a u + b v).
  Vec3 bevToPatient(double a, double b, double d) const {
    return source + d * w + (d / sad) * (a * u + b * v);
  }
  /// Inverse of bevToPatient: (a, b) at the isocentre plane and axial distance d [mm]. For
  /// points behind the source (d <= 0), a and b are meaningless and returned as 0.
  void patientToBev(Vec3 p, double& a, double& b, double& d) const {
    const Vec3 rel = p - source;
    d = dot(rel, w);
    if (d <= 0) {
      a = b = 0;
      return;
    }
    a = dot(rel, u) * sad / d;
    b = dot(rel, v) * sad / d;
  }
};

/// Maps an IEC fixed-system vector to patient LPS for a head-first-supine patient.
Vec3 iecFixedToLps(Vec3 iec);

/// Frame of a beam from its gantry/couch angles, isocentre and virtual source distance.
/// Throws InvalidArgument for non-finite angles or a non-positive source distance.
BeamFrame makeBeamFrame(double gantryDeg, double couchDeg, Vec3 isocenter, double sadMm);

}  // namespace penumbra
