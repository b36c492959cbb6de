/* Counters of the CUDA host emulation, exported by the emulated plugin (and only by
 * it) for the tests, which find them with dlsym on the loaded plugin. */
#pragma once

#include <stdint.h>

#define CUDA_EMU_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel `index` in name order (template arguments dropped): 1 and its launches, the
 * threads they ran and how many launches ran cooperatively (reached a barrier); 0 past
 * the last kernel launched. */
CUDA_EMU_EXPORT int cvml_cuda_emu_kernel_stat(int index, const char** name, uint64_t* launches,
                                              uint64_t* threads, uint64_t* cooperative);
/* Kernel `index` (as cvml_cuda_emu_kernel_stat): 1 and how many of its launches ran
 * mma.sync (the tensor-core path), and its warp-wide mma.sync operations; 0 past the
 * last kernel. */
CUDA_EMU_EXPORT int cvml_cuda_emu_kernel_mma(int index, uint64_t* mma_launches, uint64_t* mma_ops);
/* Marked code path `index` in name order (CUDA_PATH, cuda_kernel.h): 1 and how many
 * times it was passed; 0 past the last one passed. */
CUDA_EMU_EXPORT int cvml_cuda_emu_path_stat(int index, const char** name, uint64_t* passes);
/* Device memory and streams live now, and the most device memory ever live. */
CUDA_EMU_EXPORT void cvml_cuda_emu_memory(uint64_t* allocations, uint64_t* bytes,
                                          uint64_t* peak_bytes, uint64_t* streams);
/* The first fault's description ("" when none): faults are sticky. */
CUDA_EMU_EXPORT const char* cvml_cuda_emu_fault(void);

/* What the host asked of the runtime since the plugin was loaded: work sent directly and
 * through graphs, host waits, and the handles and pinned memory live now. */
typedef struct cvml_cuda_emu_counts {
    uint64_t launches; /* kernels launched on a stream (not by a graph launch) */
    uint64_t copies;   /* copies made at the call (not by a graph launch) */
    uint64_t syncs;    /* host waits: stream, event or device synchronisations and
                          synchronous copies */
    uint64_t captures; /* stream captures ended into a graph */
    uint64_t graph_launches;
    uint64_t graph_kernels;                /* kernels run by graph launches */
    uint64_t graph_copies;                 /* copies run by graph launches */
    uint64_t host_allocations, host_bytes; /* pinned host memory live now */
    uint64_t graphs, graph_execs, events;  /* handles live now */
    uint64_t device_to_device;             /* copies between device buffers, however made */
} cvml_cuda_emu_counts;
CUDA_EMU_EXPORT void cvml_cuda_emu_counts_get(cvml_cuda_emu_counts* out);
/* Device memory live now on one device (cudaSetDevice's numbering). */
CUDA_EMU_EXPORT uint64_t cvml_cuda_emu_device_bytes(int device);
/* Starts the peak of cvml_cuda_emu_memory again from what is live now. */
CUDA_EMU_EXPORT void cvml_cuda_emu_reset_peak(void);
/* Exported by the plugin's own code (cuda_device.cu) in its emulated build: the bytes of
 * the device arenas (intermediate tensors) of the subgraphs prepared now. */
CUDA_EMU_EXPORT uint64_t cvml_cuda_emu_arena_bytes(void);

#ifdef __cplusplus
}

namespace cuda_emu {
/* Clears a sticky fault, for tests that provoke one on purpose (not exported). */
void reset_fault();
}  // namespace cuda_emu
#endif
