/* The nn operators' shared checks and messages (nn_attr.h). */
#include "operator/nn_attr.h"

int nn_verify_attr_range(int64_t v, const char* name, int64_t min, int64_t max) {
    if (v < min || v > max)
        return cvml_fail(CVML_ERR_LOGIC, "attribute %s value: %lld out of range [%lld, %lld]", name,
                         static_cast<long long>(v), static_cast<long long>(min),
                         static_cast<long long>(max));
    return CVML_OK;
}

const char* nn_dims_str(const int64_t* dims, int32_t ndim, char* buf, size_t cap) {
    return op_dims_text(dims, ndim, "[", ",", "]", buf, cap);
}

int nn_expect_input_shape(const ir_tensor* t, const char* what, const int64_t* dims, int32_t ndim) {
    bool same = t->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; ++i) same = t->dims[i] == dims[i];
    if (same) return CVML_OK;
    char want[96], got[96];
    nn_dims_str(dims, ndim, want, sizeof want);
    nn_dims_str(t->dims, t->ndim, got, sizeof got);
    return cvml_fail(CVML_ERR_RUNTIME, "expects %s's shape to be %s, but got %s", what, want, got);
}
