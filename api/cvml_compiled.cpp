/* The public calls of compiled plans (cvml.h, docs/compiled-plan.md): saving a graph as
 * one, loading one into a caller's arena, and the compiled graph's run and release. */
#include <inttypes.h>
#include <string.h>

#include "cvml.h"
#include "device/cpu/compiled/compiled.h"
#include "device/cpu/simd/simd.h"
#include "module/graph_handle.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

#define REQUIRE(cond, what)                                                      \
    do {                                                                         \
        if (!(cond)) return cvml_fail(CVML_ERR_LOGIC, "%s: %s", __func__, what); \
    } while (0)

namespace {

/* The handle goes first in the arena, the plan's state after it. */
size_t handle_bytes(void) {
    return (sizeof(cvml_graph) + 63) / 64 * 64;
}

}  // namespace

int graph_compiled_refusal(const char* fn) {
    return cvml_fail(CVML_ERR_LOGIC, "%s: a graph loaded from a compiled plan has no nodes", fn);
}

namespace {

int prepared(cvml_graph*) {
    return CVML_OK;  // a plan is prepared as it loads
}

int run_compiled(cvml_graph* g) {
    return plan_run(g->plan);
}

int release_compiled(cvml_graph* g) {
    plan_release(g->plan);
    graph_lock_destroy(&g->lock);
    memset(g, 0, sizeof *g);
    return CVML_OK;
}

}  // namespace

int cvml_graph_save_compiled(cvml_graph* g, const char* target, void** data, size_t* size) {
    REQUIRE(data && size, "NULL output");
    *data = nullptr;
    *size = 0;
    REQUIRE(g && target, "NULL argument");
    if (g->plan) return graph_compiled_refusal(__func__);
    plan_target t;
    int rc = plan_target_from_name(target, g->context.threads, &t);
    if (rc) return rc;
    if (g->ir->subgraph_count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "%s: the graph was prepared already; save a freshly loaded one", __func__);
    // The plan is the CPU device's alone, at the target's level.
    strcpy(g->context.device_names[0], "cpu");
    g->context.device_name_count = 1;
    const bool vector = t.family == PLAN_FAMILY_X86_64 || t.family == PLAN_FAMILY_AARCH64;
    g->ir->cpu_target_level =
        static_cast<uint8_t>((vector ? int{t.level} : int{CPU_SIMD_SCALAR}) + 1);
    g->ir->cpu_target_cortexm = t.family == PLAN_FAMILY_CORTEXM ? t.level : uint8_t{CPU_CM_NONE};
    rc = cvml_graph_prerun(g);
    uint8_t* out = nullptr;
    if (!rc) rc = plan_compile(g->ir, &t, &out, size);
    *data = out;
    return rc;
}

int cvml_compiled_plan_arena(const void* plan, size_t length, size_t* activations,
                             size_t* lower_bound) {
    REQUIRE(plan && activations && lower_bound, "NULL argument");
    return plan_figures(static_cast<const uint8_t*>(plan), length, activations, lower_bound);
}

int cvml_graph_compiled_arena_bytes(const void* plan, size_t length, size_t* bytes) {
    REQUIRE(plan && bytes, "NULL argument");
    *bytes = 0;
    size_t need = 0;
    const int rc = plan_arena_need(static_cast<const uint8_t*>(plan), length, &need);
    if (!rc) *bytes = handle_bytes() + need + 63;
    return rc;
}

int cvml_graph_load_compiled(cvml_context* ctx, const void* plan, size_t length, void* arena,
                             size_t arena_size, cvml_graph** out) {
    REQUIRE(out, "NULL output");
    *out = nullptr;
    REQUIRE(ctx && plan && arena, "NULL argument");
    uint8_t* start = static_cast<uint8_t*>(arena);
    const size_t skip = static_cast<size_t>(-reinterpret_cast<uintptr_t>(start) & 63);
    if (arena_size < skip + handle_bytes())
        return cvml_fail(CVML_ERR_LOGIC, "%s: an arena of %" CVML_PRIuSIZE " bytes is too small",
                         __func__, arena_size);
    cvml_graph* g = reinterpret_cast<cvml_graph*>(start + skip);
    memset(g, 0, sizeof *g);
    compiled_plan* p = nullptr;
    ir_graph* ir = nullptr;
    int rc = plan_load(static_cast<const uint8_t*>(plan), length, start + skip + handle_bytes(),
                       arena_size - skip - handle_bytes(), &p, &ir);
    if (!rc) rc = graph_handle_init(g, ctx, ir, prepared, run_compiled);
    if (rc) {
        plan_release(p);
        return rc;
    }
    g->plan = p;
    g->release_compiled = release_compiled;
    *out = g;
    return CVML_OK;
}
