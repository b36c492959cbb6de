// libFuzzer target: the compiled plan's container reader (serializer/plan/plan_file.h) on
// arbitrary bytes. An input of even length gets its checksum made right first, so that
// the fuzzer reaches the checks behind it. A refusal must name a byte of the input; an
// accepted file must have every section inside it, and writing its sections again must
// give back the same bytes (the layout is canonical).
// With CVML_FUZZ_PLAN_SEED=DIR set, the target writes a valid plan there as a seed and
// exits (tests/fuzz/run_fuzz.sh).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "cvml.h"
#include "serializer/plan/plan_file.h"

namespace {

void set_checksum(uint8_t* data, size_t size) {
    if (size < PLAN_HEADER_SIZE) return;
    memset(data + 20, 0, 4);
    const uint32_t crc = plan_crc32(0, data, size);
    for (int k = 0; k < 4; ++k) data[20 + k] = static_cast<uint8_t>(crc >> (8 * k));
}

void write_seed(const char* dir) {
    std::vector<std::vector<uint8_t>> payloads;
    std::vector<plan_section_in> in;
    static const size_t kSizes[PLAN_TAG_COUNT] = {128, 48, 64, 40, 8, 20, 8, 5, 16, 64, 8, 65};
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        payloads.push_back(std::vector<uint8_t>(kSizes[t], static_cast<uint8_t>(t + 1)));
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) in.push_back({t, payloads[t].data(), kSizes[t]});
    size_t size = 0;
    if (plan_file_size(in.data(), PLAN_TAG_COUNT, &size)) abort();
    std::vector<uint8_t> bytes(size);
    const plan_target scalar = {PLAN_FAMILY_PORTABLE, 0, 1};
    if (plan_file_write(&scalar, in.data(), PLAN_TAG_COUNT, bytes.data(), size)) abort();
    const std::string path = std::string(dir) + "/plan_all_sections";
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) abort();
    fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (cvml_init() != 0) abort();
    if (const char* dir = getenv("CVML_FUZZ_PLAN_SEED")) {
        write_seed(dir);
        exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint8_t> bytes(data, data + size);
    if (size % 2 == 0) set_checksum(bytes.data(), size);
    plan_file f;
    const int rc = plan_file_read(bytes.data(), bytes.size(), &f);
    if (rc) {
        const char* msg = cvml_last_error();
        static const char kPrefix[] = "compiled plan: byte ";
        if (strncmp(msg, kPrefix, sizeof kPrefix - 1) != 0) __builtin_trap();
        if (strtoul(msg + sizeof kPrefix - 1, nullptr, 10) > size) __builtin_trap();
        return 0;
    }
    std::vector<plan_section_in> in;
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) {
        const plan_section& s = f.sections[t];
        if (!s.data) continue;
        if (s.data != bytes.data() + s.offset || static_cast<size_t>(s.offset) + s.size > size)
            __builtin_trap();
        in.push_back({t, s.data, s.size});
    }
    size_t again = 0;
    if (plan_file_size(in.data(), static_cast<int32_t>(in.size()), &again) || again != size)
        __builtin_trap();
    std::vector<uint8_t> copy(size);
    if (plan_file_write(&f.target, in.data(), static_cast<int32_t>(in.size()), copy.data(), size))
        __builtin_trap();
    if (memcmp(copy.data(), bytes.data(), size) != 0) __builtin_trap();
    return 0;
}
