#include "hostile/hostile_models.h"

#include <string.h>

namespace hostile {
namespace {

struct node {
    bool is_var;
    std::string name;
    std::string func;
    std::vector<int> inputs;  // producer nodes (entry 0 of each unless noted)
    std::vector<int> input_index;
    std::string op_attrs;
    std::vector<std::vector<int64_t>> out_shapes;  // one per output
    int precision;                                 // of output 0 (others -1)
};

std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

std::string quoted(const std::string& s) {
    std::string t = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') t += '\\';
        t += c;
    }
    return t + "\"";
}

/* The compiler's layout: one storage id per entry, int32 dltype, heads as given
 * ([node, index]), then `extra` appended inside the top-level object. */
std::string graph_json(const std::vector<node>& nodes,
                       const std::vector<std::pair<int, int>>& heads,
                       const std::string& extra = "") {
    std::vector<int> row(nodes.size() + 1, 0);
    for (size_t i = 0; i < nodes.size(); ++i)
        row[i + 1] = row[i] + static_cast<int>(nodes[i].out_shapes.size());
    std::string j = "{\"nodes\": [";
    std::string arg;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        j += i ? ", " : "";
        if (n.is_var) {
            j += "{\"op\": \"null\", \"name\": " + quoted(n.name) + ", \"inputs\": []}";
            arg += (arg.empty() ? "" : ", ") + std::to_string(i);
            continue;
        }
        j += "{\"op\": \"cvm_op\", \"name\": " + quoted(n.name) +
             ", \"attrs\": {\"func_name\": " + quoted(n.func) + ", \"num_inputs\": \"" +
             std::to_string(n.inputs.size()) + "\", \"num_outputs\": \"" +
             std::to_string(n.out_shapes.size()) + "\", \"flatten_data\": \"0\"}, \"inputs\": [";
        for (size_t k = 0; k < n.inputs.size(); ++k)
            j += (k ? ", [" : "[") + std::to_string(n.inputs[k]) + ", " +
                 std::to_string(k < n.input_index.size() ? n.input_index[k] : 0) + ", 0]";
        j += "]}";
    }
    j += "], \"arg_nodes\": [" + arg + "], \"node_row_ptr\": [";
    for (size_t i = 0; i < row.size(); ++i) j += (i ? ", " : "") + std::to_string(row[i]);
    j += "], \"heads\": [";
    for (size_t i = 0; i < heads.size(); ++i)
        j += (i ? ", [" : "[") + std::to_string(heads[i].first) + ", " +
             std::to_string(heads[i].second) + ", 0]";
    j += "], \"attrs\": {\"op_attrs\": [\"list_str\", [";
    for (size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        std::string a =
            n.is_var ? "{\"precision\": \"" + std::to_string(n.precision) + "\"}" : n.op_attrs;
        j += (i ? ", " : "") + quoted(a);
    }
    int entries = row.back();
    j += "]], \"dltype\": [\"list_str\", [";
    for (int e = 0; e < entries; ++e) j += e ? ", \"int32\"" : "\"int32\"";
    j += "]], \"precision\": [\"list_int\", [";
    std::string ids, shapes;
    int e = 0;
    for (const node& n : nodes)
        for (size_t o = 0; o < n.out_shapes.size(); ++o, ++e) {
            j += (e ? ", " : "") + std::to_string(o == 0 && n.is_var ? n.precision : -1);
            ids += (e ? ", " : "") + std::to_string(e);
            shapes += (e ? ", " : "") + shape_text(n.out_shapes[o]);
        }
    j += "]], \"storage_id\": [\"list_int\", [" + ids + "]], \"shape\": [\"list_shape\", [" +
         shapes + "]]}" + extra + ", \"version\": \"cvm_1.0.0\"}";
    return j;
}

void put_u64(std::string* s, uint64_t v) {
    for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}

void put_u32(std::string* s, uint32_t v) {
    for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}

/* The params blob: every name (int32 arrays of one zero each for the first `arrays`
 * names; the rest get the same array, so names and arrays counts match). */
std::string params_blob(const std::vector<std::string>& names) {
    std::string s;
    put_u64(&s, 0xF7E58D4F05049CB7ull);
    put_u64(&s, 0);
    put_u64(&s, names.size());
    for (const std::string& n : names) {
        put_u64(&s, n.size());
        s += n;
    }
    put_u64(&s, names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        put_u64(&s, 0xDD5E40F096B4A13Full);
        put_u64(&s, 0);
        put_u32(&s, 1);  // CPU
        put_u32(&s, 0);
        put_u32(&s, 1);                      // ndim
        put_u32(&s, 0 | 32 << 8 | 1 << 16);  // int32 x1
        put_u64(&s, 1);                      // shape
        put_u64(&s, 4);                      // bytes
        put_u32(&s, 0);
    }
    return s;
}

std::string empty_params() {
    return params_blob({});
}

node data_node(std::vector<int64_t> shape, int precision = 8) {
    return node{true, "data", "", {}, {}, "", {shape}, precision};
}

node relu(int from, std::vector<int64_t> shape, const std::string& name) {
    return node{false, name, "relu", {from}, {}, "{}", {shape}, -1};
}

