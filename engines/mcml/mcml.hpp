#pragma once
/// MCML: steady-state Monte Carlo light transport in multi-layered tissue after Wang, Jacques and
/// Zheng, "MCML - Monte Carlo modeling of light transport in multi-layered tissues", Comput.
/// Methods Programs Biomed. 47 (1995) 131-146. A pencil beam enters normally at the origin; the
/// outputs (reflectance, absorption, transmittance and their r/z/angle resolved arrays) are
/// scaled exactly as MCML scales them. CPU reference (double) and CUDA engine (float physics,
/// tally method selectable at run time); lengths in cm, coefficients in cm^-1.
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"

namespace penumbra::mcml {

constexpr int kMaxLayers = 30;  ///< tissue layers per medium (constant memory on the GPU)

/// One tissue layer. A layer with mua = mus = 0 is "glass" (MCML: no interaction inside).
struct Layer {
  double n = 1.0;    ///< refractive index
  double mua = 0.0;  ///< absorption coefficient [cm^-1]
  double mus = 0.0;  ///< scattering coefficient [cm^-1]
  double g = 0.0;    ///< Henyey-Greenstein anisotropy
  double d = 0.0;    ///< thickness [cm]
};

struct LayeredMedium {
  double nAbove = 1.0;  ///< ambient medium above the stack
  double nBelow = 1.0;  ///< ambient medium below the stack
  std::vector<Layer> layers;  ///< layer 1 (surface) first
};

/// How the CUDA engine accumulates A[r][z] (and Rd/Tt). The CPU always tallies in double.
enum class TallyMethod {
  FloatAtomic,           ///< atomicAdd on float (drifts once bins are large)
  DoubleAtomic,          ///< native atomicAdd on double
  WarpAggregatedDouble,  ///< lanes with the same bin combine by shuffles, one double atomic
  KahanFloatPair,        ///< (sum, compensation) float pair updated by a 64-bit CAS loop
  FixedPoint64,          ///< 64-bit integer atomics, weight x 2^32: deterministic for a seed
  SharedBuffer,          ///< fixed point; the high-fluence region near the source in shared memory
  RegisterCache,         ///< fixed point; the last bin accumulated in a register (Lo et al.)
  SharedRegister,        ///< both of the above (Lo et al.'s final scheme)
};
const char* toString(TallyMethod m);
/// "float", "double", "warp-double", "kahan", "fixed64", "shared", "register", "shared-register".
TallyMethod parseTallyMethod(const std::string& text);
std::vector<TallyMethod> allTallyMethods();
/// True for methods whose totals conserve energy to ~1e-9 (all but FloatAtomic).
bool tallyConservesEnergy(TallyMethod m);

struct McmlConfig {
  std::uint64_t packets = 100000;  ///< photon packets launched
  double dz = 0.01, dr = 0.01;     ///< grid spacing [cm]
  int nz = 100, nr = 100, na = 30;  ///< grid bins in z, r and exit angle (da = pi / (2 na))
  std::uint64_t seed = 1;
  TallyMethod tally = TallyMethod::FixedPoint64;
  Backend backend = Backend::Auto;
  int batches = 10;        ///< independent batches for standard errors (>= 2)
  int cpuThreads = 0;      ///< CPU backend: 0 = all hardware threads
  int maxDevices = 0;      ///< CUDA backend: 0 = every usable GPU
  double weightThreshold = 1e-4;  ///< roulette threshold (MCML WEIGHT)
  double rouletteChance = 0.1;    ///< roulette survival chance (MCML CHANCE)
  /// CPU backend: runMcml refuses a run whose estimated time (estimateCpuSeconds) exceeds this
  /// [s]; 0: no limit. One day by default: 10^12 packets in skin take months on a workstation
  /// and used to start anyway, with no way to tell from the outside.
  double maxCpuSeconds = 86400;
};

/// Results scaled as MCML scales them (per launched packet; A_rz in cm^-3, Rd_r in cm^-2,
/// Rd_a in sr^-1, Rd_ra in cm^-2 sr^-1, A_z in cm^-1). Arrays are row-major [r][z] / [r][a].
struct McmlResult {
  double Rsp = 0, Rd = 0, A = 0, Tt = 0;
  double RdErr = 0, AErr = 0, TtErr = 0;  ///< standard errors from the batches
  /// Net weight added by roulette per packet (survivors gain 9w, losers lose w): the launched
  /// weight is conserved as Rsp + Rd + A + Tt = 1 + rouletteGain exactly in expectation of 0.
  double rouletteGain = 0;
  std::vector<double> Rd_ra, Tt_ra, A_rz;
  std::vector<double> Rd_r, Rd_a, Tt_r, Tt_a, A_z, A_l;  ///< A_l: one per tissue layer
  std::vector<double> A_rzErr;  ///< standard error of each A_rz bin (same scale)
  std::vector<double> fluence;  ///< A_rz / mua of the bin's layer [cm^-2]; 0 where mua = 0
  Backend backend = Backend::Cpu;
  std::string device;
  int devicesUsed = 0;
  TallyMethod tally = TallyMethod::FixedPoint64;
  std::vector<std::string> messages;  ///< user-facing notes (e.g. CUDA asked for, CPU used)
  double elapsedMs = 0;  ///< transport only (no output scaling)
  std::vector<KernelProfile> profiles;

