// Runs the hostile models of issue 18 through what a chain node does first: the gas
// query, the load, one inference; each in a fresh process whose time and peak RSS are
// measured, killed past a hard limit. Fails when any case exceeds the bounds (default
// 10 s and 512 MiB), crashes, or is refused with a class other than logic/runtime.
//
// --device cuda loads every case for the GPU (CVMAPILoadModel's device type 1: the CUDA
// plugin must be found, e.g. the emulated one through CVML_PLUGIN_PATH). A case named
// with --on-cuda must then load with every operator node on "cuda", its load (parse,
// placement, both devices' planning) within --place-s seconds.
//
//   cvml_hostile [--limit-s S] [--limit-mib M] [--kill-s K] [--device cpu|cuda]
//                [--on-cuda NAME]... [--place-s S] [--list] [NAME...]
//   cvml_hostile --write-seeds DIR    (small models of the same shapes, for tests/fuzz)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cvm_api.h"
#include "cvml.h"
#include "hostile/hostile_models.h"

namespace {

double now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

bool write_file(const std::string& path, const std::string& bytes) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return fclose(f) == 0 && ok;
}

std::string read_file(const std::string& path) {
    std::string s;
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return s;
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        s.resize(static_cast<size_t>(st.st_size));
        if (fread(&s[0], 1, s.size(), f) != s.size()) s.clear();
    }
    fclose(f);
    return s;
}

/* Operator nodes of the loaded net, and how many of them run on "cuda". */
void count_placement(void* net, int* ops, int* on_cuda) {
    const cvml_graph* g = static_cast<const cvml_graph*>(net);
    int count = 0;
    *ops = *on_cuda = 0;
    cvml_graph_node_count(g, &count);
    for (int i = 0; i < count; ++i) {
        const char* device = "";
        if (cvml_graph_node_device(g, i, &device) != CVML_OK || !device[0]) continue;
        ++*ops;
        *on_cuda += strcmp(device, "cuda") == 0;
    }
}

/* The child: gas query, load, one inference (inputs and outputs up to 256 MiB). */
int run_one(const std::string& dir, int device_type) {
    std::string json = read_file(dir + "/model.json");
    std::string params = read_file(dir + "/model.params");
    double t0 = now();
    unsigned long long gas = 0;
    int gas_rc = CVMAPIGetGasFromGraphFile(json.c_str(), &gas);
    std::string why = gas_rc ? cvml_last_error() : "";
    double t1 = now();
    void* net = nullptr;
    int load_rc = json.size() > 0x7fffffff
                      ? 2
                      : CVMAPILoadModel(json.data(), static_cast<int>(json.size()), params.data(),
                                        static_cast<int>(params.size()), &net, device_type, 0);
    double t2 = now();
    if (load_rc && why.empty()) why = cvml_last_error();
    int run_rc = -1, ops = 0, on_cuda = 0;
    unsigned long long in_len = 0, out_len = 0;
    if (load_rc == 0) {
        count_placement(net, &ops, &on_cuda);
        CVMAPIGetInputLength(net, &in_len);
        CVMAPIGetOutputLength(net, &out_len);
        if (in_len <= (256u << 20) && out_len <= (256u << 20)) {
            std::vector<char> in(in_len ? in_len : 1, 0), out(out_len ? out_len : 1);
            // Boxes for NMS-shaped inputs: class 0, score 100, zero area (never suppressed).
            for (size_t i = 0; i + 5 < in_len; i += 6) in[i + 1] = 100;
            run_rc = CVMAPIInference(net, in.data(), static_cast<int>(in_len), out.data());
        } else {
            run_rc = -2;  // too large for this harness to pass
        }
        CVMAPIFreeModel(net);
    }
    double t3 = now();
    printf(
        "gas_rc=%d gas=%llu load_rc=%d run_rc=%d in=%llu out=%llu ops=%d cuda=%d gas_s=%.3f "
        "load_s=%.3f run_s=%.3f %.90s\n",
        gas_rc, gas, load_rc, run_rc, in_len, out_len, ops, on_cuda, t1 - t0, t2 - t1, t3 - t2,
        why.c_str());
    fflush(stdout);
    return 0;
}

struct outcome {
    double seconds;
    double mib;
    int signal;
    bool killed;
    std::string line;
};

