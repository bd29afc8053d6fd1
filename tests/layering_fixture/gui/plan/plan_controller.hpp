#pragma once
// Layering-check fixture (never compiled): the header the bad overlay includes.
