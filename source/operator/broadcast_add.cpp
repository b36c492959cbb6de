/* broadcast_add: NumPy-broadcast a + b (wrapping); precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern constexpr op_def op_def_broadcast_add = {
    .name = "broadcast_add",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = op_infer_precision_max_plus_one,
};

/* Upstream's aliases of broadcast_add (op_alias_of). */
CVML_OP_ALIAS(add_symbol, "__add_symbol__", op_def_broadcast_add);
CVML_OP_ALIAS(add, "add", op_def_broadcast_add);
