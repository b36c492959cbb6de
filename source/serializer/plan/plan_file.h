/* The container of a compiled plan (docs/compiled-plan.md, "The file"): a 64-byte header
 * (magic, format version, file size, CRC-32, target, section table), a table of 16-byte
 * section entries, and the sections, each at the next offset its tag's alignment allows
 * after the one before, padding zero. Little-endian, offsets from the file's start, no
 * pointers. This layer knows tags, alignments and record sizes, not what the records
 * mean; it neither allocates nor depends on the graph, so a loader can check a plan in
 * flash before it writes any RAM. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define PLAN_FORMAT_MAJOR 1
#define PLAN_FORMAT_MINOR 0
#define PLAN_HEADER_SIZE 64
#define PLAN_ENTRY_SIZE 16
#define PLAN_MAX_SECTIONS 64
#define PLAN_MAX_THREADS 256

/* Record sizes of the sections with fixed records (plan_records.h lays them out). */
#define PLAN_GRPH_RECORD 128
#define PLAN_KERN_RECORD 48
#define PLAN_STEP_RECORD 96
#define PLAN_TENS_RECORD 40
#define PLAN_SLOT_RECORD 4
#define PLAN_TAIL_RECORD 20
#define PLAN_IOTB_RECORD 8
#define PLAN_RELO_RECORD 8

enum plan_family {
    PLAN_FAMILY_PORTABLE = 1, /* the scalar level, on any build without Cortex-M kernels */
    PLAN_FAMILY_X86_64 = 2,
    PLAN_FAMILY_AARCH64 = 3,
    PLAN_FAMILY_CORTEXM = 4,
};

/* Levels of the Cortex-M family (enum cpu_cortexm_kernels' values); the other families
 * use enum cpu_simd_level's values. */
#define PLAN_LEVEL_CM_DSP 16
#define PLAN_LEVEL_CM_MVE 17

typedef struct plan_target {
    uint8_t family; /* enum plan_family */
    uint8_t level;
    uint16_t threads;
} plan_target;

/* The sections of format 1.0, in the order a writer lays them out. */
enum plan_tag {
    PLAN_GRPH,
    PLAN_KERN,
    PLAN_STEP,
    PLAN_TENS,
    PLAN_SLOT,
    PLAN_TAIL,
    PLAN_IOTB,
    PLAN_NAME,
    PLAN_PARM,
    PLAN_STAT,
    PLAN_RELO,
    PLAN_CNST,
    PLAN_TAG_COUNT
};

/* The four ASCII bytes of a tag ("GRPH"), NUL-terminated. */
const char* plan_tag_name(int tag);

typedef struct plan_section {
    const uint8_t* data; /* inside the buffer read; NULL when absent */
    uint32_t offset;
    uint32_t size;
} plan_section;

/* A plan whose container passed every check of plan_file_read. */
typedef struct plan_file {
    uint16_t minor;
    plan_target target;
    uint32_t size;
    plan_section sections[PLAN_TAG_COUNT]; /* by enum plan_tag */
} plan_file;

/* One section to write: `size` bytes of `data` under `tag`. */
typedef struct plan_section_in {
    int32_t tag; /* enum plan_tag */
    const void* data;
    size_t size;
} plan_section_in;

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes, continuing from `crc`
 * (0 to start). */
uint32_t plan_crc32(uint32_t crc, const uint8_t* p, size_t n);

/* Bytes of the file plan_file_write makes of these sections, checking them as the reader
 * would (each tag once, the required ones present, whole records, at most 4 GiB - 1).
 * Returns CVML_OK or a logic error. */
int plan_file_size(const plan_section_in* sections, int32_t count, size_t* size);
/* Writes the file into out (`size` bytes, as plan_file_size gave) with the checksum. */
int plan_file_write(const plan_target* target, const plan_section_in* sections, int32_t count,
                    uint8_t* out, size_t size);
/* Checks the container of `len` bytes at buf, in the order of docs/compiled-plan.md
 * ("What the loader checks", 1), and fills *out with views into buf. A malformed file is
 * a logic error and a target this build cannot run a runtime error; either message
 * names the byte offset at fault. */
int plan_file_read(const uint8_t* buf, size_t len, plan_file* out);
/* The same checks, but a target that this build does not run is accepted: for reading a
 * plan's figures on the host that made it for another. */
int plan_file_inspect(const uint8_t* buf, size_t len, plan_file* out);
