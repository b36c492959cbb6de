/* The compiled plan's container: writer and strict reader (plan_file.h). */
#include "serializer/plan/plan_file.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "device/cpu/simd/simd.h"
#include "utility/error.h"

namespace {

struct tag_info {
    char name[5];
    uint32_t align;  /* of the section's offset */
    uint32_t record; /* its size is a whole number of these */
    bool required;
    bool single; /* exactly one record */
};

/* By enum plan_tag: the order a file has them in. */
const tag_info kTags[PLAN_TAG_COUNT] = {
    {"GRPH", 8, PLAN_GRPH_RECORD, true, true},
    {"KERN", 8, PLAN_KERN_RECORD, true, false},
    {"STEP", 8, PLAN_STEP_RECORD, true, false},
    {"TENS", 8, PLAN_TENS_RECORD, true, false},
    {"SLOT", 4, PLAN_SLOT_RECORD, true, false},
    {"TAIL", 4, PLAN_TAIL_RECORD, false, false},
    {"IOTB", 4, PLAN_IOTB_RECORD, true, false},
    {"NAME", 1, 1, true, false},
    {"PARM", 8, 1, false, false},
    {"STAT", 64, 1, false, false},
    {"RELO", 4, PLAN_RELO_RECORD, false, false},
    {"CNST", 64, 1, true, false},
};

/* A text-mode copy (CR LF, ^Z) changes it, so such a copy fails at byte 0. */
const uint8_t kMagic[8] = {0x43, 0x56, 0x4d, 0x43, 0x0d, 0x0a, 0x1a, 0x0a};

/* Header fields (docs/compiled-plan.md, "Header"). */
constexpr uint32_t kAtMajor = 8, kAtMinor = 10, kAtHeaderSize = 12, kAtFileSize = 16,
                   kAtChecksum = 20, kAtFamily = 24, kAtLevel = 25, kAtThreads = 26, kAtTable = 28,
                   kAtCount = 32, kAtEntrySize = 34, kAtReserved = 36;

uint16_t le16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t le32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
void put16(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, v);
    put16(p + 2, v >> 16);
}

uint64_t align_up(uint64_t v, uint32_t a) {
    return (v + a - 1) / a * a;
}