outcome measure(const char* self, const std::string& dir, const char* device, double kill_s) {
    outcome o{0, 0, 0, false, ""};
    int pipefd[2];
    if (pipe(pipefd) != 0) return o;
    double start = now();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        execl(self, self, "--run-one", dir.c_str(), device, static_cast<char*>(nullptr));
        _exit(127);
    }
    close(pipefd[1]);
    int status = 0;
    rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t r = wait4(pid, &status, WNOHANG, &ru);
        if (r == pid) break;
        if (now() - start > kill_s && !o.killed) {
            kill(pid, SIGKILL);
            o.killed = true;
        }
        usleep(5000);
    }
    o.seconds = now() - start;
    o.mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    char buf[1024];
    ssize_t n = read(pipefd[0], buf, sizeof buf - 1);
    close(pipefd[0]);
    if (n > 0) {
        buf[n] = '\0';
        o.line = buf;
        while (!o.line.empty() && o.line.back() == '\n') o.line.pop_back();
    }
    return o;
}

bool good_rc(const std::string& line) {
    // Every status is 0, 1 or 2 (or the harness's -1/-2 for a run it skipped).
    for (const char* key : {"gas_rc=", "load_rc="}) {
        size_t at = line.find(key);
        if (at == std::string::npos) return false;
        int rc = atoi(line.c_str() + at + strlen(key));
        if (rc < 0 || rc > 2) return false;
    }
    return true;
}

double field(const std::string& line, const char* key) {
    size_t at = line.find(key);
    return at == std::string::npos ? -1 : atof(line.c_str() + at + strlen(key));
}

/* A case the GPU must take: loaded, every operator node on "cuda", placed in time. */
bool placed_on_cuda(const std::string& line, double place_s) {
    const double ops = field(line, " ops="), on_cuda = field(line, " cuda=");
    return field(line, "load_rc=") == 0 && ops > 0 && on_cuda == ops &&
           field(line, "load_s=") <= place_s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && strcmp(argv[1], "--run-one") == 0)
        return run_one(argv[2], strcmp(argv[3], "cuda") == 0 ? 1 : 0);
    if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
        // The load fuzzer's format: graph JSON, "\n#PARAMS#\n", the params blob.
        for (const auto& c : hostile::seed_cases()) {
            hostile::model m = c.make();
            if (!write_file(std::string(argv[2]) + "/" + c.name,
                            m.json + "\n#PARAMS#\n" + m.params))
                return 1;
        }
        return 0;
    }
    double limit_s = 10, limit_mib = 512, kill_s = 60, place_s = 1;
    bool list = false;
    const char* device = "cpu";
    std::vector<std::string> wanted, on_cuda;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--limit-s" && i + 1 < argc)
            limit_s = atof(argv[++i]);
        else if (a == "--limit-mib" && i + 1 < argc)
            limit_mib = atof(argv[++i]);
        else if (a == "--kill-s" && i + 1 < argc)
            kill_s = atof(argv[++i]);
        else if (a == "--device" && i + 1 < argc)
            device = argv[++i];
        else if (a == "--on-cuda" && i + 1 < argc)
            on_cuda.push_back(argv[++i]);
        else if (a == "--place-s" && i + 1 < argc)
            place_s = atof(argv[++i]);
        else if (a == "--list")
            list = true;
        else
            wanted.push_back(a);
    }
    char dir_template[] = "/tmp/cvml_hostile_XXXXXX";
    const char* dir = mkdtemp(dir_template);
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    int failures = 0;
    for (const auto& c : hostile::cases()) {
        if (!wanted.empty()) {
            bool hit = false;
            for (const auto& w : wanted) hit |= w == c.name;
            if (!hit) continue;
        }
        if (list) {
            printf("%s: %s\n", c.name, c.what);
            continue;
        }
        std::string json_path = std::string(dir) + "/model.json";
        std::string params_path = std::string(dir) + "/model.params";
        {
            hostile::model m = c.make();
            if (!write_file(json_path, m.json) || !write_file(params_path, m.params)) {
                fprintf(stderr, "%s: cannot write the model\n", c.name);
                return 1;
            }
            printf("%-20s %9zu B json  ", c.name, m.json.size());
        }
        outcome o = measure(argv[0], dir, device, kill_s);
        bool ok = !o.killed && o.signal == 0 && o.seconds <= limit_s && o.mib <= limit_mib &&
                  good_rc(o.line);
        for (const auto& w : on_cuda)
            if (w == c.name) ok = ok && placed_on_cuda(o.line, place_s);
        printf("%7.2f s %7.1f MiB  %s%s%s\n", o.seconds, o.mib,
               o.killed   ? "KILLED "
               : o.signal ? "SIGNAL "
                          : "",
               o.line.c_str(), ok ? "" : "  <-- FAIL");
        fflush(stdout);
        failures += !ok;
        unlink(json_path.c_str());
        unlink(params_path.c_str());
    }
    rmdir(dir);
    for (const auto& w : on_cuda) {
        bool known = false;
        for (const auto& c : hostile::cases()) known |= w == c.name;
        if (!known) {
            fprintf(stderr, "--on-cuda %s: no such case\n", w.c_str());
            ++failures;
        }
    }
    return failures ? 1 : 0;
}
