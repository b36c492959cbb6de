// Helpers for the conformance runner: files, case metadata (read with the core's own
// JSON reader), the case list found at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conformance {

struct case_meta {
    std::string name;
    std::string dir;
    std::string outcome;  // ok, load_error, inference_error, clean
    int error_class = 0;  // 1 logic, 2 runtime
    bool has_gas = false;
    uint64_t gas = 0;
    int graph_gas_rc = 0;
    uint64_t graph_gas = 0;
    std::string output;  // file name of the expected bytes, "" if none
    bool has_upstream_io = false;
    uint64_t input_length = 0, output_length = 0, input_type_size = 0, output_type_size = 0;
};

std::string read_file(const std::string& path, bool* ok = nullptr);
bool file_exists(const std::string& path);
std::string cases_dir();
std::vector<std::string> case_names();
bool load_meta(const std::string& name, case_meta* meta, std::string* error);
int class_of(const std::string& c);

}  // namespace conformance
