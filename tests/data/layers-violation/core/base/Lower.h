// A fixture for scripts/check-layers.py: core/base must not include the engine.
#pragma once
#include "core/engine/Upper.h"
