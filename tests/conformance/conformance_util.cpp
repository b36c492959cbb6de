#include "conformance_util.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "serializer/cvm/json.h"

namespace conformance {

std::string read_file(const std::string& path, bool* ok) {
    std::ifstream f(path, std::ios::binary);
    if (ok) *ok = static_cast<bool>(f);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool file_exists(const std::string& path) {
    return std::filesystem::exists(path);
}

std::string cases_dir() {
    return std::string(CVML_SOURCE_DIR) + "/tests/conformance/cases";
}

std::vector<std::string> case_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cases_dir(), ec))
        if (e.is_directory() && file_exists(e.path().string() + "/meta.json"))
            names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

int class_of(const std::string& c) {
    return c == "logic" ? 1 : c == "runtime" ? 2 : 0;
}

namespace {
const json_value* member(const json_value* o, const char* key) {
    return json_get(o, key);
}
std::string str_of(const json_value* v) {
    return v && json_type(v) == JSON_STRING ? std::string(json_str(v)) : std::string();
}
bool int_of(const json_value* v, uint64_t* out) {
    if (!v || !json_is_int(v)) return false;
    *out = static_cast<uint64_t>(json_int(v));
    return true;
}
}  // namespace

bool load_meta(const std::string& name, case_meta* meta, std::string* error) {
    meta->name = name;
    meta->dir = cases_dir() + "/" + name;
    std::string text = read_file(meta->dir + "/meta.json");
    json_doc doc;
    if (json_parse_ex(text.data(), text.size(), 1, &doc) != 0) {
        *error = "meta.json does not parse";
        json_free(&doc);
        return false;
    }
    const json_value* expect = member(doc.root, "expect");
    if (!expect) {
        *error = "meta.json has no expect block";
        json_free(&doc);
        return false;
    }
    meta->outcome = str_of(member(expect, "outcome"));
    meta->error_class = class_of(str_of(member(expect, "class")));
    meta->has_gas = int_of(member(expect, "gas"), &meta->gas);
    uint64_t rc = 0;
    int_of(member(expect, "graph_gas_rc"), &rc);
    meta->graph_gas_rc = static_cast<int>(rc);
    int_of(member(expect, "graph_gas"), &meta->graph_gas);
    meta->output = str_of(member(expect, "output"));
    const json_value* up = member(doc.root, "upstream");
    meta->has_upstream_io = int_of(member(up, "input_length"), &meta->input_length) &&
                            int_of(member(up, "output_length"), &meta->output_length) &&
                            int_of(member(up, "input_type_size"), &meta->input_type_size) &&
                            int_of(member(up, "output_type_size"), &meta->output_type_size);
    json_free(&doc);
    return true;
}

}  // namespace conformance
