/* PrepareGraphWithVersion's checks of the decoded graph JSON, each finding the first
 * failure upstream finds, in its order (FORMAT.md §5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "operator/format_limits.h"
#include "operator/op_def.h"
#include "serializer/cvm/graph_file.h"
#include "serializer/cvm/name_index.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cvm_graph_file {

namespace {

/* Entry id of [node, index] through the FILE's node_row_ptr, as upstream's storage
 * reuse check computes it before the version branch (D4: absent is refused). */
int file_eid(const file_graph* f, int64_t node, int64_t index, int64_t* eid) {
    const int_list* rp = &f->node_row_ptr;
    if (node < 0 || node >= rp->count || index < 0 || index > UINT32_MAX)
        return cvml_fail(CVML_ERR_LOGIC, "entry [%lld, %lld] is outside node_row_ptr",
                         static_cast<long long>(node), static_cast<long long>(index));
    *eid = rp->values[node] + index;
    if (*eid < 0 || *eid >= f->storage_id.count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "entry [%lld, %lld] gives entry id %lld, outside 0..%" PRId32,
                         static_cast<long long>(node), static_cast<long long>(index),
                         static_cast<long long>(*eid), f->storage_id.count - 1);
    return CVML_OK;
}

}  // namespace

int check_storage_reuse(const file_graph* f, ir_graph* g) {
    if (!f->node_row_ptr.present)
        // D4: upstream reads node_row_ptr here before any version logic and crashes.
        return cvml_fail(CVML_ERR_LOGIC, "graph JSON: node_row_ptr is required");
    for (int32_t n = 0; n < f->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        if (!node->op || node->op->may_share_input_storage) continue;
        for (int32_t o = 0; o < node->op->num_outputs; ++o) {
            int64_t out_eid = 0;
            int rc = file_eid(f, n, o, &out_eid);
            if (rc) return graph_node_error(node, rc);
            int64_t out_sid = f->storage_id.values[out_eid];
            const entry* in = node_inputs(f, n);
            for (int32_t k = 0; k < f->nodes[n].input_count; ++k) {
                int64_t in_eid = 0;
                rc = file_eid(f, in[k].node, in[k].index, &in_eid);
                if (rc) return graph_node_error(node, rc);
                if (f->storage_id.values[in_eid] == out_sid)
                    return graph_node_error(node, cvml_fail(CVML_ERR_LOGIC,
                                                            "input %" PRId32 " and output %" PRId32
                                                            " use the same storage_id %lld",
                                                            k, o, static_cast<long long>(out_sid)));
            }
        }
    }
    return CVML_OK;
}

int check_shapes_and_precisions(const file_graph* f, int32_t entries) {
    if (f->shape.count != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute shape size: %" PRId32 ", expected %" PRId32,
                         f->shape.count, entries);
    for (int32_t i = 0; i < entries; ++i) {
        const int32_t first = f->shape.offsets[i];
        int32_t ndim = f->shape.offsets[i + 1] - first;
        if (ndim < 1 || ndim > CVML_MAX_DIMS)
            return cvml_fail(CVML_ERR_LOGIC,
                             "shape of entry %" PRId32 ": ndim should be in (0, 6], but %" PRId32,
                             i, ndim);
        int64_t size = 1;
        for (int32_t d = 0; d < ndim; ++d) {
            int64_t x = shape_dim(f->shape, first + d);
            if (x < 1 || x > kFormatMaxDim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": dimension should be in (0, 2^24], but %lld",
                                 i, static_cast<long long>(x));
            size *= x;
            if (size > kFormatMaxElements)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": size should not exceed 2^30, but %lld",
                                 i, static_cast<long long>(size));
        }
    }
    int32_t pcount = f->precision.present ? f->precision.count : 0;
    if (pcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute precision size: %" PRId32 ", expected %" PRId32, pcount,
                         entries);
    for (int32_t i = 0; i < entries; ++i) {
        int64_t p = f->precision.values[i];
        if (p != -1 && (p < 1 || p > 32))
            return cvml_fail(CVML_ERR_LOGIC,
                             "precision of entry %" PRId32 " should be -1 or in (0, 32], but %lld",
                             i, static_cast<long long>(p));
    }
    if (f->device_index.present && f->device_index.count != 0)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute device_index must be empty");
    return CVML_OK;
}