  double energyBalance() const { return Rsp + Rd + A + Tt - 1.0 - rouletteGain; }
};

/// Raw (unscaled) weight sums of one batch, in double, as every backend hands them back.
struct McmlTally {
  std::vector<double> Rd_ra, Tt_ra, A_rz;
  double rouletteGain = 0;  ///< summed over the batch's packets
  void resize(const McmlConfig& c);
};

/// Validates medium and config; throws InvalidArgument naming the bad value.
void validate(const LayeredMedium& m, const McmlConfig& c);
/// Specular reflectance at the surface (MCML Rspecular, incl. a glass first layer).
double specularReflectance(const LayeredMedium& m);
/// Device memory the CUDA engine needs per GPU for this config [bytes] (saturates at SIZE_MAX
/// instead of wrapping for absurd grids).
std::size_t workspaceBytes(const McmlConfig& c);
/// Host memory runMcml allocates for this config on `backend` (Cpu: one tally per thread as
/// well) [bytes]. A double: a 2^31 x 2^31 grid needs more than size_t can count.
double hostBytes(const McmlConfig& c, Backend backend = Backend::Cpu);
/// Estimated wall time of the CPU backend for this run [s]: a pilot of the same medium (at most
/// 1000 packets or 2e6 transport steps, ~0.1 s) timed on one thread and scaled to c.packets
/// over the CPU threads. A packet still alive when the pilot's step budget runs out counts as
/// finished, so for media where packets live very long the estimate is a lower bound.
double estimateCpuSeconds(const LayeredMedium& m, const McmlConfig& c);

/// Runs the simulation on the chosen backend: `batches` batches of packets, tallies summed,
/// standard errors from the spread of the batches. Progress and cancel between batches.
/// Check, then run: validates, then refuses before allocating anything a run whose tallies do
/// not fit in host memory or on the GPU (ErrorCode::OutOfMemory, sizes in the message), and a
/// CPU run estimated to take longer than c.maxCpuSeconds (ErrorCode::Unsupported, with the
/// estimate). A CUDA request without a usable GPU runs on the CPU and says so in messages.
McmlResult runMcml(const LayeredMedium& m, const McmlConfig& c, const JobControl& job = {});

// Backend entry points (one batch: packets [first, first + count)). Used by runMcml and tests.
void runBatchCpu(const LayeredMedium& m, const McmlConfig& c, std::uint64_t first,
                 std::uint64_t count, McmlTally& out);
/// CUDA: returns the transport time of the batch in ms; fills device name and count.
double runBatchCuda(const LayeredMedium& m, const McmlConfig& c, std::uint64_t first,
                    std::uint64_t count, McmlTally& out, std::string* deviceName,
                    int* devicesUsed, std::vector<KernelProfile>* profiles);

}  // namespace penumbra::mcml
