/* The format's limits (FORMAT.md §4.1 and §8): the largest dimension and element count
 * a tensor may have, and the most gas a graph may charge. One definition for the graph
 * JSON's reader, verification and the graph builder. Dependency-free: it includes
 * nothing from graph/. */
#pragma once

#include <stdint.h>

/* Each dimension is in 1..2^24, and a tensor holds at most 2^30 elements. */
constexpr int64_t kFormatMaxDim = int64_t{1} << 24;
constexpr int64_t kFormatMaxElements = int64_t{1} << 30;
/* An operator's gas base per output element, and a graph's gas operations and memory. */
constexpr int64_t kFormatMaxGasBase = int64_t{1} << 30;
constexpr uint64_t kFormatMaxGasOps = uint64_t{1} << 40;
constexpr uint64_t kFormatMaxGasMemory = uint64_t{1} << 40;
