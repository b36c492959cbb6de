/* The conformance cases at a Cortex-M level (dsp on the M7, mve on the M55): a bare-metal
 * image, run under qemu-system-arm with semihosting, that reads each case's files from
 * the host (semihosting SYS_OPEN/SYS_READ, paths relative to qemu's directory) and
 * checks it through the upstream-compatible API as the host suite does
 * (tests/conformance/conformance_test.cpp, UpstreamApi): the graph's gas, the load's
 * status, the model's gas and I/O facts, the inference's status and output bytes.
 *
 * The cases come from a manifest (scripts/test_arm.sh writes it from each meta.json),
 * one line per case:
 *   DIR OUTCOME CLASS GRAPH_GAS_RC GRAPH_GAS HAS_GAS GAS HAS_IO IN_LEN OUT_LEN IN_TYPE
 *   OUT_TYPE OUTPUT_FILE
 * (OUTCOME ok|load_error|inference_error|clean; OUTPUT_FILE "-" when none). It prints a
 * line per failing case and then
 *   mcu-conformance BOARD LEVEL: passed P failed F of N
 * and exits with 1 when a case failed, 3 when the manifest or a file cannot be read. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvm_api.h"
#include "cvml.h"
#include "semihosting.h"

#ifndef MCU_BOARD
#error "MCU_BOARD (the board's name) must be defined"
#endif
#ifndef MCU_MANIFEST
#define MCU_MANIFEST "build/mcu-conformance.txt"
#endif

enum { SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_READ = 0x06, SYS_FLEN = 0x0c };

static int host_call(int operation, void* argument) {
    register int r0 __asm__("r0") = operation;
    register void* r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* The whole host file at path, NUL-terminated (the graph is read as a C string too);
 * NULL when it cannot be opened or read. *size excludes the NUL. */
static char* read_host_file(const char* path, size_t* size) {
    uint32_t open_args[3] = {(uint32_t)(uintptr_t)path, 1 /* "rb" */, (uint32_t)strlen(path)};
    const int handle = host_call(SYS_OPEN, open_args);
    if (handle < 0) return NULL;
    uint32_t handle_arg[1] = {(uint32_t)handle};
    const int length = host_call(SYS_FLEN, handle_arg);
    char* data = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (data) {
        uint32_t read_args[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)length};
        if (host_call(SYS_READ, read_args) != 0) { /* returns the bytes not read */
            free(data);
            data = NULL;
        } else {
            data[length] = 0;
            *size = (size_t)length;
        }
    }
    host_call(SYS_CLOSE, handle_arg);
    return data;
}

static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    semihost_write(line);
}

typedef struct expectation {
    char dir[200], outcome[24], output[64];
    int error_class, graph_gas_rc, has_gas, has_io;
    unsigned long long graph_gas, gas, in_len, out_len, in_type, out_type;
} expectation;

typedef struct case_files {
    char *graph, *params, *input, *expected;
    size_t graph_size, params_size, input_size, expected_size;
} case_files;

static int read_case(const expectation* e, case_files* f) {
    char path[300];
    memset(f, 0, sizeof *f);
    snprintf(path, sizeof path, "%s/model.json", e->dir);
    f->graph = read_host_file(path, &f->graph_size);
    snprintf(path, sizeof path, "%s/model.params", e->dir);
    f->params = read_host_file(path, &f->params_size);
    snprintf(path, sizeof path, "%s/input.bin", e->dir);
    f->input = read_host_file(path, &f->input_size);
    if (strcmp(e->output, "-") != 0) {
        snprintf(path, sizeof path, "%s/%s", e->dir, e->output);
        f->expected = read_host_file(path, &f->expected_size);
        if (!f->expected) return 0;
    }
    return f->graph && f->params && f->input;
}

static void free_case(case_files* f) {
    free(f->graph);
    free(f->params);
    free(f->input);
    free(f->expected);
}

