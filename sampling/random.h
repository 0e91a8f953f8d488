// The counter-based generator moved to graph/random.h so that datasets/ (the
// synthetic generator) can use it without depending on sampling/; this name
// stays for the sampler code that includes it.
#pragma once

#include "graph/random.h"
