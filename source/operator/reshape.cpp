/* reshape: a copy under a new shape, computed with MXNet's special codes
 * (0 copy a dim, -1 infer one dim, -2 copy the rest, -3 merge two, -4 split one).
 * May share its input's storage slot (upstream's in-place list). */
#include "operator/reshape.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec reshape_attrs[] = {
    {"shape", ATTR_TUPLE, nullptr, offsetof(reshape_param, shape), 0, 0, nullptr},
};

/* Enough for every entry a 16-value tuple can produce before the rank check fires. */
constexpr int32_t kMaxOut = CVML_MAX_DIMS + 1;

int push_dim(int64_t* out, int32_t* n, int64_t v) {
    if (*n >= kMaxOut)
        return cvml_fail(CVML_ERR_LOGIC, "reshape: target shape has more than %d dims",
                         CVML_MAX_DIMS);
    out[(*n)++] = v;
    return CVML_OK;
}

/* upstream reads the two -4 operands into `int`, so they wrap modulo 2^32 */
int64_t as_int32(int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

int reshape_infer_shape(op_infer_ctx* ctx) {
    const reshape_param* p = static_cast<const reshape_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const attr_tuple* t = &p->shape;
    if (t->count == 0) return cvml_fail(CVML_ERR_LOGIC, "reshape: shape must not be empty");
    int64_t out[kMaxOut];
    int32_t n = 0;
    int32_t src = 0;
    int32_t infer_idx = -1;
    int rc = CVML_OK;
    for (int32_t i = 0; i < t->count && rc == CVML_OK; ++i) {
        const int64_t v = t->values[i];
        if (v > 0) {
            rc = push_dim(out, &n, v);
            ++src;
        } else if (v == 0) {
            if (src >= x->ndim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "reshape: shape[%" PRId32 "]=0 has no input dim %" PRId32, i, src);
            rc = push_dim(out, &n, x->dims[src++]);
        } else if (v == -1) {
            if (infer_idx >= 0)
                return cvml_fail(CVML_ERR_LOGIC, "reshape: One and only one dim can be inferred");
            infer_idx = n;
            rc = push_dim(out, &n, 1);
            ++src;
        } else if (v == -2) {
            while (src < x->ndim && rc == CVML_OK) rc = push_dim(out, &n, x->dims[src++]);
        } else if (v == -3) {
            if (src + 1 >= x->ndim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "reshape: shape[%" PRId32 "]=-3 needs two input dims", i);
            const int64_t d1 = x->dims[src++];
            const int64_t d2 = x->dims[src++];
            rc = push_dim(out, &n, d1 * d2);
        } else if (v == -4) {
            if (i + 2 >= t->count)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "reshape: shape[%" PRId32 "]=-4 needs two values after it", i);
            if (src >= x->ndim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "reshape: shape[%" PRId32 "]=-4 has no input dim %" PRId32, i,
                                 src);
            const int64_t d0 = x->dims[src++];
            int64_t d1 = as_int32(t->values[++i]);
            int64_t d2 = as_int32(t->values[++i]);
            if (d1 == -1 && d2 == -1)
                return cvml_fail(CVML_ERR_LOGIC, "reshape: Split dims cannot both be -1.");
            /* upstream divides by the other operand unguarded (SIGFPE on 0) */
            if ((d1 == -1 && d2 == 0) || (d2 == -1 && d1 == 0))
                return cvml_fail(CVML_ERR_LOGIC, "reshape: split of dim %lld by 0",
                                 static_cast<long long>(d0));
            if (d1 == -1) d1 = d0 / d2;
            if (d2 == -1) d2 = d0 / d1;
            if (d1 * d2 != d0)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "reshape: Split dims %lld, %lld do not divide original dim %lld",
                                 static_cast<long long>(d1), static_cast<long long>(d2),
                                 static_cast<long long>(d0));
            rc = push_dim(out, &n, d1);
            if (rc == CVML_OK) rc = push_dim(out, &n, d2);
        }
        /* codes below -4 are skipped silently, as upstream has no branch for them */
    }
    if (rc) return rc;
    int64_t in_size = 1;
    for (int32_t i = 0; i < x->ndim; ++i) in_size *= x->dims[i];
    for (int32_t i = 0; i < n; ++i)
        if (out[i] < 1)
            return cvml_fail(CVML_ERR_LOGIC, "reshape: target dim %" PRId32 " is %lld", i,
                             static_cast<long long>(out[i]));
    if (infer_idx >= 0) {
        int64_t known = 1;
        for (int32_t i = 0; i < n; ++i) known = shape_sat_mul(known, out[i]);
        out[infer_idx] = in_size / known;
    }
    int64_t out_size = 1;
    for (int32_t i = 0; i < n; ++i) out_size = shape_sat_mul(out_size, out[i]);
    if (out_size != in_size)
        return cvml_fail(CVML_ERR_LOGIC,
                         "reshape: Target shape size is different to source (%lld vs %lld)",
                         static_cast<long long>(out_size), static_cast<long long>(in_size));
    return shape_set_output(ctx->outputs[0], out, n);
}

}  // namespace

extern const op_def op_def_reshape = {
    .name = "reshape",
    .attrs = reshape_attrs,
    .attr_count = 1,
    .param_size = sizeof(reshape_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = reshape_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
    .is_view = 1,
    .bound = op_bound_of_input0,
};