/* Checks one case; returns NULL when it passes, else what failed. */
static const char* check_case(const expectation* e, const case_files* f) {
    static char why[160];
    unsigned long long graph_gas = 0;
    const int grc = CVMAPIGetGasFromGraphFile(f->graph, &graph_gas);
    if (grc != e->graph_gas_rc) return "CVMAPIGetGasFromGraphFile's status";
    if (grc == 0 && graph_gas != e->graph_gas) return "the graph's gas";
    void* net = NULL;
    const int lrc =
        CVMAPILoadModel(f->graph, (int)f->graph_size, f->params, (int)f->params_size, &net, 0, 0);
    if (strcmp(e->outcome, "load_error") == 0) {
        if (net) CVMAPIFreeModel(net);
        return lrc == e->error_class && !net ? NULL : "the load's status";
    }
    if (strcmp(e->outcome, "clean") == 0 && lrc != 0) return lrc == 1 ? NULL : "the load's status";
    if (lrc != 0 || !net) {
        snprintf(why, sizeof why, "load failed: %s", cvml_last_error());
        return why;
    }
    unsigned long long gas = 0, in_len = 0, out_len = 0, in_type = 0, out_type = 0;
    const char* failure = NULL;
    if (CVMAPIGetGasFromModel(net, &gas) != 0 || (e->has_gas && gas != e->gas))
        failure = "the model's gas";
    if (CVMAPIGetInputLength(net, &in_len) || CVMAPIGetOutputLength(net, &out_len) ||
        CVMAPIGetInputTypeSize(net, &in_type) || CVMAPIGetOutputTypeSize(net, &out_type))
        failure = "an I/O query";
    else if (e->has_io && (in_len != e->in_len || out_len != e->out_len || in_type != e->in_type ||
                           out_type != e->out_type))
        failure = "the I/O lengths or type sizes";
    char* out = failure ? NULL : calloc(out_len ? out_len : 1, 1);
    if (!failure && !out) failure = "out of memory";
    if (!failure) {
        const int irc = CVMAPIInference(net, f->input_size ? f->input : (char*)"",
                                        (int)f->input_size, out_len ? out : NULL);
        if (strcmp(e->outcome, "inference_error") == 0) {
            if (irc != e->error_class) failure = "the inference's status";
        } else if (strcmp(e->outcome, "clean") == 0) {
            if (irc != 0 && irc != 1) failure = "the inference's status";
        } else if (irc != 0) {
            snprintf(why, sizeof why, "inference failed: %s", cvml_last_error());
            failure = why;
        } else if (out_len != f->expected_size || memcmp(out, f->expected, out_len) != 0) {
            failure = "the output bytes";
        }
    }
    free(out);
    CVMAPIFreeModel(net);
    return failure;
}

static int parse_line(const char* line, expectation* e) {
    memset(e, 0, sizeof *e);
    return sscanf(line, "%199s %23s %d %d %llu %d %llu %d %llu %llu %llu %llu %63s", e->dir,
                  e->outcome, &e->error_class, &e->graph_gas_rc, &e->graph_gas, &e->has_gas,
                  &e->gas, &e->has_io, &e->in_len, &e->out_len, &e->in_type, &e->out_type,
                  e->output) == 13;
}

int main(void) {
    size_t size = 0;
    char* manifest = read_host_file(MCU_MANIFEST, &size);
    if (!manifest) {
        say("mcu-conformance: cannot read %s\n", MCU_MANIFEST);
        return 3;
    }
    int passed = 0, failed = 0;
    for (char* line = strtok(manifest, "\n"); line; line = strtok(NULL, "\n")) {
        expectation e;
        if (!parse_line(line, &e)) {
            say("mcu-conformance: bad manifest line: %s\n", line);
            return 3;
        }
        case_files f;
        if (!read_case(&e, &f)) {
            say("mcu-conformance: cannot read the files of %s\n", e.dir);
            return 3;
        }
        const char* failure = check_case(&e, &f);
        free_case(&f);
        if (failure) {
            say("FAIL %s: %s\n", e.dir, failure);
            ++failed;
        } else {
            ++passed;
        }
    }
    free(manifest);
    say("mcu-conformance %s %s: passed %d failed %d of %d\n", MCU_BOARD, cvml_cpu_simd_level(),
        passed, failed, passed + failed);
    return failed ? 1 : 0;
}
