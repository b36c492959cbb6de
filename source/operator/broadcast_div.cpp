/* broadcast_div: NumPy-broadcast a / b truncated toward zero, 0 where b == 0; upstream
 * registers it with SamePrecision, so the output takes input 0's precision. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern constexpr op_def op_def_broadcast_div = {
    .name = "broadcast_div",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = op_infer_precision_same_as_input0,
};

/* Upstream's aliases of broadcast_div (op_alias_of). */
CVML_OP_ALIAS(div_symbol, "__div_symbol__", op_def_broadcast_div);
