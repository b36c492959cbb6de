/* Inference rules shared by several operators. */
#pragma once

#include "operator/op_def.h"

/* Output 0 takes input 0's shape. */
int op_infer_shape_same_as_input0(op_infer_ctx* ctx);
/* Output 0 takes input 0's precision. */
int op_infer_precision_same_as_input0(op_infer_ctx* ctx);
