// Hostile models of issue 18, generated in memory: each is a graph JSON, a params blob
// and an input, built to make an unbounded loader or runtime stall or exhaust memory.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace hostile {

struct model {
    std::string json;
    std::string params;  // the upstream params blob (may hold no arrays)
};

struct hostile_case {
    const char* name;
    const char* what;
    model (*make)();
};

const std::vector<hostile_case>& cases();
/* Small models of the same shapes, as seeds for the load fuzzer (tests/fuzz). */
const std::vector<hostile_case>& seed_cases();

}  // namespace hostile
