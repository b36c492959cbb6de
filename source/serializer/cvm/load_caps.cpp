/* Load-time caps on what a model may make the runtime allocate or do (issue 18):
 * refusals upstream would not make, each a divergence of docs/reliability.md. They run
 * at load only, so the gas query still answers upstream's figure for such a model. */
#include <inttypes.h>
#include <string.h>

#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

constexpr uint64_t kMaxApiBytes = 0x7fffffff;        /* CVMAPIInference's int input_len */
constexpr uint64_t kMaxNmsPairs = uint64_t{1} << 28; /* ~0.3 s of IoU tests */

/* D8: heads. Upstream writes every head into the output, so a tensor listed as a head
 * a million times writes a gigabyte for the gas of one tensor. A graph may list at most
 * as many heads as it has entries; the output is then never larger than all its
 * tensors together. */
int check_heads(const ir_graph* g) {
    if (g->output_count > g->tensor_count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "the graph lists %" PRId32 " heads but has %" PRId32
                         " entries: at most one head per entry (D8)",
                         g->output_count, g->tensor_count);
    return CVML_OK;
}

/* D9: input and output lengths. CVMAPIInference takes the input length as an int, and
 * an output must fit a buffer of that size too: a model whose input or output length
 * passes 2^31 - 1 bytes could never run, so it is refused at load instead of holding
 * its memory. Output: every head at 4 bytes an element (its widest type). */
int check_io_lengths(const ir_graph* g) {
    for (int32_t i = 0; i < g->input_count; ++i) {
        const ir_tensor* t = g->tensors[g->inputs[i]];
        uint64_t bytes =
            static_cast<uint64_t>(ir_tensor_element_count(t)) * (t->precision <= 8 ? 1u : 4u);
        if (bytes > kMaxApiBytes)
            return cvml_fail(CVML_ERR_LOGIC,
                             "input '%s' is %llu bytes, more than an inference can pass "
                             "(2^31 - 1, D9)",
                             t->name, static_cast<unsigned long long>(bytes));
    }
    uint64_t out = 0;
    for (int32_t i = 0; i < g->output_count && out <= kMaxApiBytes; ++i) {
        const ir_tensor* t = g->tensors[g->outputs[i]];
        out += 4 * static_cast<uint64_t>(ir_tensor_element_count(t));
    }
    if (out > kMaxApiBytes)
        return cvml_fail(CVML_ERR_LOGIC,
                         "the outputs need more than 2^31 - 1 bytes at 4 bytes an element (D9)");
    return CVML_OK;
}

/* D10: non_max_suppression compares every pair of a batch's boxes (O(n^2)) but its gas
 * is 20 x batch (upstream's figure, kept). Over the whole graph, batch x boxes^2 may not
 * pass 2^28 (one batch of 16,384 boxes, more than SSD's 8,732 or YOLOv3's 10,647), which
 * bounds its run at about 0.3 s whatever the gas says. */
int check_nms_work(const ir_graph* g) {
    uint64_t pairs = 0;
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        if (!node->op || strcmp(node->op->name, "non_max_suppression") != 0) continue;
        if (node->input_count < 1) continue;
        const ir_tensor* boxes = g->tensors[node->inputs[0]];  // (batch, boxes, 6)
        if (boxes->ndim < 2) continue;
        uint64_t batch = static_cast<uint64_t>(boxes->dims[0]);
        uint64_t count = static_cast<uint64_t>(boxes->dims[1]);
        pairs += batch * count * count;
        if (pairs > kMaxNmsPairs)
            return cvml_fail(CVML_ERR_LOGIC,
                             "node %" PRId32
                             " '%s': non_max_suppression over %llu x %llu"
                             " boxes passes the graph's bound of 2^28 box pairs (D10)",
                             n, node->name, static_cast<unsigned long long>(batch),
                             static_cast<unsigned long long>(count));
    }
    return CVML_OK;
}

}  // namespace

int cvm_check_resource_caps(const ir_graph* g) {
    int rc = check_heads(g);
    if (!rc) rc = check_io_lengths(g);
    if (!rc) rc = check_nms_work(g);
    return rc;
}
