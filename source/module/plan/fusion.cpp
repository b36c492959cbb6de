#include "module/plan/fusion.h"

#include "module/plan/order.h"
#include "utility/error.h"
#include "utility/memory.h"

bool plan_is_graph_output(const ir_graph* g, int32_t tensor) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == tensor) return true;
    return false;
}

int fusion_plan(ir_graph* g, const ir_subgraph* sg, const cvml_fusion_rules* rules,
                cvml_fused_step* fused) {
    if (!g || !sg || !rules || !rules->tail_capacity || !fused)
        return cvml_fail(CVML_ERR_LOGIC, "plan_fusion: NULL argument");
    if (rules->struct_size < sizeof(cvml_fusion_rules))
        return cvml_fail(CVML_ERR_LOGIC, "plan_fusion: rules of %u bytes (want %u)",
                         static_cast<unsigned>(rules->struct_size),
                         static_cast<unsigned>(sizeof(cvml_fusion_rules)));
    int32_t* step_of_node = plan_step_of_node(g, sg);
    if (!step_of_node) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < sg->node_count; ++i) {
        g->nodes[sg->nodes[i]]->fused_into = IR_RUNS_ITSELF;
        fused[i] = {-1, -1, {0, 0, 0, 0}};
    }
    // The ABI's 0 is "no bound": the rule takes a bound.
    cvml_fusion_rules bounded = *rules;
    if (bounded.max_cost <= 0) bounded.max_cost = INT32_MAX;
    fusion_link links[FUSION_MAX_TAIL];
    for (int32_t h = 0; h < sg->node_count; ++h) {
        int32_t capacity = rules->tail_capacity(rules->user, h);
        if (capacity > FUSION_MAX_TAIL) capacity = FUSION_MAX_TAIL;
        const int32_t count = fusion_tail(g, sg, step_of_node, &bounded, h, capacity, links);
        for (int32_t k = 0; k < count; ++k)
            fused[links[k].step] = {h, links[k].operand ? links[k].operand->index : -1,
                                    links[k].op};
    }
    cvml_scratch_free(step_of_node);
    return CVML_OK;
}