int check_version(const file_graph* f, const int32_t* row_ptr) {
    const char* version = f->version ? f->version : "cvm_1.0.0";
    if (strcmp(version, "cvm_1.1.0") == 0) return CVML_OK;
    if (strcmp(version, "cvm_1.0.0") != 0)
        return cvml_fail(CVML_ERR_RUNTIME, "graph version %s not supported", version);
    int32_t entries = row_ptr[f->node_count];
    int32_t dcount = f->dltype.present ? f->dltype.count : 0;
    if (dcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute dltype size: %" PRId32 ", expected %" PRId32, dcount,
                         entries);
    string_reader dltypes;
    string_reader_start(&dltypes, f, &f->dltype);
    int rc = CVML_OK;
    for (int32_t i = 0; i < entries && !rc; ++i) {
        const char* type = string_reader_next(&dltypes, &rc);
        if (!rc && strcmp(type, "int32") != 0)
            rc = cvml_fail(CVML_ERR_LOGIC, "dltype of entry %" PRId32 ": type %s is not supported",
                           i, type);
    }
    json_free(&dltypes.doc);
    if (rc) return rc;
    if (f->node_row_ptr.count != f->node_count + 1)
        return cvml_fail(CVML_ERR_LOGIC, "node_row_ptr's size: %" PRId32 ", expected %" PRId32,
                         f->node_row_ptr.count, f->node_count + 1);
    for (int32_t i = 0; i <= f->node_count; ++i)
        if (f->node_row_ptr.values[i] != row_ptr[i])
            return cvml_fail(CVML_ERR_LOGIC,
                             "node_row_ptr is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             i, static_cast<long long>(f->node_row_ptr.values[i]), row_ptr[i]);
    int32_t vars = 0;
    for (int32_t i = 0; i < f->node_count; ++i) vars += f->nodes[i].is_var;
    int32_t acount = f->arg_nodes.present ? f->arg_nodes.count : 0;
    if (acount != vars)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes' size: %" PRId32 ", expected %" PRId32, acount,
                         vars);
    for (int32_t i = 0, k = 0; i < f->node_count; ++i) {
        if (!f->nodes[i].is_var) continue;
        if (f->arg_nodes.values[k] != i)
            return cvml_fail(CVML_ERR_LOGIC,
                             "arg_nodes is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             k, static_cast<long long>(f->arg_nodes.values[k]), i);
        ++k;
    }
    return CVML_OK;
}

/* Upstream compares every arg node's name with the earlier ones; the same first
 * failure (a node out of range, or a name seen before) is found here in O(n log n). */
int check_arg_names(const file_graph* f) {
    if (!f->arg_nodes.present) return CVML_OK;
    int32_t count = f->arg_nodes.count;
    int32_t valid = count;  // arg nodes before the first out-of-range one
    for (int32_t i = 0; i < count && valid == count; ++i) {
        int64_t a = f->arg_nodes.values[i];
        if (a < 0 || a >= f->node_count) valid = i;
    }
    name_entry* entries = static_cast<name_entry*>(
        cvml_scratch_alloc(sizeof(name_entry) * (static_cast<size_t>(valid) + 1)));
    if (!entries) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < valid; ++i) {
        const char* name = node_name(f, static_cast<int32_t>(f->arg_nodes.values[i]));
        entries[i] = {name, strlen(name), i};
    }
    int32_t first = 0, second = 0;
    int duplicate = name_entries_first_duplicate(entries, valid, &first, &second);
    if (duplicate)
        return cvml_fail(CVML_ERR_RUNTIME, "node name %s duplicated in graph",
                         node_name(f, static_cast<int32_t>(f->arg_nodes.values[second])));
    if (valid < count)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes[%" PRId32 "] = %lld is not a node", valid,
                         static_cast<long long>(f->arg_nodes.values[valid]));
    return CVML_OK;
}

}  // namespace cvm_graph_file
