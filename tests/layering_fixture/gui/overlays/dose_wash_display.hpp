#pragma once
// Layering-check fixture (never compiled): an overlay that reaches up into a plan controller.
// tests/CMakeLists.txt runs the check on this folder and expects it to fail.
#include "gui/plan/plan_controller.hpp"
