// libFuzzer target: compiled plans on arbitrary bytes. First the container reader
// (serializer/plan/plan_file.h): an input of even length gets its checksum made right
// first, so that the fuzzer reaches the checks behind it; a refusal must name a byte of
// the input; an accepted file must have every section inside it, and writing its
// sections again must give back the same bytes (the layout is canonical). Then the whole
// loader (cvml_graph_load_compiled, its content checks) and, for a plan it accepts, a
// run: ASan and UBSan watch both.
// With CVML_FUZZ_PLAN_SEED=DIR set, the target writes seeds there and exits
// (tests/fuzz/run_fuzz.sh): a container with every section, and the plans of the
// conformance cases under CVML_FUZZ_PLAN_CASES.
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
    static const size_t kSizes[PLAN_TAG_COUNT] = {128, 48, 96, 40, 8, 20, 8, 5, 16, 64, 8, 65};
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

std::string read_all(const std::string& path) {
    std::string s;
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return s;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}

/* The scalar plan of the model in `dir`, when it loads, as DIR/NAME.cvmc. */
void write_case_seed(cvml_context* ctx, const std::string& dir, const std::string& name,
                     const char* out) {
    const std::string json = read_all(dir + "/model.json"),
                      params = read_all(dir + "/model.params");
    cvml_graph* g = nullptr;
    if (json.empty() || cvml_graph_load_memory(ctx, "cvm", json.data(), json.size(), params.data(),
                                               params.size(), &g))
        return;
    void* data = nullptr;
    size_t size = 0;
    if (cvml_graph_save_compiled(g, "scalar", &data, &size) == 0) {
        FILE* f = fopen((std::string(out) + "/" + name + ".cvmc").c_str(), "wb");
        if (!f || fwrite(data, 1, size, f) != size) abort();
        fclose(f);
    }
    cvml_free(data);
    cvml_graph_release(g);
}

void write_case_seeds(const char* cases, const char* out) {
    cvml_context* ctx = nullptr;
    if (cvml_context_create(&ctx)) abort();
    // A handful of small cases: convolutions, tails, broadcasts, a network.
    for (const char* name : {"000_conv2d_basic", "003_conv2d_depthwise", "007_dense_bias",
                             "019_broadcast_add_k0", "032_max_pool2d_basic", "049_concatenate",
                             "075_net_resnet_block_chain", "078_net_dense_argmax_b1"})
        write_case_seed(ctx, std::string(cases) + "/" + name, name, out);
    cvml_context_release(ctx);
}

/* The loader on a container that passed: refused with a message, or loaded and run. */
void load_and_run(const std::vector<uint8_t>& bytes) {
    std::vector<uint64_t> plan((bytes.size() + 7) / 8);
    memcpy(plan.data(), bytes.data(), bytes.size());
    static cvml_context* ctx = nullptr;
    if (!ctx && cvml_context_create(&ctx)) abort();
    size_t need = 0;
    if (cvml_graph_compiled_arena_bytes(plan.data(), bytes.size(), &need)) return;
    std::vector<uint8_t> arena(need < (size_t{1} << 22) ? need : size_t{1} << 22);
    cvml_graph* g = nullptr;
    if (cvml_graph_load_compiled(ctx, plan.data(), bytes.size(), arena.data(), arena.size(), &g)) {
        if (!strstr(cvml_last_error(), "compiled")) __builtin_trap();  // says what is refused
        return;
    }
    size_t in_len = 0, out_len = 0;
    int in_type = 0, out_type = 0;
    if (!cvml_graph_input_bytes(g, &in_len, &in_type) &&
        !cvml_graph_output_bytes(g, &out_len, &out_type) && in_len < (size_t{1} << 24) &&
        out_len < (size_t{1} << 24)) {
        std::vector<uint8_t> in(in_len, 3), out(out_len);
        cvml_graph_run_bytes(g, in.data(), in.size(), out.data(), out.size());
    }
    cvml_graph_release(g);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (cvml_init() != 0) abort();
    if (const char* dir = getenv("CVML_FUZZ_PLAN_SEED")) {
        write_seed(dir);
        if (const char* cases = getenv("CVML_FUZZ_PLAN_CASES")) write_case_seeds(cases, dir);
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
    load_and_run(bytes);
    return 0;
}
