/* The bare-metal harness: loads the model embedded in flash (model.S), runs its input
 * once, checks the output bytes and the gas against the expected ones, and prints what
 * it measured (scripts/test_mcu.sh turns this into the `mcu BOARD MODEL: ...` line):
 *
 *   mcu-run BOARD MODEL: output V1 V2 ... gas G ram_peak R heap H stack S static D
 *           arena A arena_in WHERE params P heap_live_peak L heap_live_after_load K
 *           allocs_after_load N
 *           [instructions I] simd LEVEL
 *
 * I: the instructions cvml_graph_run_bytes() executed, counted with SysTick under qemu
 * -icount shift=0 (insn_count.c); absent where SysTick does not advance.
 * Where the library has cvml_graph_load_memory_ex(), the params are read in place from
 * flash (CVML_LOAD_PARAMS_IN_PLACE: "params in_place") with no names kept
 * (CVML_LOAD_NO_NAMES, where the library has it), and with MCU_ARENA_BYTES > 0 the
 * arena is the harness's own static buffer of that size ("arena_in caller"); otherwise
 * the library allocates it ("arena_in library"). scripts/test_mcu.sh runs each image
 * once with the library's arena to learn A (cvml_graph_arena_bytes()), then again with
 * a caller's arena of exactly A bytes.
 *
 * ram_peak = heap high-water + stack high-water + data/bss: the library's arena is in
 * the heap figure, the caller's arena in data/bss. Exit status: 0 when the output and
 * gas are right, 1 wrong output, 2 wrong gas, 3 a failing library call, 4 an allocation
 * after load although the caller gave the arena. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cvml.h"
#include "insn_count.h"
#include "memory_stats.h"
#include "report_line.h"
#include "semihosting.h"

#ifndef MCU_BOARD
#error "MCU_BOARD (the board's name) must be defined"
#endif
#ifndef MCU_MODEL_NAME
#error "MCU_MODEL_NAME must be defined"
#endif
#ifndef MCU_EXPECTED_GAS
#error "MCU_EXPECTED_GAS must be defined"
#endif

extern const uint8_t mcu_model_json[], mcu_model_json_end[];
extern const uint8_t mcu_model_params[], mcu_model_params_end[];
extern const uint8_t mcu_model_input[], mcu_model_input_end[];
extern const uint8_t mcu_model_output[], mcu_model_output_end[];

#ifndef MCU_ARENA_BYTES
#define MCU_ARENA_BYTES 0
#endif

#if defined(CVML_LOAD_PARAMS_IN_PLACE)
#define MCU_LOAD_OPTIONS 1
#else
#define MCU_LOAD_OPTIONS 0 /* a library without cvml_graph_load_memory_ex() */
#endif

#if MCU_ARENA_BYTES > 0
#if !MCU_LOAD_OPTIONS
#error "MCU_ARENA_BYTES needs cvml_graph_load_memory_ex() (cvml_load_options.arena)"
#endif
static uint8_t g_arena[MCU_ARENA_BYTES];
#endif

#ifndef MCU_OUTPUT_BYTES
#error "MCU_OUTPUT_BYTES (the expected output's size) must be defined"
#endif

/* The output buffer holds exactly the expected output (a longer one fails the check):
 * static RAM that ram_peak counts, so no larger than it must be. */
enum { MAX_OUTPUT_BYTES = MCU_OUTPUT_BYTES };

static uint8_t g_output[MAX_OUTPUT_BYTES];

static size_t span(const uint8_t* begin, const uint8_t* end) {
    return (size_t)(end - begin);
}

static int failed(const char* call) {
    line_reset();
    line_add("mcu-run %s %s: %s failed: %s\n", MCU_BOARD, MCU_MODEL_NAME, call, cvml_last_error());
    line_send();
    return 3;
}

/* Loads the embedded model: in place and into the caller's arena where the library can,
 * keeping names unless `names` is 0. */
static int load(cvml_context* ctx, cvml_graph** graph, int names) {
    const size_t json_size = span(mcu_model_json, mcu_model_json_end);
    const size_t params_size = span(mcu_model_params, mcu_model_params_end);
#if MCU_LOAD_OPTIONS
    cvml_load_options options;
    memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    options.flags = CVML_LOAD_PARAMS_IN_PLACE; /* the params are in flash for good */
#if defined(CVML_LOAD_NO_NAMES)
    if (!names) options.flags |= CVML_LOAD_NO_NAMES; /* firmware never looks nodes up by name */
#else
    (void)names;
#endif
#if MCU_ARENA_BYTES > 0
    options.arena = g_arena;
    options.arena_size = sizeof g_arena;
#endif
    if (cvml_graph_load_memory_ex(ctx, "cvm", mcu_model_json, json_size, mcu_model_params,
                                  params_size, &options, graph))
        return failed("cvml_graph_load_memory_ex");
#else
    if (cvml_graph_load_memory(ctx, "cvm", mcu_model_json, json_size, mcu_model_params, params_size,
                               graph))
        return failed("cvml_graph_load_memory");
#endif
    return 0;
}

