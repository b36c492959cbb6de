/* sum's parsed attributes: upstream's ReduceParam (see reduce.h). */
#pragma once

#include "operator/reduce.h"

typedef reduce_param sum_param;
