/* tile: np.tile; reps longer than the input rank prepend new axes, shorter reps
 * repeat only the trailing axes. */
#include "operator/tile.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

/* upstream's TileParam defaults to TShape{0}, i.e. (0,), which its own range check
 * rejects: a missing `reps` is a logic error at inference, not a parse error */
const attr_spec tile_attrs[] = {
    {"reps", ATTR_TUPLE, "(0,)", offsetof(tile_param, reps), 0, 0, nullptr},
};

int tile_infer_shape(op_infer_ctx* ctx) {
    const tile_param* p = static_cast<const tile_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t sdim = x->ndim;
    const int32_t rdim = p->reps.count;
    if (rdim <= 0)
        return cvml_fail(CVML_ERR_LOGIC,
                         "tile: repetition array is not defined. data.ndim = %" PRId32, sdim);
    for (int32_t i = 0; i < rdim; ++i) {
        int rc = shape_verify_range(p->reps.values[i], "tile.reps", 1, 4096);
        if (rc) return rc;
    }
    const int32_t odim = sdim > rdim ? sdim : rdim;
    if (odim > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "tile: %" PRId32 " reps give more than %d dims", rdim,
                         CVML_MAX_DIMS);
    int64_t out[CVML_MAX_DIMS];
    for (int32_t i = 0; i < odim; ++i) {
        const int64_t s = i < sdim ? x->dims[sdim - 1 - i] : 1;
        const int64_t r = i < rdim ? p->reps.values[rdim - 1 - i] : 1;
        out[odim - 1 - i] = s * r; /* <= 2^24 * 4096 */
    }
    return shape_set_output(ctx->outputs[0], out, odim);
}

}  // namespace

extern const op_def op_def_tile = {
    .name = "tile",
    .attrs = tile_attrs,
    .attr_count = 1,
    .param_size = sizeof(tile_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = tile_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
