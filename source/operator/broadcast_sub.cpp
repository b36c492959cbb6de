/* broadcast_sub: NumPy-broadcast a - b (wrapping); precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern constexpr op_def op_def_broadcast_sub = {
    .name = "broadcast_sub",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = op_infer_precision_max_plus_one,
};

/* Upstream's aliases of broadcast_sub (op_alias_of). */
CVML_OP_ALIAS(sub_symbol, "__sub_symbol__", op_def_broadcast_sub);
CVML_OP_ALIAS(subtract, "subtract", op_def_broadcast_sub);
