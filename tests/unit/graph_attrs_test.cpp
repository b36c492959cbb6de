// The graph attributes are checked piece by piece, without a tree of the whole
// attribute (graph_reader.cpp, split_attr and the decoders of each type): each malformed
// form gets the message the whole-tree reader gave, in its order (the tag before the
// values, the values before a third member). The model is built and saved to memory, so the test
// needs nothing from ../shared.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cvml.h"

namespace {

struct GraphAttrs : ::testing::Test {
    cvml_context* ctx = nullptr;
    std::string graph;
    std::string params;

    void SetUp() override {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
        cvml_graph* g = nullptr;
        ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
        const int32_t dims[2] = {2, 3};
        cvml_tensor *x = nullptr, *y = nullptr;
        ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), CVML_OK);
        ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK)
            << cvml_last_error();
        ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
        ASSERT_EQ(cvml_graph_verify(g), CVML_OK) << cvml_last_error();
        void *gd = nullptr, *pd = nullptr;
        size_t gs = 0, ps = 0;
        ASSERT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), CVML_OK)
            << cvml_last_error();
        graph.assign(static_cast<const char*>(gd), gs);
        params.assign(static_cast<const char*>(pd), ps);
        cvml_free(gd);
        cvml_free(pd);
        cvml_graph_release(g);
    }
    void TearDown() override {
        cvml_context_release(ctx);
        cvml_release();
    }

    /* The saved graph with attrs member `key`'s value replaced by `value`. */
    std::string with_attr(const std::string& key, const std::string& value) const {
        const std::string name = "\"" + key + "\"";
        size_t at = graph.find(name, graph.find("\"attrs\""));
        EXPECT_NE(at, std::string::npos) << key;
        at = graph.find_first_of("[{\"0123456789-", graph.find(':', at) + 1);
        size_t end = at;
        for (int depth = 0; end < graph.size(); ++end) {
            const char c = graph[end];
            if (c == '[' || c == '{') ++depth;
            if (c == ']' || c == '}') --depth;
            if (c == '"') end = graph.find('"', end + 1);
            if (depth == 0) break;
        }
        return graph.substr(0, at) + value + graph.substr(end + 1);
    }

    /* The saved graph with the attribute `key` (which it does not have) added, as the
     * member before storage_id. */
    std::string with_new_attr(const std::string& key, const std::string& value) const {
        const size_t at = graph.find("\"storage_id\"", graph.find("\"attrs\""));
        EXPECT_NE(at, std::string::npos);
        return graph.substr(0, at) + "\"" + key + "\": " + value + ", " + graph.substr(at);
    }

    /* Loads `json`: the error code and message. */
    std::pair<int, std::string> load(const std::string& json) const {
        cvml_graph* g = nullptr;
        const int rc = cvml_graph_load_memory(ctx, "cvm", json.data(), json.size(), params.data(),
                                              params.size(), &g);
        std::string message = rc ? cvml_last_error() : "";
        cvml_graph_release(g);
        return {rc, message};
    }
};

struct Case {
    const char* key;
    const char* value;
    int rc;
    const char* message;  // a part of the message
};

/* The load of case c's graph (`got`: its code and message) ended as c says. */
void expect_outcome(const Case& c, const std::pair<int, std::string>& got) {
    EXPECT_EQ(got.first, c.rc) << c.key << " = " << c.value << ": " << got.second;
    EXPECT_NE(got.second.find(c.message), std::string::npos)
        << c.key << " = " << c.value << ": " << got.second;
}

TEST_F(GraphAttrs, AsSavedLoads) {
    EXPECT_EQ(load(graph).first, CVML_OK) << load(graph).second;
    EXPECT_EQ(load(with_attr("dltype", "[\"list_str\", [\"int32\", \"int32\"]]")).first, CVML_OK);
    EXPECT_EQ(load(with_attr("shape", "[\"list_shape\", [[2, 3], [2, 3]]]")).first, CVML_OK);
}

TEST_F(GraphAttrs, MalformedGiveTheWholeTreeReadersMessages) {
    const Case cases[] = {
        {"dltype", "\"x\"", CVML_ERR_RUNTIME, "graph attribute at byte"},
        {"dltype", "[]", CVML_ERR_LOGIC, "graph attribute dltype: missing type tag"},
        {"dltype", "[5, [\"int32\", \"int32\"]]", CVML_ERR_RUNTIME, "graph attribute type at byte"},
        {"dltype", "[\"list_int\", [\"int32\", \"int32\"]]", CVML_ERR_LOGIC,
         "graph attribute dltype: type list_int, expected list_str"},
        {"dltype", "[\"list_str\"]", CVML_ERR_LOGIC, "graph attribute dltype: missing values"},
        {"dltype", "[\"list_str\", 5]", CVML_ERR_RUNTIME, "is a number, expected an array"},
        {"dltype", "[\"list_str\", [\"int32\", 3]]", CVML_ERR_RUNTIME, "dltype at byte"},
        {"dltype", "[\"list_str\", [\"int32\", \"int32\"], 1]", CVML_ERR_LOGIC,
         "graph attribute dltype: more than [type, values]"},
        // The values are checked before the third member is.
        {"dltype", "[\"list_str\", [3, 3], 1]", CVML_ERR_RUNTIME, "is a number, expected a string"},
        {"op_attrs", "[\"list_str\", [{}, {}]]", CVML_ERR_RUNTIME,
         "is an object, expected a string"},
        {"op_attrs", "[\"list_str\", [\"\", \"\"], \"x\"]", CVML_ERR_LOGIC,
         "graph attribute op_attrs: more than [type, values]"},
        {"shape", "{\"a\": 1}", CVML_ERR_RUNTIME, "is an object, expected an array [type, values]"},
        {"shape", "[\"list_int\", [[2, 3], [2, 3]]]", CVML_ERR_LOGIC,
         "graph attribute shape: type list_int, expected list_shape"},
        {"shape", "[\"list_shape\", 7]", CVML_ERR_RUNTIME, "shape at byte"},
        {"shape", "[\"list_shape\", [5, [2, 3]]]", CVML_ERR_RUNTIME,
         "is a number, expected an array"},
        {"shape", "[\"list_shape\", [[2, \"a\"], [2, 3]]]", CVML_ERR_RUNTIME,
         "is a string, expected an integer"},
        {"shape", "[\"list_shape\", [[1.5], [2, 3]]]", CVML_ERR_RUNTIME,
         "is a number, expected an integer"},
        {"shape", "[\"list_shape\", [[2, 3], [2, 3]], 2]", CVML_ERR_LOGIC,
         "graph attribute shape: more than [type, values]"},
        {"shape", "[\"list_shape\", [[2, 3]]]", CVML_ERR_LOGIC, "graph attribute shape size: 1"},
        {"shape", "[\"list_shape\", [[], [2, 3]]]", CVML_ERR_LOGIC, "ndim should be in (0, 6]"},
    };
    for (const Case& c : cases) expect_outcome(c, load(with_attr(c.key, c.value)));
}

