// Usage text of every penumbra-cli subcommand, in one place: printed by `penumbra-cli CMD --help`
// (exit 0) and after a usage error (exit 2).
#include "cli_args.hpp"

namespace penumbra::cli {

namespace {

// The --backend choices, shared by every command that runs an engine.
#define PENUMBRA_BACKEND_HELP                                                                    \
  "  --backend cpu|cuda|cuda-strict|auto   auto: the GPU when one is usable, else the CPU;\n"    \
  "                                        cuda: the GPU, or the CPU with a note saying so;\n"   \
  "                                        cuda-strict: the GPU or an error (exit 1)\n"

struct Usage {
  const char* command;
  const char* text;
};

constexpr Usage kUsages[] = {
    {"devices",
     "usage: penumbra-cli devices\n"
     "  lists the CUDA devices, the backend 'auto' picks, and runs a GPU smoke test\n"},
    {"inspect",
     "usage: penumbra-cli inspect DIR\n"
     "  DICOM doctor: series, frames of reference, unresolved references, geometry\n"},
    {"import",
     "usage: penumbra-cli import DIR [--series KEY]\n"
     "  imports a CT and structure set and prints what was read\n"},
    {"make-demo",
     "usage: penumbra-cli make-demo DIR\n"
     "  writes a synthetic water-box phantom (CT + RT Structure Set) to DIR\n"},
    {"proton",
     "usage: penumbra-cli proton [--phantom water|box|hn] [--backend B] [--variant classic|dda-nc]\n"
     "                           [--out FILE.mhd] [--matrix]\n"
     "       penumbra-cli proton --case CASE.json [--backend B] [--variant classic|dda-nc]\n"
     "                           [--out FILE.mhd [--record]]\n"
     "  --record adds the dose written to --out to the case's dose sets (needs --case and --out)\n"
     PENUMBRA_BACKEND_HELP},
    {"photon",
     "usage: penumbra-cli photon [--phantom water|lung] [--field MM (100)] [--ssd MM (1000)]\n"
     "                           [--gantry DEG (0)] [--collimator DEG (0)] [--size MM (300)]\n"
     "                           [--spacing MM (5, lateral)] [--depth-spacing MM (2)]\n"
     "                           [--backend B] [--variant classic|dda-nc]\n"
     "                           [--deposit atomic|atomic-free] [--cones POLARxAZIMUTH (8x12)]\n"
     "                           [--threads N] [--out FILE.mhd]\n"
     "       penumbra-cli photon --case CASE.json [--backend B] [--variant ...] [--deposit ...]\n"
     "                           [--cones PxA] [--out FILE.mhd]\n" PENUMBRA_BACKEND_HELP},
    {"plan",
     "usage: penumbra-cli plan --dicom DIR [--series KEY] [--structures RS.dcm] --target NAME\n"
     "                         [--gantry 0,90] [--couch 0[,...]] [--isocenter x,y,z]\n"
     "                         [--spacing MM] [--margin MM] [--layer-spacing MM (0: derived)]\n"
     "                         [--proximal-margin MM] [--distal-margin MM] [--pattern hex|square]\n"
     "                         [--weights uniform|depth] [--dose-grid MM]\n"
     "                         [--dose-per-fraction GY (2)] [--fractions N (1)] --out CASE.json\n"},
    {"optimise",
     "usage: penumbra-cli optimise --case FILE.json (--out-case FILE.json | --in-place)\n"
     "                             [--prescription Gy] [--backend B] [--iterations N]\n"
     "                             [--robust none|cowc|expected [--range 3.5] [--setup 3]\n"
     "                              [--scenarios N]]\n"
     "  writes the optimised weights to --out-case; --in-place overwrites the input case\n"
     "  objectives: the case's (saved by the GUI's Optimise panel, by structure name), else\n"
     "  defaults from the structure kinds and the prescription; --iterations (default: the\n"
     "  case's, else 200) overrides the case's\n"
     "  --robust: optimise under range (+-% of the stopping power) and setup (+-mm) error\n"
     "  scenarios, one dose matrix each: cowc minimises the worst scenario's objective, expected\n"
     "  their mean; --scenarios 21 (range x setup, default) or 9 (range, then setup), another N\n"
     "  spreads the shifts on a sphere. Prints the target D95 of the nominal and the robust plan\n"
     "  in every scenario; writes the robust plan. Without --robust: as the case says (its robust\n"
     "  mode and scenarios, saved by the GUI or by an earlier --robust run); --robust none: the\n"
     "  nominal plan. The case written records the mode and scenarios used\n"
     PENUMBRA_BACKEND_HELP},
    {"robust",
     "usage: penumbra-cli robust (--case CASE.json | --phantom hn|box|water) [--range %]\n"
     "                           [--setup MM] [--scenarios N] [--sphere N] [--dose-grid MM]\n"
     "                           [--backend B] [--csv FILE] [--out-worst FILE.mhd]\n"
     "                           [--out-spread FILE.mhd]\n"
     "  the plan's dose under range errors (stopping powers scaled by 1 +- r/100) and setup\n"
     "  errors (isocentres shifted), each from the proton engine, reduced to the robustness\n"
     "  table: nominal, worst and best D98/D95/Dmean of each target and D2/Dmax/Dmean of the\n"
     "  other structures, with the worst scenario, flagged against the structure's limit\n"
     "  (targets: the case's min objective, else 95 % of the prescription; organs at risk:\n"
     "  their max objective; phantoms: targets at 95 % of the nominal target Dmean)\n"
     "  --range %        range error magnitude (3.5; 0: none)\n"
     "  --setup MM       setup error magnitude (3; 0: none)\n"
     "  --scenarios N    21: 3 range values x (nominal + 6 shifts along +-L, P, S) (default);\n"
     "                   9: range and setup errors separately; another N spreads the shifts over\n"
     "                   directions on a sphere (N = 3 x (1 + directions) combined, else\n"
     "                   3 + directions)\n"
     "  --sphere N       shifts along N directions on a sphere instead of the 6 axis directions\n"
     "  --phantom P      built-in phantom (no DICOM): hn (hn-2field with Target, Cord, Body),\n"
     "                   box (BOXPHANTOM: OuterTarget, Body), water (Target, Body)\n"
     "  --dose-grid MM   isotropic dose grid spacing (default: the case's or the phantom's)\n"
     "  --csv FILE       the table as CSV\n"
     "  --out-worst FILE.mhd   voxel-wise worst-case dose (minimum in targets, maximum elsewhere)\n"
     "  --out-spread FILE.mhd  voxel-wise spread (maximum - minimum over the scenarios)\n"
     PENUMBRA_BACKEND_HELP},
    {"mcml",
     "usage: penumbra-cli mcml FILE.mci [--backend B] [--tally METHOD] [--seed N] [--batches N]\n"
     "                         [--packets N] [--max-cpu-hours H (24)]\n"
     "  runs every run of FILE.mci and writes the .mco files it names, in FILE.mci's folder\n"
     "  (names with an absolute path or '..' are refused). A CPU run estimated to take longer\n"
     "  than --max-cpu-hours is refused before it starts (0: no limit).\n" PENUMBRA_BACKEND_HELP},
    {"compare",
     "usage: penumbra-cli compare REF EVAL [--dd %] [--dta MM] [--local] [--cutoff %]\n"
     "                            [--norm max|GY] [--cap G] [--max-search MM]\n"
     "                            [--structures RS.dcm] [--backend B] [--out gamma.mhd]\n"
     "                            [--out-difference diff.mhd] [--report FILE.pdf|FILE.txt]\n"
     "  gamma index (Low 1998, exact search over the evaluated dose's trilinear function) and\n"
     "  dose difference A - B of EVAL (B) against REF (A), on REF's grid.\n"
     "  REF, EVAL: an RT Dose in Gy (different frames of reference are refused), a MetaImage\n"
     "             (.mhd/.mha, read as Gy), or CASE.json[#NAME]: a case file's exported dose set\n"
     "  --dd %           dose criterion, % of the normalisation dose (local: of the point) (3)\n"
     "  --dta MM         distance to agreement (3)\n"
     "  --local          local gamma (needs a cut-off above 0)\n"
     "  --cutoff %       reference points below this % of the normalisation dose are not\n"
     "                   evaluated (10)\n"
     "  --norm max|GY    normalisation: the reference maximum (max, default) or a dose in Gy\n"
     "  --cap G          gamma values above G are reported as G (2)\n"
     "  --max-search MM  search radius (default: cap x DTA)\n"
     "  --structures RS.dcm  pass rate per structure (masks on REF's grid, nearest contour\n"
     "                   plane per slice) and DVH differences from the contours, each dose on\n"
     "                   its own grid (Dmean, D98, D95, D50, D2; V95 % and V107 % of the\n"
     "                   normalisation dose)\n"
     "  --out FILE.mhd   the gamma volume on REF's grid; NaN where not evaluated (below the\n"
     "                   cut-off or outside EVAL)\n"
     "  --out-difference FILE.mhd  A - B in Gy on REF's grid; NaN outside EVAL\n"
     "  --report FILE    FILE.pdf: an A4 PDF report (doses, criteria, results, gamma\n"
     "                   histogram, central axial, coronal and sagittal gamma maps,\n"
     "                   per-structure tables, a sign-off block); any other name: the\n"
     "                   printed text. Written to a temporary file and renamed: a failed run\n"
     "                   leaves an existing FILE as it was\n"
     "  exit status: 0 done, 1 an input or the comparison refused (the message says why),\n"
     "  2 a usage error\n" PENUMBRA_BACKEND_HELP},
    {"dvh",
     "usage: penumbra-cli dvh RS.dcm RD.dcm [--csv FILE] [--structures NAME,NAME]\n"
     "  DVHs of every structure of the RT Structure Set with contours (or the named ones;\n"
     "  quote names with spaces: --structures 'BRAIN STEM,PTV_ALL') on the dose RD.dcm (an RT\n"
     "  Dose in Gy, a MetaImage or CASE.json[#NAME]), from the contours as the GUI's DVH dock:\n"
     "  volume, min, mean, max, D98, D95, D50, D2 and D0.03cc.\n"
     "  --csv FILE  cumulative curves: structure, dose_gy, volume_percent, volume_cc\n"},
    {"bench",
     "usage: penumbra-cli bench [SUITE...] [--json FILE] [--reps N] [--packets N]\n"
     "                          [--write-gamma-case DIR]\n"
     "  suites: bandwidth, import, proton, spmv, mcml, optimise, dose-matrix, cccs,\n"
     "          gamma, interactive, robust\n"
     "  (default: bandwidth, import, proton); --packets: MCML packets per run (default 1e8);\n"
     "  --write-gamma-case: also write the gamma benchmark's two doses as MetaImage into DIR;\n"
     "  interactive: --reps is the CPU's edits per session (the GPU replays 100)\n"},
};

#undef PENUMBRA_BACKEND_HELP

}  // namespace

const char* usageOf(const std::string& command) {
  for (const Usage& u : kUsages)
    if (command == u.command) return u.text;
  return nullptr;
}

}  // namespace penumbra::cli