/* "compiled plan: byte N: ..." with the given status. */
int fail_at(int status, uint32_t byte, const char* fmt, ...) CVML_PRINTF(3, 4);
int fail_at(int status, uint32_t byte, const char* fmt, ...) {
    char what[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cvml_fail(status, "compiled plan: byte %" PRIu32 ": %s", byte, what);
}

/* The checksum over the file with its own four bytes read as zero. */
uint32_t file_checksum(const uint8_t* buf, size_t size) {
    static const uint8_t zero[4] = {0, 0, 0, 0};
    uint32_t crc = plan_crc32(0, buf, kAtChecksum);
    crc = plan_crc32(crc, zero, 4);
    return plan_crc32(crc, buf + kAtChecksum + 4, size - kAtChecksum - 4);
}

const char* target_name(uint32_t family, uint32_t level) {
    if (family == PLAN_FAMILY_PORTABLE && level == CPU_SIMD_SCALAR) return "scalar";
    if (family == PLAN_FAMILY_X86_64 && level == CPU_SIMD_AVX2) return "avx2";
    if (family == PLAN_FAMILY_X86_64 && level == CPU_SIMD_AVX512) return "avx512";
    if (family == PLAN_FAMILY_AARCH64 && level == CPU_SIMD_NEON) return "neon";
    if (family == PLAN_FAMILY_AARCH64 && level == CPU_SIMD_DOTPROD) return "dotprod";
    if (family == PLAN_FAMILY_AARCH64 && level == CPU_SIMD_I8MM) return "i8mm";
    if (family == PLAN_FAMILY_CORTEXM && level == PLAN_LEVEL_CM_DSP)
        return "cortex-m4f/cortex-m7 (cm-dsp)";
    if (family == PLAN_FAMILY_CORTEXM && level == PLAN_LEVEL_CM_MVE) return "cortex-m55 (cm-mve)";
    return nullptr;
}

/* The best target this build runs on this CPU, for messages. */
const char* best_here(void) {
    if (CVML_SIMD_CORTEXM_MVE) return "cortex-m55 (cm-mve)";
    if (CVML_SIMD_CORTEXM_DSP) return "cortex-m4f/cortex-m7 (cm-dsp)";
    return cpu_simd_name(cpu_simd_detect());
}

bool runnable(uint32_t family, uint32_t level) {
    switch (family) {
        case PLAN_FAMILY_PORTABLE:
            // A Cortex-M build takes its own kernels where they apply, with other scratch.
            return !CVML_SIMD_CORTEXM;
        case PLAN_FAMILY_X86_64:
            return CVML_SIMD_X86 && cpu_simd_detect() >= static_cast<int>(level);
        case PLAN_FAMILY_AARCH64:
            return CVML_SIMD_AARCH64 && cpu_simd_detect() >= static_cast<int>(level);
        default:
            return level == PLAN_LEVEL_CM_MVE ? CVML_SIMD_CORTEXM_MVE : CVML_SIMD_CORTEXM_DSP;
    }
}

/* The target's fields, then whether this build runs it. */
int read_target(const uint8_t* h, bool here, plan_target* t) {
    const uint32_t family = h[kAtFamily], level = h[kAtLevel], threads = le16(h + kAtThreads);
    if (family < PLAN_FAMILY_PORTABLE || family > PLAN_FAMILY_CORTEXM)
        return fail_at(CVML_ERR_LOGIC, kAtFamily, "unknown target family %" PRIu32, family);
    const char* name = target_name(family, level);
    if (!name)
        return fail_at(CVML_ERR_LOGIC, kAtLevel, "level %" PRIu32 " is not one of family %" PRIu32,
                       level, family);
    if (threads < 1 || threads > PLAN_MAX_THREADS)
        return fail_at(CVML_ERR_LOGIC, kAtThreads, "%" PRIu32 " threads (1 to %d)", threads,
                       PLAN_MAX_THREADS);
    if (here && !runnable(family, level))
        return fail_at(CVML_ERR_RUNTIME, kAtFamily, "plan for %s; this build runs %s", name,
                       best_here());
    if (here && threads > 1 && !CVML_WITH_THREADS)
        return fail_at(CVML_ERR_RUNTIME, kAtThreads,
                       "plan for %" PRIu32 " threads; this build runs one", threads);
    t->family = static_cast<uint8_t>(family);
    t->level = static_cast<uint8_t>(level);
    t->threads = static_cast<uint16_t>(threads);
    return CVML_OK;
}

/* Magic, version, sizes, checksum, reserved bytes, target. */
int read_header(const uint8_t* buf, size_t len, bool here, plan_file* out) {
    if (len < PLAN_HEADER_SIZE)
        return fail_at(CVML_ERR_LOGIC, static_cast<uint32_t>(len),
                       "truncated: %" CVML_PRIuSIZE " bytes, the header takes %d", len,
                       PLAN_HEADER_SIZE);
    if (memcmp(buf, kMagic, sizeof kMagic) != 0)
        return fail_at(CVML_ERR_LOGIC, 0, "not a compiled plan (no CVMC magic)");
    const uint32_t major = le16(buf + kAtMajor), minor = le16(buf + kAtMinor);
    if (major != PLAN_FORMAT_MAJOR)
        return fail_at(CVML_ERR_LOGIC, kAtMajor,
                       "format version %" PRIu32 ".%" PRIu32 "; this build reads %d.x", major,
                       minor, PLAN_FORMAT_MAJOR);
    if (minor > PLAN_FORMAT_MINOR)
        return fail_at(CVML_ERR_LOGIC, kAtMinor,
                       "format version %d.%" PRIu32 " is newer than this build's %d.%d",
                       PLAN_FORMAT_MAJOR, minor, PLAN_FORMAT_MAJOR, PLAN_FORMAT_MINOR);
    if (le32(buf + kAtHeaderSize) != PLAN_HEADER_SIZE)
        return fail_at(CVML_ERR_LOGIC, kAtHeaderSize, "header size %" PRIu32 ", expected %d",
                       le32(buf + kAtHeaderSize), PLAN_HEADER_SIZE);
    const uint32_t size = le32(buf + kAtFileSize);
    if (size != len)
        return fail_at(CVML_ERR_LOGIC, kAtFileSize,
                       "the file declares %" PRIu32 " bytes, the buffer holds %" CVML_PRIuSIZE
                       " (%s)",
                       size, len, size > len ? "truncated" : "trailing bytes");
    const uint32_t sum = le32(buf + kAtChecksum), actual = file_checksum(buf, len);
    if (sum != actual)
        return fail_at(CVML_ERR_LOGIC, kAtChecksum,
                       "checksum %08" PRIx32 ", the bytes give %08" PRIx32 " (corrupted)", sum,
                       actual);
    for (uint32_t k = kAtReserved; k < PLAN_HEADER_SIZE; ++k)
        if (buf[k]) return fail_at(CVML_ERR_LOGIC, k, "reserved byte is not zero");
    out->minor = static_cast<uint16_t>(minor);
    out->size = size;
    return read_target(buf, here, &out->target);
}

/* Section entry i at byte e: its tag after the previous one, no flags, the canonical
 * offset (the next aligned one after `*pos`), inside the file, whole records, and zero
 * padding before it. Advances *pos and *prev. */
int read_entry(const uint8_t* buf, plan_file* out, int32_t i, uint32_t e, uint64_t* pos,
               int32_t* prev) {
    int32_t tag = -1;
    for (int32_t k = 0; k < PLAN_TAG_COUNT; ++k)
        if (memcmp(buf + e, kTags[k].name, 4) == 0) tag = k;
    if (tag < 0)
        return fail_at(CVML_ERR_LOGIC, e, "section %" PRId32 ": unknown tag 0x%08" PRIx32, i,
                       le32(buf + e));
    const tag_info& ti = kTags[tag];
    if (tag <= *prev)
        return fail_at(CVML_ERR_LOGIC, e,
                       "section %" PRId32 ": %s after %s (each tag once, in the format's order)", i,
                       ti.name, kTags[*prev].name);
    if (le32(buf + e + 12))
        return fail_at(CVML_ERR_LOGIC, e + 12, "section %" PRId32 " (%s): flags are not zero", i,
                       ti.name);
    const uint32_t offset = le32(buf + e + 4), size = le32(buf + e + 8);
    const uint64_t expect = align_up(*pos, ti.align);
    if (offset != expect)
        return fail_at(CVML_ERR_LOGIC, e + 4,
                       "section %" PRId32 " (%s) at %" PRIu32 ", expected at %" PRIu32
                       " (the next %" PRIu32 "-aligned offset)",
                       i, ti.name, offset, static_cast<uint32_t>(expect), ti.align);
    if (static_cast<uint64_t>(offset) + size > out->size)
        return fail_at(CVML_ERR_LOGIC, e + 8,
                       "section %" PRId32 " (%s): %" PRIu32 " bytes at %" PRIu32
                       " end past the file's %" PRIu32,
                       i, ti.name, size, offset, out->size);
    if (size % ti.record || (ti.single && size != ti.record))
        return fail_at(CVML_ERR_LOGIC, e + 8,
                       "section %" PRId32 " (%s): %" PRIu32 " bytes is not %s %" PRIu32
                       "-byte record%s",
                       i, ti.name, size, ti.single ? "one" : "a whole number of", ti.record,
                       ti.single ? "" : "s");
    for (uint64_t k = *pos; k < offset; ++k)
        if (buf[k])
            return fail_at(CVML_ERR_LOGIC, static_cast<uint32_t>(k),
                           "padding before section %" PRId32 " (%s) is not zero", i, ti.name);
    out->sections[tag].data = buf + offset;
    out->sections[tag].offset = offset;
    out->sections[tag].size = size;
    *pos = static_cast<uint64_t>(offset) + size;
    *prev = tag;
    return CVML_OK;
}

int read_table(const uint8_t* buf, plan_file* out) {
    const uint32_t table = le32(buf + kAtTable), count = le16(buf + kAtCount);
    if (table != PLAN_HEADER_SIZE)
        return fail_at(CVML_ERR_LOGIC, kAtTable,
                       "section table at %" PRIu32 ", expected right after the header (%d)", table,
                       PLAN_HEADER_SIZE);
    if (count < 1 || count > PLAN_MAX_SECTIONS)
        return fail_at(CVML_ERR_LOGIC, kAtCount, "%" PRIu32 " sections (1 to %d)", count,
                       PLAN_MAX_SECTIONS);
    if (le16(buf + kAtEntrySize) != PLAN_ENTRY_SIZE)
        return fail_at(CVML_ERR_LOGIC, kAtEntrySize, "section entry size %d, expected %d",
                       le16(buf + kAtEntrySize), PLAN_ENTRY_SIZE);
    uint64_t pos = static_cast<uint64_t>(table) + static_cast<uint64_t>(count) * PLAN_ENTRY_SIZE;
    if (pos > out->size)
        return fail_at(CVML_ERR_LOGIC, kAtCount,
                       "%" PRIu32 " section entries end at byte %" PRIu32
                       ", past the file's %" PRIu32,
                       count, static_cast<uint32_t>(pos), out->size);
    int32_t prev = -1;
    for (uint32_t i = 0; i < count; ++i) {
        const int rc =
            read_entry(buf, out, static_cast<int32_t>(i), table + i * PLAN_ENTRY_SIZE, &pos, &prev);
        if (rc) return rc;
    }
    for (int32_t k = 0; k < PLAN_TAG_COUNT; ++k)
        if (kTags[k].required && !out->sections[k].data)
            return fail_at(CVML_ERR_LOGIC, kAtCount, "no %s section (required)", kTags[k].name);
    if (pos != out->size)
        return fail_at(CVML_ERR_LOGIC, static_cast<uint32_t>(pos),
                       "the last section ends at %" PRIu32 ", the file at %" PRIu32,
                       static_cast<uint32_t>(pos), out->size);
    return CVML_OK;
}

}  // namespace

