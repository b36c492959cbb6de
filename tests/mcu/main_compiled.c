/* The bare-metal harness for a compiled plan (docs/compiled-plan.md, docs/embedded.md):
 * the plan lies in flash (plan.S), the library loads it in place into a static arena and
 * runs the embedded input once, allocating nothing. Prints one line:
 *   mcu-run BOARD MODEL compiled: output V1 V2 ... gas G ram_peak R heap H stack S
 *           static D arena A arena_need N activations C lower_bound L plan P
 *           allocs_from_load K simd LEVEL
 * ram_peak = heap high-water + stack high-water + data/bss (the arena is in bss). With
 * MCU_ARENA_BYTES 0 the arena is a large probe and N tells scripts/test_mcu.sh the size
 * to build with. Exit status: 0 when the output and gas are the expected ones and
 * nothing was allocated from the load on; 1 wrong output, 2 wrong gas, 3 a failed call,
 * 4 an allocation. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cvml.h"
#include "memory_stats.h"
#include "report_line.h"
#include "semihosting.h"

extern const uint8_t mcu_model_plan[], mcu_model_plan_end[];
extern const uint8_t mcu_model_input[], mcu_model_input_end[];
extern const uint8_t mcu_model_output[], mcu_model_output_end[];

#if MCU_ARENA_BYTES > 0
static uint8_t g_arena[MCU_ARENA_BYTES];
#else
static uint8_t g_arena[256 * 1024]; /* a probe: the run reports what it needs */
#endif

static uint8_t g_output[MCU_OUTPUT_BYTES];

static int failed(const char* call) {
    line_reset();
    line_add("mcu-run %s %s compiled: %s failed: %s\n", MCU_BOARD, MCU_MODEL_NAME, call,
             cvml_last_error());
    line_send();
    return 3;
}

int main(void) {
    const size_t plan_size = (size_t)(mcu_model_plan_end - mcu_model_plan);
    const size_t input_size = (size_t)(mcu_model_input_end - mcu_model_input);
    cvml_context* ctx = NULL;
    cvml_graph* graph = NULL;
    size_t need = 0, activations = 0, lower_bound = 0;
    if (cvml_context_create(&ctx)) return failed("cvml_context_create");
    if (cvml_graph_compiled_arena_bytes(mcu_model_plan, plan_size, &need) ||
        cvml_compiled_plan_arena(mcu_model_plan, plan_size, &activations, &lower_bound))
        return failed("cvml_graph_compiled_arena_bytes");

    /* From the load on, the counting allocator must see nothing. */
    const struct alloc_counts before = alloc_counts_now();
    if (cvml_graph_load_compiled(ctx, mcu_model_plan, plan_size, g_arena, sizeof g_arena, &graph))
        return failed("cvml_graph_load_compiled");
    size_t input_length = 0, output_length = 0;
    int input_type = 0, output_type = 0;
    if (cvml_graph_input_bytes(graph, &input_length, &input_type) ||
        cvml_graph_output_bytes(graph, &output_length, &output_type))
        return failed("cvml_graph_input_bytes/output_bytes");
    if (input_length != input_size || output_length > sizeof g_output)
        return failed("the embedded input's length or the output's size");
    if (cvml_graph_run_bytes(graph, mcu_model_input, input_length, g_output, output_length))
        return failed("cvml_graph_run_bytes");
    uint64_t gas = 0;
    if (cvml_graph_gas(graph, &gas)) return failed("cvml_graph_gas");
    const struct alloc_counts after = alloc_counts_now();

    unsigned long heap = heap_high_water(), stack = stack_high_water();
    unsigned long statics = static_ram_bytes();
    line_add("mcu-run %s %s compiled: output", MCU_BOARD, MCU_MODEL_NAME);
    for (size_t i = 0; i < output_length / (size_t)output_type; ++i)
        line_add(" %" PRId32, output_value(g_output, i, output_type));
    char digits[24];
    line_add(" gas %s", u64_text(gas, digits, sizeof digits));
    line_add(" ram_peak %lu heap %lu stack %lu static %lu arena %lu arena_need %lu",
             heap + stack + statics, heap, stack, statics, (unsigned long)sizeof g_arena,
             (unsigned long)need);
    line_add(" activations %lu lower_bound %lu plan %lu allocs_from_load %lu simd %s\n",
             (unsigned long)activations, (unsigned long)lower_bound, (unsigned long)plan_size,
             (unsigned long)(after.allocations - before.allocations), cvml_cpu_simd_level());
    line_send();
    cvml_graph_release(graph);
    cvml_context_release(ctx);

    const size_t expected_length = (size_t)(mcu_model_output_end - mcu_model_output);
    if (output_length != expected_length || memcmp(g_output, mcu_model_output, output_length)) {
        semihost_write("mcu: wrong output bytes\n");
        return 1;
    }
    if (gas != (uint64_t)MCU_EXPECTED_GAS) {
        semihost_write("mcu: wrong gas\n");
        return 2;
    }
    if (after.allocations != before.allocations) {
        semihost_write("mcu: the compiled plan's load or run allocated\n");
        return 4;
    }
    return 0;
}