/* The arena bytes a caller must hand in for this model (after prerun). */
static int arena_bytes(cvml_graph* graph, size_t* bytes) {
#if MCU_LOAD_OPTIONS
    return cvml_graph_arena_bytes(graph, bytes);
#else
    return cvml_graph_cpu_arena_bytes(graph, bytes);
#endif
}

#if defined(MCU_PLAN_OUT) && MCU_ARENA_BYTES == 0
/* The model as a compiled plan for this core (docs/compiled-plan.md), written to the host
 * for the compiled image (main_compiled.c): only a build for the core knows its
 * kernels' plan. The emulated board's heap holds the writer's buffers. */
static int save_plan(void) {
    cvml_context* ctx = NULL;
    cvml_graph* graph = NULL;
    if (cvml_init() || cvml_context_create(&ctx)) return failed("cvml_init");
    int rc = load(ctx, &graph, 1); /* a plan keeps its outputs' names */
    if (rc) return rc;
    void* data = NULL;
    size_t size = 0;
    if (cvml_graph_save_compiled(graph, MCU_PLAN_TARGET, &data, &size))
        return failed("cvml_graph_save_compiled");
    if (semihost_write_file(MCU_PLAN_OUT, data, size)) return failed("writing " MCU_PLAN_OUT);
    cvml_free(data);
    cvml_graph_release(graph);
    cvml_context_release(ctx);
    cvml_release();
    return 0;
}
#else
static int save_plan(void) {
    return 0;
}
#endif

int main(void) {
    cvml_context* ctx = NULL;
    cvml_graph* graph = NULL;
    if (cvml_init()) return failed("cvml_init");
    if (cvml_context_create(&ctx)) return failed("cvml_context_create");
    int rc = load(ctx, &graph, 0);
    if (rc) return rc;
    if (cvml_graph_prerun(graph)) return failed("cvml_graph_prerun");

    size_t input_length = 0, output_length = 0, arena = 0;
    int input_type = 0, output_type = 0;
    if (cvml_graph_input_bytes(graph, &input_length, &input_type) ||
        cvml_graph_output_bytes(graph, &output_length, &output_type))
        return failed("cvml_graph_input_bytes/output_bytes");
    if (input_length != span(mcu_model_input, mcu_model_input_end) ||
        output_length > sizeof g_output)
        return failed("the embedded input's length or the output's size");
    if (arena_bytes(graph, &arena)) return failed("arena_bytes");

    /* Everything from here on is a run: the counting allocator proves it allocates. */
    struct alloc_counts loaded = alloc_counts_now();
    const int counting = insn_count_start();
    const uint64_t insn_before = insn_count_now();
    if (cvml_graph_run_bytes(graph, mcu_model_input, input_length, g_output, output_length))
        return failed("cvml_graph_run_bytes");
    const uint64_t insn_run = insn_count_now() - insn_before;
    struct alloc_counts ran = alloc_counts_now();
    uint64_t gas = 0;
    if (cvml_graph_gas(graph, &gas)) return failed("cvml_graph_gas");

    /* unsigned long, not size_t: this newlib's printf has no %zu (nor PRIu64). */
    unsigned long heap = heap_high_water(), stack = stack_high_water();
    unsigned long statics = static_ram_bytes();
    line_add("mcu-run %s %s: output", MCU_BOARD, MCU_MODEL_NAME);
    for (size_t i = 0; i < output_length / (size_t)output_type; ++i)
        line_add(" %" PRId32, output_value(g_output, i, output_type));
    char digits[24];
    line_add(" gas %s ram_peak %lu heap %lu stack %lu static %lu arena %lu arena_in %s params %s",
             u64_text(gas, digits, sizeof digits), heap + stack + statics, heap, stack, statics,
             (unsigned long)arena, MCU_ARENA_BYTES > 0 ? "caller" : "library",
             MCU_LOAD_OPTIONS ? "in_place" : "copied");
    if (counting) line_add(" instructions %s", u64_text(insn_run, digits, sizeof digits));
    line_add(" simd %s", cvml_cpu_simd_level());
    line_add(" heap_live_peak %lu heap_live_after_load %lu allocs_after_load %lu",
             (unsigned long)ran.peak_live_bytes, (unsigned long)loaded.live_bytes,
             (unsigned long)(ran.allocations - loaded.allocations));
    /* Where the latest allocation after load came from (scripts/test_mcu.sh names it). */
    if (ran.allocations != loaded.allocations)
        line_add(" last_alloc_from 0x%lx", (unsigned long)ran.last_caller);
    line_add("\n");
    line_send();

    cvml_graph_release(graph);
    cvml_context_release(ctx);
    cvml_release();

    size_t expected_length = span(mcu_model_output, mcu_model_output_end);
    if (output_length != expected_length || memcmp(g_output, mcu_model_output, output_length)) {
        semihost_write("mcu: wrong output bytes\n");
        return 1;
    }
    if (gas != (uint64_t)MCU_EXPECTED_GAS) {
        semihost_write("mcu: wrong gas\n");
        return 2;
    }
    if (MCU_ARENA_BYTES > 0 && ran.allocations != loaded.allocations) {
        semihost_write("mcu: the run allocated although the caller gave the arena\n");
        return 4;
    }
    return save_plan();
}