const char* plan_tag_name(int tag) {
    return tag >= 0 && tag < PLAN_TAG_COUNT ? kTags[tag].name : "?";
}

uint32_t plan_crc32(uint32_t crc, const uint8_t* p, size_t n) {
    // Four bits at a time: a 64-byte table instead of 1 KB, for a microcontroller's flash.
    static const uint32_t kNibble[16] = {0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
                                         0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                                         0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                         0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
    crc = ~crc;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        crc = (crc >> 4) ^ kNibble[crc & 15];
        crc = (crc >> 4) ^ kNibble[crc & 15];
    }
    return ~crc;
}

int plan_file_size(const plan_section_in* sections, int32_t count, size_t* size) {
    if (count < 1 || count > PLAN_MAX_SECTIONS)
        return cvml_fail(CVML_ERR_LOGIC, "compiled plan: %" PRId32 " sections (1 to %d)", count,
                         PLAN_MAX_SECTIONS);
    uint64_t pos = PLAN_HEADER_SIZE + static_cast<uint64_t>(count) * PLAN_ENTRY_SIZE;
    bool seen[PLAN_TAG_COUNT] = {};
    int32_t prev = -1;
    for (int32_t i = 0; i < count; ++i) {
        const int32_t tag = sections[i].tag;
        if (tag <= prev || tag >= PLAN_TAG_COUNT)
            return cvml_fail(CVML_ERR_LOGIC,
                             "compiled plan: section %" PRId32 ": tag %" PRId32
                             " out of the format's order",
                             i, tag);
        const tag_info& ti = kTags[tag];
        if (sections[i].size % ti.record || (ti.single && sections[i].size != ti.record))
            return cvml_fail(CVML_ERR_LOGIC,
                             "compiled plan: section %s: %" CVML_PRIuSIZE
                             " bytes is not whole %" PRIu32 "-byte records",
                             ti.name, sections[i].size, ti.record);
        pos = align_up(pos, ti.align) + sections[i].size;
        if (pos > UINT32_MAX)
            return cvml_fail(CVML_ERR_LOGIC, "compiled plan: more than 4 GiB - 1 bytes");
        seen[tag] = true;
        prev = tag;
    }
    for (int32_t k = 0; k < PLAN_TAG_COUNT; ++k)
        if (kTags[k].required && !seen[k])
            return cvml_fail(CVML_ERR_LOGIC, "compiled plan: no %s section (required)",
                             kTags[k].name);
    *size = static_cast<size_t>(pos);
    return CVML_OK;
}

