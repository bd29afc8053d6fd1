#pragma once
// Subcommands of penumbra-cli. Each returns the process exit code (0 ok, 1 failure, 2 usage).
#include "cli_args.hpp"

namespace penumbra::cli {

int cmdDevices(Args args);
int cmdInspect(Args args);
int cmdImport(Args args);
int cmdMakeDemo(Args args);
int cmdBench(Args args);
int cmdProton(Args args);
int cmdPhoton(Args args);  // cmd_photon.cpp: collapsed-cone photon dose
int cmdPlan(Args args);
int cmdMcml(Args args);  // cmd_mcml.cpp: MCML .mci -> .mco
int cmdOptimise(Args args);  // cmd_optimise.cpp: spot-weight optimisation of a case
int cmdCompare(Args args);  // cmd_compare.cpp: gamma index and dose difference of two doses
int cmdDvh(Args args);  // cmd_dvh.cpp: DVHs of a structure set on an RT Dose
int cmdRobust(Args args);  // cmd_robust.cpp: robustness evaluation under error scenarios

}  // namespace penumbra::cli
