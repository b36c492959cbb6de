/* An operator's definition ("typed facts", no kernel): its attribute table with
 * upstream's string encodings, validation, shape, precision and gas rules, and the
 * in-place rule of upstream's storage check. One file per operator in this folder
 * defines one `extern const op_def op_def_<file>`, naming only the fields that are not
 * zero; cmake/registry.cmake tables them, sorted by name (op_registry_find). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml_ops.h"
#include "graph/graph.h"
#include "operator/attr_types.h"

/* ---- attributes ---------------------------------------------------------------- */

enum attr_type {
    ATTR_INT,     /* int32, decimal ("3", "-1") */
    ATTR_BOOL,    /* True/true/1/False/false/0, case-insensitive */
    ATTR_TUPLE,   /* TShape: "(a, b)", "[a,b]", "a", "()"; into attr_tuple */
    ATTR_OPT_INT, /* an int or "None"; into attr_opt_int */
    ATTR_STRING,  /* one of `choices` (or any string when choices is NULL); into attr_string */
};

typedef struct attr_spec {
    const char* name;
    enum attr_type type;
    const char* default_value; /* NULL: the attribute is required */
    size_t offset;             /* where the parsed value goes in the op's param struct */
    uint8_t has_lower_bound;   /* dmlc set_lower_bound: a smaller value is a ParamError */
    int64_t lower_bound;
    const char* const* choices; /* ATTR_STRING: NULL-terminated list of accepted values */
} attr_spec;

/* ---- inference context ----------------------------------------------------------- */

/* What an operator sees of its node while verifying: its parsed parameters and its
 * input and output tensors. Inference writes outputs' ndim/dims/precision; it may
 * read inputs' shapes and precisions. Errors go through cvml_fail(): attribute range
 * and shape rule violations (upstream VERIFY) are CVML_ERR_LOGIC, conflicts and
 * failed inference (upstream CHECK / LOG(FATAL)) are CVML_ERR_RUNTIME. */
typedef struct op_infer_ctx {
    const ir_graph* graph;
    const ir_node* node;
    const void* param;
    int32_t input_count;
    ir_tensor* const* inputs;
    int32_t output_count;
    ir_tensor* const* outputs;
} op_infer_ctx;

typedef struct op_def {
    const char* name;

    /* Attribute table; the parsed struct is `param_size` bytes (0: no attributes, and
     * then any attribute given is a logic error, as upstream). */
    const attr_spec* attrs;
    int32_t attr_count;
    size_t param_size;
    /* Optional extra parse-time checks after the table (ParamError → runtime). */
    int (*parse_extra)(void* param);
    /* Its ATTR_TUPLE attributes are stored as attr_pair (see there), not attr_tuple. */
    uint8_t pair_tuples;
    /* Frees anything parse_extra allocated inside the param struct (rare). */
    void (*release_param)(void* param);

    /* Number of inputs the node must have: `fixed_inputs`, or num_inputs(param) when
     * set (conv2d/dense with use_bias), -1 from the function means "any, >= 1". */
    int32_t fixed_inputs;
    int32_t (*num_inputs)(const void* param);
    int32_t num_outputs;

    int (*infer_shape)(op_infer_ctx* ctx);
    int (*infer_precision)(op_infer_ctx* ctx);
    /* Gas base cost per output element (FORMAT.md §8); NULL means 1. */
    int (*gas_base)(const op_infer_ctx* ctx, int64_t* base);

    /* Upstream's storage-reuse whitelist: the output may share a storage slot with
     * one of the node's own inputs. */
    uint8_t may_share_input_storage;
    /* 1 for upstream aliases (add, nn.relu, ...: op_alias_of): they verify and charge
     * gas, but no device has a kernel under that name, so loading fails with a logic
     * error. */
    uint8_t alias;

    /* Optional. Rules only a model being loaded (or built) must pass: cvm-lite's
     * refusals of models upstream accepts and then mishandles (divergence D5). Not
     * run for gas from the graph JSON, which must still give upstream's figure. */
    int (*verify_load)(op_infer_ctx* ctx);

    /* ---- traits: device-neutral facts a device plans with (fusion, views, storage) */

    /* The output holds input 0's values in the same order; only the shape differs
     * (flatten, reshape, ...): a device may make it a view of its input. */
    uint8_t is_view;
    /* The kernel writes into its inputs' buffers (upstream's non_max_suppression):
     * a tensor it reads must own its buffer. */
    uint8_t writes_input;
    /* Optional. When the node maps each value of input `input` on its own, as one step
     * of a fused tail (cvml_ops.h), fills *step from node->param (and, for a constant
     * operand, the graph's tensors) and returns 1; 0 otherwise. */
    int (*step)(const ir_graph* g, const ir_node* node, int32_t input, cvml_step* step);
    /* Optional. The largest |value| of output 0 when input k's values are bounded by
     * input_bounds[k] (-1: unknown); -1 when unknown. NULL: the step's bound when the
     * operator is a step (cvml_step_bound), else unknown. */
    int64_t (*bound)(const ir_graph* g, const ir_node* node, const int64_t* input_bounds);
} op_def;

/* Parses a node's attributes with the op's table into a freshly allocated param
 * struct (node->param). Unknown key, bad value, missing required attribute or a
 * value under a lower bound: CVML_ERR_RUNTIME (upstream ParamError). Attributes on an
 * operator without a table: CVML_ERR_LOGIC. */
