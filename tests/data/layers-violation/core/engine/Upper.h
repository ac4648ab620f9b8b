// A fixture for scripts/check-layers.py.
#pragma once
