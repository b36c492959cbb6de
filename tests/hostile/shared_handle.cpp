// One cifar_resnet20 net shared by 8 threads, 100 inferences each, against one net per
// thread: every output must be the expected bytes (issue 18: a shared handle gave wrong
// bytes with status 0, crashed or deadlocked). Run at CVML_NUM_THREADS 1 and 2, and
// under ThreadSanitizer by scripts/test.sh. Exit 77 (skipped) without ../shared.
//
//   cvml_shared_handle MODEL_DIR [THREADS] [RUNS]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cvm_api.h"

namespace {

bool read_file(const std::string& path, std::string* out) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    out->clear();
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
    fclose(f);
    return true;
}

struct model_files {
    std::string json, params, input, expected;
};

void* load(const model_files& m) {
    void* net = nullptr;
    if (CVMAPILoadModel(m.json.data(), static_cast<int>(m.json.size()), m.params.data(),
                        static_cast<int>(m.params.size()), &net, 0, 0) != 0)
        return nullptr;
    return net;
}

/* Runs `runs` inferences on `net`; counts the failures and wrong outputs. */
void hammer(void* net, const model_files& m, int runs, std::atomic<int>* bad) {
    std::string input = m.input;
    std::vector<char> out(m.expected.size() + 64);
    for (int r = 0; r < runs; ++r) {
        memset(out.data(), 0x5a, out.size());
        int rc = CVMAPIInference(net, &input[0], static_cast<int>(input.size()), out.data());
        if (rc != 0 || memcmp(out.data(), m.expected.data(), m.expected.size()) != 0) ++*bad;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL_DIR [THREADS] [RUNS]\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    int threads = argc > 2 ? atoi(argv[2]) : 8;
    int runs = argc > 3 ? atoi(argv[3]) : 100;
    model_files m;
    if (!read_file(dir + "/model.json", &m.json) || !read_file(dir + "/model.params", &m.params) ||
        !read_file(dir + "/input.bin", &m.input) || !read_file(dir + "/output.bin", &m.expected)) {
        printf("skipped: %s is absent\n", dir.c_str());
        return 77;
    }
    unsigned long long out_len = 0;
    void* shared = load(m);
    if (!shared || CVMAPIGetOutputLength(shared, &out_len) != 0 || out_len != m.expected.size()) {
        fprintf(stderr, "cannot load %s or its output length differs\n", dir.c_str());
        return 1;
    }
    const char* env = getenv("CVML_NUM_THREADS");
    int failures = 0;
    for (int separate = 0; separate < 2; ++separate) {
        std::vector<void*> nets(static_cast<size_t>(threads), shared);
        if (separate)
            for (auto& n : nets)
                if (!(n = load(m))) return 1;
        std::atomic<int> bad{0};
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(hammer, nets[static_cast<size_t>(t)], std::cref(m), runs, &bad);
        for (auto& t : pool) t.join();
        printf("%s handle%s, %d threads x %d runs, CVML_NUM_THREADS=%s: %d wrong\n",
               separate ? "separate" : "one shared", separate ? "s" : "", threads, runs,
               env ? env : "(unset)", bad.load());
        failures += bad.load();
        if (separate)
            for (void* n : nets) CVMAPIFreeModel(n);
    }
    CVMAPIFreeModel(shared);
    return failures ? 1 : 0;
}