model heads_relu(int heads) {
    std::vector<node> n{data_node({1, 10})};
    std::vector<std::pair<int, int>> h;
    for (int i = 0; i < heads; ++i) {
        n.push_back(relu(0, {1, 10}, "relu_" + std::to_string(i)));
        h.push_back({i + 1, 0});
    }
    return {graph_json(n, h), empty_params()};
}

model heads_4000() {
    return heads_relu(4000);
}
model heads_8000() {
    return heads_relu(8000);
}

/* Every head alive at once inside one subgraph: data feeds `heads` relu nodes whose
 * outputs one concatenate reads, so an arena planner sees `heads` buffers live together
 * (a device with kernels for both, such as the CUDA device, takes the whole graph). */
model fanout_concat(int heads) {
    std::vector<node> n{data_node({1, 10})};
    std::vector<int> all;
    for (int i = 0; i < heads; ++i) {
        n.push_back(relu(0, {1, 10}, "relu_" + std::to_string(i)));
        all.push_back(i + 1);
    }
    n.push_back(node{false,
                     "concat",
                     "concatenate",
                     all,
                     {},
                     "{\"axis\": \"1\"}",
                     {{1, 10 * static_cast<int64_t>(heads)}},
                     -1});
    return {graph_json(n, {{heads + 1, 0}}), empty_params()};
}

model fanout_concat_4000() {
    return fanout_concat(4000);
}
model fanout_concat_8000() {
    return fanout_concat(8000);
}

model relu_chain_100k() {
    std::vector<node> n{data_node({1, 10})};
    for (int i = 0; i < 100000; ++i) n.push_back(relu(i, {1, 10}, "relu_" + std::to_string(i)));
    return {graph_json(n, {{100000, 0}}), empty_params()};
}

/* Variables each added to the data: y_i = elemwise_add(data, p_i); the last is the
 * head. The params list every variable `names_per_variable` times. */
model variables(int count, int names_per_variable) {
    std::vector<node> n{data_node({1})};
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
        std::string p = "p_" + std::to_string(i);
        n.push_back(node{true, p, "", {}, {}, "", {{1}}, 8});
        n.push_back(node{false,
                         "add_" + std::to_string(i),
                         "elemwise_add",
                         {0, static_cast<int>(n.size()) - 1},
                         {},
                         "{}",
                         {{1}},
                         -1});
        names.push_back(p);
    }
    std::vector<std::string> listed;
    for (int k = 0; k < names_per_variable; ++k)
        listed.insert(listed.end(), names.begin(), names.end());
    return {graph_json(n, {{static_cast<int>(n.size()) - 1, 0}}), params_blob(listed)};
}

model variables_100k() {
    return variables(100000, 1);
}
model params_names_250k() {
    return variables(50000, 5);
}

/* A valid model followed by an unknown key holding 16 M integers (32 MB). */
model json_32mb() {
    std::string ints;
    ints.reserve(32u << 20);
    for (int i = 0; i < (16 << 20) - 40000; ++i) ints += i ? ",1" : "1";
    std::vector<node> n{data_node({1, 10}), relu(0, {1, 10}, "relu_0")};
    return {graph_json(n, {{1, 0}}, ", \"padding\": [" + ints + "]"), empty_params()};
}

/* A JSON past the document cap: the same, 40 MB. */
model json_40mb() {
    std::string ints;
    ints.reserve(40u << 20);
    for (int i = 0; i < (20 << 20); ++i) ints += i ? ",1" : "1";
    std::vector<node> n{data_node({1, 10}), relu(0, {1, 10}, "relu_0")};
    return {graph_json(n, {{1, 0}}, ", \"padding\": [" + ints + "]"), empty_params()};
}

/* A million heads on one 1 KB tensor. */
model heads_1m_same() {
    std::vector<node> n{data_node({1, 1024}), relu(0, {1, 1024}, "relu_0")};
    std::vector<std::pair<int, int>> h(1000000, {1, 0});
    return {graph_json(n, h), empty_params()};
}

/* A small graph whose output length is 4.9 GB: 1,200 heads on a 4 MB tensor. */
model output_4_9gb() {
    std::vector<node> n{data_node({1, 1 << 20}, 16), relu(0, {1, 1 << 20}, "relu_0")};
    std::vector<std::pair<int, int>> h(1200, {1, 0});
    return {graph_json(n, h), empty_params()};
}

/* A 500-byte graph whose input is 2^31 bytes (2^29 int32 values). */
model input_2gb() {
    std::vector<node> n{data_node({1 << 15, 1 << 14}, 16), relu(0, {1 << 15, 1 << 14}, "relu_0")};
    return {graph_json(n, {{1, 0}}), empty_params()};
}