int op_parse_attrs(const op_def* op, ir_node* node);

/* Whether `param` holds what op_parse_attrs makes (tuple counts, booleans, strings of
 * the choices, lower bounds, parse_extra's rules): a parameter struct that did not come
 * from the parser (a compiled plan's) is used only then. CVML_OK or CVML_ERR_LOGIC. */
int op_check_params(const op_def* op, const void* param);

/* Shared parsing of upstream's encodings, usable by parse_extra and tests.
 * Each returns CVML_OK or CVML_ERR_RUNTIME with a message naming `what`. */
int attr_parse_int(const char* text, const char* what, int32_t* out);
int attr_parse_bool(const char* text, const char* what, uint8_t* out);
int attr_parse_tuple(const char* text, const char* what, attr_tuple* out);

/* ---- upstream's aliases -------------------------------------------------------------- */

/* Upstream's registry resolves its aliases ("add", "nn.relu", ...: add_alias in
 * src/top/), so shape, precision and gas inference work on them and
 * CVMAPIGetGasFromGraphFile succeeds, but its runtime looks kernels up by the name as
 * written and finds none: loading fails with a logic error ("function undefined"). Here
 * an alias is a row of the operator table of its own: a copy of its target's
 * definition under the alias name, marked `alias` so that no device claims it, made at
 * compile time. Upstream's storage-reuse whitelist is a list of names; no alias is on
 * it.
 *
 * Names such as "__add_symbol__" are reachable only through a func_name that still
 * ends in them after the "_<digits>"/"_" strip (for example "__add_symbol___"); the
 * plain spelling strips to "__add_symbol_", which is not registered (runtime error),
 * exactly as upstream. */
constexpr op_def op_alias_of(op_def target, const char* name) {
    target.name = name;
    target.alias = 1;
    target.may_share_input_storage = 0;
    return target;
}

/* Defines the alias NAME of the operator TARGET (a constexpr op_def of the same file) as
 * `op_alias_<SYMBOL>`; cmake/registry.cmake finds this line and tables it, so an
 * operator that a CVML_OPERATORS build leaves out takes its aliases with it. */
#define CVML_OP_ALIAS(SYMBOL, NAME, TARGET) \
    extern constexpr op_def op_alias_##SYMBOL = op_alias_of(TARGET, NAME)

/* ---- the operator table ----------------------------------------------------------- */

/* The operator (or alias) named `name`: a binary search of the generated table. */
const op_def* op_registry_find(const char* name);
int32_t op_registry_count(void);
/* The table's rows in name order. */
const op_def* op_registry_at(int32_t index);
/* The error for a model naming an operator that is not in the table: upstream's
 * "Operator NAME is not registered" (CVML_ERR_RUNTIME), which says so when this build
 * left the operator out (CVML_OPERATORS) rather than it not existing. */
int op_registry_missing(const char* name);

/* Written by cmake/registry.cmake (operator_table_gen.cpp): every operator and alias,
 * sorted by name (strcmp), and the operators a CVML_OPERATORS build left out. */
extern const op_def* const cvml_operator_table[];
extern const int32_t cvml_operator_table_count;
extern const char* const cvml_left_out_operators[];
extern const int32_t cvml_left_out_operator_count;

/* Upstream's name rule: one trailing "_<digits>" or "_" is stripped from func_name
 * ("conv2d_0" → "conv2d", "abs_" → "abs", "__add_symbol__" → "__add_symbol_"). */
void op_strip_suffix(const char* func_name, char* out, size_t cap);

/* ---- traits of a node --------------------------------------------------------------- */

/* The element-wise step node applies to its input `input` (op_def.step), 0 if none. */
int op_node_step(const ir_graph* g, const ir_node* node, int32_t input, cvml_step* step);
/* The bound of node's output 0 from its inputs' bounds (op_def.bound), -1 if unknown. */
int64_t op_node_bound(const ir_graph* g, const ir_node* node, const int64_t* input_bounds);
/* op_def.bound of an operator that returns its input 0's values (views, max pooling). */
int64_t op_bound_of_input0(const ir_graph* g, const ir_node* node, const int64_t* input_bounds);

/* ---- helpers for inference ------------------------------------------------------- */

/* bits(n): number of significant bits of n >= 0 (upstream GetReduceSumBit). */
int32_t op_bits(int64_t n);
/* NP(n) = bits(n + 1) + 1 (upstream GetNumberPrecision). */
int32_t op_number_precision(int64_t n);
/* Copies a shape; sets ndim and dims of `dst` from `src`. */
void op_copy_shape(ir_tensor* dst, const ir_tensor* src);
/* Same shape (ndim and dims). */
int op_same_shape(const ir_tensor* a, const ir_tensor* b);
/* Formats dims into buf for messages: `open`, the values separated by `sep`, `close`
 * (cut to fit `cap`). */
const char* op_dims_text(const int64_t* dims, int32_t ndim, const char* open, const char* sep,
                         const char* close, char* buf, size_t cap);
/* "(1, 2, 3)": a shape as upstream's Python-style messages print it. */
const char* op_shape_str(const ir_tensor* t, char* buf, size_t cap);
