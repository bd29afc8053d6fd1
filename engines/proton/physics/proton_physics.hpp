#pragma once
/// Physics models of the proton pencil-beam engine (CPU, double precision), one include:
///  - bragg_kleeman.hpp        range-energy relation in water (NIST PSTAR fits)
///  - parabolic_cylinder.hpp   D_{-nu}(x) for Bortfeld's curve
///  - bortfeld_bragg_curve.hpp analytical Bragg curve with straggling, energy spread, nuclear loss
///  - depth_dose_table.hpp     tabulated IDD curves; the DepthDoseModel interface
///  - mcs_highland.hpp         lateral sigma from multiple Coulomb scattering (Highland,
///  Fermi-Eyges)
///  - beam_model.hpp           spot size in air and energy spread per energy (resources/beam)
///  - energy_tables.hpp        per-energy IDD and sigma(WEPL) lookup tables for the dose engine
#include "proton/physics/beam_model.hpp"
#include "proton/physics/bortfeld_bragg_curve.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/physics/depth_dose_table.hpp"
#include "proton/physics/energy_tables.hpp"
#include "proton/physics/mcs_highland.hpp"
#include "proton/physics/parabolic_cylinder.hpp"