/* non_max_suppression over `anchors` boxes: O(n^2) for gas 20. */
model nms(int anchors) {
    std::vector<node> n{data_node({1, anchors, 6}),
                        node{false,
                             "gvc",
                             "get_valid_counts",
                             {0},
                             {},
                             "{\"score_threshold\": \"0\"}",
                             {{1}, {1, anchors, 6}},
                             -1},
                        node{false,
                             "nms",
                             "non_max_suppression",
                             {1, 1},
                             {1, 0},
                             "{\"top_k\": \"-1\", \"max_output_size\": \"-1\", \"force_suppress\": "
                             "\"False\", \"iou_threshold\": \"70\"}",
                             {{1, anchors, 6}},
                             -1}};
    return {graph_json(n, {{2, 0}}), empty_params()};
}

model nms_16k() {
    return nms(16384);
}
model nms_32k() {
    return nms(32768);
}
model nms_1m() {
    return nms(1 << 20);
}

/* One op_attrs string holding 200,000 copies of one key (a later duplicate wins, which
 * must not cost a search per key). */
model op_attrs_duplicates() {
    std::string attrs = "{";
    for (int i = 0; i < 200000; ++i) attrs += i ? ", \"a\": \"1\"" : "\"a\": \"1\"";
    attrs += "}";
    std::vector<node> n{data_node({1, 10}), relu(0, {1, 10}, "relu_0")};
    n[1].op_attrs = attrs;
    return {graph_json(n, {{1, 0}}), empty_params()};
}

/* 30,000 variables all named alike, and 30,000 arg nodes named alike. */
model duplicate_names() {
    std::vector<node> n{data_node({1})};
    for (int i = 0; i < 30000; ++i) n.push_back(node{true, "p", "", {}, {}, "", {{1}}, 8});
    return {graph_json(n, {{0, 0}}), empty_params()};
}

/* Deep nesting and long strings inside an unknown key. */
model deep_and_long() {
    std::string deep(60, '[');
    deep += std::string(60, ']');
    std::string longs = "\"" + std::string(15 << 20, 'x') + "\"";
    std::vector<node> n{data_node({1, 10}), relu(0, {1, 10}, "relu_0")};
    return {graph_json(n, {{1, 0}}, ", \"a\": " + deep + ", \"b\": " + longs), empty_params()};
}

/* Small versions of the same shapes: fuzzing seeds (libFuzzer's max_len is 256 KB). */
model seed_heads() {
    return heads_relu(600);
}
model seed_chain() {
    std::vector<node> n{data_node({1, 10})};
    for (int i = 0; i < 1200; ++i) n.push_back(relu(i, {1, 10}, "r" + std::to_string(i)));
    return {graph_json(n, {{1200, 0}}), empty_params()};
}
model seed_variables() {
    return variables(500, 2);
}
model seed_nms() {
    return nms(16384);
}
model seed_heads_same() {
    std::vector<node> n{data_node({1, 1024}), relu(0, {1, 1024}, "relu_0")};
    std::vector<std::pair<int, int>> h(2, {1, 0});
    return {graph_json(n, h), empty_params()};
}

}  // namespace

const std::vector<hostile_case>& seed_cases() {
    static const std::vector<hostile_case> all = {
        {"seed_heads", "data feeds 600 relu heads", seed_heads},
        {"seed_chain", "a 1,200-node relu chain", seed_chain},
        {"seed_variables", "500 variables, each named twice in the params", seed_variables},
        {"seed_nms", "non_max_suppression over 16k anchors", seed_nms},
        {"seed_heads_same", "one tensor as two heads", seed_heads_same},
        {"seed_output", "1,200 heads on a 4 MB tensor", output_4_9gb},
        {"seed_input", "a 2^31-byte input", input_2gb},
    };
    return all;
}

const std::vector<hostile_case>& cases() {
    static const std::vector<hostile_case> all = {
        {"heads_4000", "data feeds 4,000 relu heads", heads_4000},
        {"heads_8000", "data feeds 8,000 relu heads", heads_8000},
        {"fanout_concat_4000", "4,000 relu heads alive at once, concatenated", fanout_concat_4000},
        {"fanout_concat_8000", "8,000 relu heads alive at once, concatenated", fanout_concat_8000},
        {"relu_chain_100k", "a 100,000-node relu chain", relu_chain_100k},
        {"variables_100k", "100,000 variables", variables_100k},
        {"params_names_250k", "50,000 variables, 250,000 params names", params_names_250k},
        {"json_32mb", "a valid model + an unknown key of 16 M integers", json_32mb},
        {"json_40mb", "the same past the document cap", json_40mb},
        {"heads_1m_same", "a million heads on one tensor", heads_1m_same},
        {"output_4_9gb", "1,200 heads on a 4 MB tensor", output_4_9gb},
        {"input_2gb", "a 2^31-byte input", input_2gb},
        {"nms_16k", "non_max_suppression over 16k anchors (at the D10 bound)", nms_16k},
        {"nms_32k", "non_max_suppression over 32k anchors", nms_32k},
        {"nms_1m", "non_max_suppression over 2^20 anchors", nms_1m},
        {"op_attrs_duplicates", "one key 200,000 times in op_attrs", op_attrs_duplicates},
        {"duplicate_names", "30,000 variables of one name", duplicate_names},
        {"deep_and_long", "deep nesting and a 15 MB string", deep_and_long},
    };
    return all;
}

}  // namespace hostile
