#pragma once
// Builds the per-run constants of the transport step (layer boundaries, critical angles, bin
// inverses, launch weight) from the public medium and config, in the backend's precision.
#include <cmath>

#include "mcml/mcml.hpp"
#include "mcml/mcml_transport.hpp"

namespace penumbra::mcml {

template <typename Real>
TransportSetup<Real> makeSetup(const LayeredMedium& m, const McmlConfig& c) {
  TransportSetup<Real> s{};
  const int nl = int(m.layers.size());
  s.numLayers = nl;
  double z = 0;
  s.layer[0] = LayerParams<Real>{};
  s.layer[0].n = Real(m.nAbove);
  s.layer[nl + 1] = LayerParams<Real>{};
  s.layer[nl + 1].n = Real(m.nBelow);
  for (int i = 1; i <= nl; ++i) {
    const Layer& l = m.layers[std::size_t(i - 1)];
    LayerParams<Real>& p = s.layer[i];
    p.z0 = Real(z);
    z += l.d;
    p.z1 = Real(z);
    p.n = Real(l.n);
    p.mua = Real(l.mua);
    p.mus = Real(l.mus);
    p.g = Real(l.g);
    p.glass = (l.mua == 0.0 && l.mus == 0.0) ? 1 : 0;
    p.invMut = p.glass ? Real(0) : Real(1.0 / (l.mua + l.mus));
    p.albedo = p.glass ? Real(1) : Real(l.mus / (l.mua + l.mus));
    // mus < mua <=> albedo < 1/2; the chosen factor rounds to a value >= 1/2 (0.5 is exact).
    p.splitIsAbsorbed = (!p.glass && l.mus < l.mua) ? 1 : 0;
    p.splitFactor = p.glass ? Real(1)
                    : p.splitIsAbsorbed ? Real(l.mua / (l.mua + l.mus))
                                        : p.albedo;
  }
  // MCML CriticalAngle: cos of the critical angle, 0 where the neighbour is denser.
  for (int i = 1; i <= nl; ++i) {
    const double n1 = m.layers[std::size_t(i - 1)].n;
    const double n0 = i == 1 ? m.nAbove : m.layers[std::size_t(i - 2)].n;
    const double n2 = i == nl ? m.nBelow : m.layers[std::size_t(i)].n;
    s.layer[i].cosCrit0 = n1 > n0 ? Real(std::sqrt(1.0 - n0 * n0 / (n1 * n1))) : Real(0);
    s.layer[i].cosCrit1 = n1 > n2 ? Real(std::sqrt(1.0 - n2 * n2 / (n1 * n1))) : Real(0);
  }
  const double da = 0.5 * 3.14159265358979323846 / c.na;
  s.invDz = Real(1.0 / c.dz);
  s.invDr = Real(1.0 / c.dr);
  s.invDa = Real(1.0 / da);
  s.nz = c.nz;
  s.nr = c.nr;
  s.na = c.na;
  s.weightThreshold = Real(c.weightThreshold);
  s.chance = Real(c.rouletteChance);
  s.invChance = Real(1.0 / c.rouletteChance);
  s.launchWeight = Real(1.0 - specularReflectance(m));
  const bool glassFirst = s.layer[1].glass != 0;
  s.startLayer = glassFirst && nl > 1 ? 2 : 1;
  s.startZ = glassFirst && nl > 1 ? s.layer[2].z0 : Real(0);
  s.seed = c.seed;
  return s;
}

}  // namespace penumbra::mcml
