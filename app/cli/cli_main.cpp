// penumbra-cli: headless front end (inspect DICOM, import, devices, benchmarks).
#include <exception>
#include <iostream>
#include <new>

#include "cli_commands.hpp"
#include "core/error.hpp"

namespace {
void usage() {
  std::cout <<
      R"(usage: penumbra-cli <command> [options]

commands:
  devices                         list CUDA devices, the backend 'auto' picks, and run a GPU smoke test
  inspect DIR                     DICOM doctor: series, frames of reference, unresolved references, geometry
  import DIR [--series KEY]       import a CT + structure set and print what was read
  make-demo DIR                   write a synthetic water-box phantom (CT + RT Structure Set) to DIR
  proton [--phantom water|box|hn] [--backend cpu|cuda|cuda-strict|auto]
         [--variant classic|dda-nc] [--out FILE.mhd] [--matrix]
                                  proton pencil-beam dose of a plan on a built-in phantom
  proton --case CASE.json [--backend ...] [--variant ...] [--out FILE.mhd [--record]]
                                  dose of a case file's beams on its DICOM CT (--record adds the
                                  dose set to the case)
  photon [--phantom water|lung] [--field MM] [--ssd MM] [--backend cpu|cuda|cuda-strict|auto]
         [--variant classic|dda-nc] [--deposit atomic|atomic-free] [--cones 8x12] [--out FILE.mhd]
                                  collapsed-cone 6 MV photon dose of one field on a box phantom:
                                  central-axis depth dose, profile, energy balance
  photon --case CASE.json [--backend ...] [--out FILE.mhd]
                                  dose of a case file's photon beams on its DICOM CT
  plan --dicom DIR [--series KEY] --target NAME [--gantry 0,90] [--spacing 5] [--margin 5]
       [--layer-spacing 3] [--pattern hex|square] [--weights uniform|depth] --out CASE.json
                                  generate proton beams, layers and spots on a target structure
                                  and save them as a case file (penumbra-cli plan for all options)
  optimise --case CASE.json (--out-case FILE.json | --in-place) [--prescription Gy]
           [--backend cpu|cuda|cuda-strict|auto] [--iterations N]
                                  spot-weight optimisation (projected L-BFGS on the SpMV engine)
  robust (--case CASE.json | --phantom hn|box|water) [--range 3.5] [--setup 3]
         [--scenarios 21|9|N] [--sphere N] [--backend cpu|cuda|cuda-strict|auto] [--csv FILE]
         [--out-worst worst.mhd] [--out-spread spread.mhd]
                                  robustness of a proton plan under range and setup errors: the
                                  table of nominal, worst and best DVH values, worst-case dose
  mcml FILE.mci [--backend cpu|cuda|cuda-strict|auto] [--tally METHOD] [--packets N]
                                  MCML light transport: runs the .mci's runs, writes their .mco files
  compare REF EVAL [--dd 3] [--dta 3] [--local] [--cutoff 10] [--norm max|GY]
          [--structures RS.dcm] [--out gamma.mhd] [--out-difference diff.mhd]
          [--report FILE.pdf|FILE.txt]
                                  gamma index and dose difference of two doses (RT Dose, MetaImage
                                  or a case's dose set), per structure with --structures; a PDF
                                  or text report
  dvh RS.dcm RD.dcm [--csv FILE] [--structures NAME,NAME]
                                  DVH statistics (and curves as CSV) of a structure set on a dose
  bench [SUITE...] [--json FILE] [--reps N]
                                  run benchmarks and print one table; suites: import, bandwidth, proton,
                                  spmv, mcml, optimise, dose-matrix, cccs, gamma, interactive,
                                  robust
                                  (default: all that this build supports)

--backend cuda runs on the CPU, with a note saying so, when no GPU is usable; cuda-strict fails.
penumbra-cli COMMAND --help prints the options of one command.
)";
}
}  // namespace

int main(int argc, char** argv) {
  using namespace penumbra::cli;
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string cmd = argv[1];
  Args args(argv + 2, argv + argc);
  if (wantsHelp(args)) {
    if (const char* text = usageOf(cmd)) {
      std::cout << text;
      return 0;
    }
  }
  try {
    if (cmd == "devices") return cmdDevices(args);
    if (cmd == "inspect") return cmdInspect(args);
    if (cmd == "import") return cmdImport(args);
    if (cmd == "bench") return cmdBench(args);
    if (cmd == "proton") return cmdProton(args);
    if (cmd == "photon") return cmdPhoton(args);
    if (cmd == "plan") return cmdPlan(args);
    if (cmd == "mcml") return cmdMcml(args);
    if (cmd == "optimise") return cmdOptimise(args);
    if (cmd == "compare") return cmdCompare(args);
    if (cmd == "dvh") return cmdDvh(args);
    if (cmd == "robust") return cmdRobust(args);
    if (cmd == "make-demo") return cmdMakeDemo(args);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      usage();
      return 0;
    }
    std::cerr << "penumbra-cli: unknown command '" << cmd << "'\n";
    usage();
    return 2;
  } catch (const penumbra::Error& e) {
    std::cerr << "penumbra-cli: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "penumbra-cli " << cmd
              << ": out of memory: the request needs more memory than this machine could give "
                 "(reduce its size: grid, packets, spots)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "penumbra-cli " << cmd << ": unexpected error: " << e.what() << "\n";
    return 1;
  }
}