/* storage_id, precision and device_index (list_int), and dtype, which upstream skips
 * (list_int read and dropped, list_str read as a number, any other tag refused). The
 * messages were compared with the whole-tree reader's (main at f54cd47): identical. */
TEST_F(GraphAttrs, ListIntAndDtypeGiveTheWholeTreeReadersMessages) {
    const Case cases[] = {
        {"storage_id", "[]", CVML_ERR_LOGIC, "graph attribute storage_id: missing type tag"},
        {"storage_id", "[\"list_str\", [0, 1]]", CVML_ERR_LOGIC,
         "graph attribute storage_id: type list_str, expected list_int"},
        {"storage_id", "[\"list_int\"]", CVML_ERR_LOGIC,
         "graph attribute storage_id: missing values"},
        {"storage_id", "[\"list_int\", 5]", CVML_ERR_RUNTIME, "is a number, expected an array"},
        {"storage_id", "[\"list_int\", [0, 1.5]]", CVML_ERR_RUNTIME,
         "is a number, expected an integer"},
        {"storage_id", "[\"list_int\", [4294967296, 1]]", CVML_ERR_RUNTIME,
         "storage_id[0] = 4294967296 does not fit an int"},
        {"storage_id", "[\"list_int\", [0, 1], 1]", CVML_ERR_LOGIC,
         "graph attribute storage_id: more than [type, values]"},
        {"precision", "[\"list_int\", [8, \"a\"], 2]", CVML_ERR_RUNTIME,
         "is a string, expected an integer"},
        {"precision", "[\"list_int\", [8]]", CVML_ERR_LOGIC, "graph attribute precision size: 1"},
    };
    for (const Case& c : cases) expect_outcome(c, load(with_attr(c.key, c.value)));
    const Case added[] = {
        {"device_index", "[\"list_int\", []]", CVML_OK, ""},
        {"device_index", "[\"list_int\", [0]]", CVML_ERR_LOGIC,
         "graph attribute device_index must be empty"},
        {"dtype", "[\"list_int\", [1, 2]]", CVML_OK, ""},
        {"dtype", "[\"list_str\", 3]", CVML_OK, ""},
        {"dtype", "[\"list_int\", [1, \"a\"]]", CVML_ERR_RUNTIME, "dtype at byte"},
        {"dtype", "[\"list_int\", [1], 2]", CVML_ERR_LOGIC,
         "graph attribute dtype: more than [type, values]"},
        {"dtype", "[\"list_str\", -1]", CVML_ERR_RUNTIME, "dtype (list_str) at byte"},
        {"dtype", "[\"list_str\", [\"a\"]]", CVML_ERR_RUNTIME, "is an array, expected a number"},
        {"dtype", "[\"list_shape\", [[1]]]", CVML_ERR_RUNTIME,
         "cannot skip graph attr dtype of type list_shape"},
        {"dtype", "[3, 4]", CVML_ERR_RUNTIME, "graph attribute type at byte"},
        {"dtype", "[\"list_str\"]", CVML_ERR_LOGIC, "graph attribute dtype: missing values"},
    };
    for (const Case& c : added) expect_outcome(c, load(with_new_attr(c.key, c.value)));
}

/* The byte offsets name the value at fault, as the whole-tree reader's did. */
TEST_F(GraphAttrs, OffsetsNameTheValueAtFault) {
    struct Fault {
        const char* key;
        const char* value;
        const char* at; /* the faulty value's text, after the key */
        const char* is;
    };
    const Fault faults[] = {
        {"dltype", "[\"list_str\", [\"int32\", 3]]", "3]]", " is a number"},
        {"shape", "[\"list_shape\", [[2, 3], [2, \"a\"]]]", "\"a\"", " is a string"},
    };
    for (const Fault& f : faults) {
        const std::string json = with_attr(f.key, f.value);
        const size_t at = json.find(f.at, json.find(std::string("\"") + f.key + "\""));
        const std::string message = load(json).second;
        EXPECT_NE(message.find(std::string(f.key) + " at byte " + std::to_string(at) + f.is),
                  std::string::npos)
            << message;
    }
}

}  // namespace