int plan_file_write(const plan_target* target, const plan_section_in* sections, int32_t count,
                    uint8_t* out, size_t size) {
    if (!target_name(target->family, target->level) || target->threads < 1 ||
        target->threads > PLAN_MAX_THREADS)
        return cvml_fail(CVML_ERR_LOGIC,
                         "compiled plan: no such target (family %d, level %d, %d threads)",
                         target->family, target->level, target->threads);
    size_t need = 0;
    int rc = plan_file_size(sections, count, &need);
    if (rc) return rc;
    if (size != need)
        return cvml_fail(CVML_ERR_LOGIC,
                         "compiled plan: %" CVML_PRIuSIZE " bytes given for a %" CVML_PRIuSIZE
                         "-byte file",
                         size, need);
    memset(out, 0, size);
    memcpy(out, kMagic, sizeof kMagic);
    put16(out + kAtMajor, PLAN_FORMAT_MAJOR);
    put16(out + kAtMinor, PLAN_FORMAT_MINOR);
    put32(out + kAtHeaderSize, PLAN_HEADER_SIZE);
    put32(out + kAtFileSize, static_cast<uint32_t>(size));
    out[kAtFamily] = target->family;
    out[kAtLevel] = target->level;
    put16(out + kAtThreads, target->threads);
    put32(out + kAtTable, PLAN_HEADER_SIZE);
    put16(out + kAtCount, static_cast<uint32_t>(count));
    put16(out + kAtEntrySize, PLAN_ENTRY_SIZE);
    uint64_t pos = PLAN_HEADER_SIZE + static_cast<uint64_t>(count) * PLAN_ENTRY_SIZE;
    for (int32_t i = 0; i < count; ++i) {
        const tag_info& ti = kTags[sections[i].tag];
        const uint64_t offset = align_up(pos, ti.align);
        uint8_t* e = out + PLAN_HEADER_SIZE + i * PLAN_ENTRY_SIZE;
        memcpy(e, ti.name, 4);
        put32(e + 4, static_cast<uint32_t>(offset));
        put32(e + 8, static_cast<uint32_t>(sections[i].size));
        if (sections[i].size) memcpy(out + offset, sections[i].data, sections[i].size);
        pos = offset + sections[i].size;
    }
    put32(out + kAtChecksum, file_checksum(out, size));
    return CVML_OK;
}

namespace {

int read_file(const uint8_t* buf, size_t len, bool here, plan_file* out) {
    memset(out, 0, sizeof *out);
    int rc = read_header(buf, len, here, out);
    if (!rc) rc = read_table(buf, out);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}

}  // namespace

int plan_file_read(const uint8_t* buf, size_t len, plan_file* out) {
    return read_file(buf, len, true, out);
}

int plan_file_inspect(const uint8_t* buf, size_t len, plan_file* out) {
    return read_file(buf, len, false, out);
}
