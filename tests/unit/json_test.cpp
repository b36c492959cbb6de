// The compact JSON tree: values, element order, keys, wide integers, escapes, the
// offsets in messages, and the bounds on document and tree size.
#include <gtest/gtest.h>

#include <string.h>

#include <string>

#include "cvml.h"
#include "serializer/cvm/json.h"

namespace {

struct parsed {
    json_doc doc;
    int rc;
    explicit parsed(const std::string& text, int standard = 0) {
        rc = json_parse_ex(text.data(), text.size(), standard, &doc);
    }
    ~parsed() { json_free(&doc); }
};

}  // namespace

TEST(Json, ValuesAndStructure) {
    parsed p(R"( {"a": [1, -2, 2147483647, -2147483648, 4294967296, -9223372036854775808],
                 "b": {"x": "s\"t\\n", "y": [[], {}, [true, false, null]]},
                 "c": 1.5, "d": 1e3, "e": 18446744073709551616, "a": "later"} )");
    ASSERT_EQ(p.rc, CVML_OK);
    const json_value* root = p.doc.root;
    ASSERT_EQ(json_type(root), JSON_OBJECT);
    ASSERT_EQ(json_count(root), 6);
    EXPECT_STREQ(json_key_at(root, 0), "a");
    EXPECT_STREQ(json_key_at(root, 5), "a");
    const json_value* a = json_at(root, 0);
    ASSERT_EQ(json_count(a), 6);
    const int64_t want[] = {1, -2, 2147483647, -2147483648LL, 4294967296LL, INT64_MIN};
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(json_is_int(json_at(a, i)));
        EXPECT_EQ(json_int(json_at(a, i)), want[i]);
    }
    const json_value* b = json_get(root, "b");
    ASSERT_NE(b, nullptr);
    EXPECT_STREQ(json_str(json_get(b, "x")), "s\"t\\n");
    const json_value* y = json_get(b, "y");
    ASSERT_EQ(json_count(y), 3);
    EXPECT_EQ(json_type(json_at(y, 0)), JSON_ARRAY);
    EXPECT_EQ(json_count(json_at(y, 0)), 0);
    EXPECT_EQ(json_type(json_at(y, 1)), JSON_OBJECT);
    EXPECT_EQ(json_count(json_at(y, 1)), 0);
    const json_value* flags = json_at(y, 2);
    EXPECT_TRUE(json_bool(json_at(flags, 0)));
    EXPECT_FALSE(json_bool(json_at(flags, 1)));
    EXPECT_EQ(json_type(json_at(flags, 2)), JSON_NULL);
    EXPECT_EQ(json_type(json_get(root, "c")), JSON_NUMBER);
    EXPECT_FALSE(json_is_int(json_get(root, "c")));
    EXPECT_FALSE(json_is_int(json_get(root, "d")));
    EXPECT_FALSE(json_is_int(json_get(root, "e")));  // past int64
    // A later duplicate wins.
    EXPECT_STREQ(json_str(json_get(root, "a")), "later");
    EXPECT_EQ(json_get(root, "missing"), nullptr);
    // Offsets point at the value's first byte.
    EXPECT_EQ(json_offset(root), 1u);
    EXPECT_EQ(json_offset(json_at(a, 0)), 8u);
}

TEST(Json, StandardEscapesOnlyWhenAsked) {
    EXPECT_NE(parsed(R"(["\u0041"])").rc, CVML_OK);
    EXPECT_NE(parsed(R"(["\/"])").rc, CVML_OK);
    parsed p(R"(["\u0041\u00e9\u20ac\u0000\/\b\f"])", 1);
    ASSERT_EQ(p.rc, CVML_OK);
    EXPECT_STREQ(json_str(json_at(p.doc.root, 0)), "A\xC3\xA9\xE2\x82\xAC?/\b\f");
}

TEST(Json, ErrorsNameTheByte) {
    const char* bad[] = {"",       "[1,]",  "[1 2]",   "{\"a\" 1}", "{1: 2}",   "[\"a",
                         "\"\t\"", "[01x]", "tru",     "[1] x",     "{\"a\":}", "-",
                         "[1.]",   "[1e]",  "\"\\q\"", "[",         "{\"a\":1,"};
    for (const char* text : bad) {
        parsed p(text);
        EXPECT_EQ(p.rc, CVML_ERR_RUNTIME) << text;
        EXPECT_NE(std::string(cvml_last_error()).find("byte"), std::string::npos) << text;
        EXPECT_EQ(p.doc.root, nullptr);
    }
}

TEST(Json, DepthIsCapped) {
    std::string deep(JSON_MAX_DEPTH + 1, '[');
    deep += std::string(JSON_MAX_DEPTH + 1, ']');
    EXPECT_EQ(parsed(deep).rc, CVML_OK);
    std::string deeper(JSON_MAX_DEPTH + 2, '[');
    deeper += std::string(JSON_MAX_DEPTH + 2, ']');
    EXPECT_EQ(parsed(deeper).rc, CVML_ERR_RUNTIME);
}

// The tree stays within a small multiple of the document whatever its shape: a
// million one-digit integers, nested one-element arrays, many short strings.
TEST(Json, TreeIsBoundedByTheDocument) {
    std::string ints = "[";
    for (int i = 0; i < 1000000; ++i) ints += i ? ",1" : "1";
    ints += "]";
    std::string nested = "[";
    for (int i = 0; i < 300000; ++i) nested += i ? ",[1]" : "[1]";
    nested += "]";
    std::string strings = "[";
    for (int i = 0; i < 300000; ++i) strings += i ? ",\"\"" : "\"\"";
    strings += "]";
    for (const std::string* text : {&ints, &nested, &strings}) {
        parsed p(*text);
        ASSERT_EQ(p.rc, CVML_OK);
        EXPECT_LE(p.doc.tree_bytes, 8 * text->size() + 64) << text->size() << " bytes";
    }
    parsed p(ints);
    EXPECT_LE(p.doc.tree_bytes, 4 * ints.size() + 64);
    EXPECT_EQ(json_count(p.doc.root), 1000000);
    EXPECT_EQ(json_int(json_at(p.doc.root, 999999)), 1);
}

TEST(Json, DocumentSizeIsCapped) {
    std::string big(JSON_MAX_DOCUMENT + 1, ' ');
    big[0] = '1';
    parsed p(big);
    EXPECT_EQ(p.rc, CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("D7"), std::string::npos);
}

// Reading a document in pieces (the graph reader's way): the syntax of the whole is
// checked once, then members and elements are walked as byte ranges and each parsed
// into a tree of its own, with offsets counted from the document's start.
TEST(JsonPieces, RangesAndOffsetsMatchTheWholeTree) {
    const std::string text =
        R"( {"a" : [1, "x]\"}", {"k": [2, 3]}, -4e2, true] , "b\n":{}, "c":"]"} )";
    ASSERT_EQ(json_check(text.data(), text.size()), CVML_OK);
    parsed whole(text);
    ASSERT_EQ(whole.rc, CVML_OK);
    json_iter it;
    json_iter_start(&it, text.data(), text.size(), 0);
    int32_t member = 0;
    while (json_iter_next(&it)) {
        ASSERT_LT(member, json_count(whole.doc.root));
        json_doc key, value;
        ASSERT_EQ(json_parse_range(text.data(), it.key_begin, it.key_end, &key), CVML_OK);
        EXPECT_STREQ(json_str(key.root), json_key_at(whole.doc.root, member));
        ASSERT_EQ(json_parse_range(text.data(), it.begin, it.end, &value), CVML_OK);
        const json_value* same = json_at(whole.doc.root, member);
        EXPECT_EQ(json_type(value.root), json_type(same));
        EXPECT_EQ(json_offset(value.root), json_offset(same));
        EXPECT_EQ(json_count(value.root), json_count(same));
        EXPECT_EQ(json_type_at(text.data(), text.size(), it.begin), json_type(same));
        json_free(&key);
        json_free(&value);
        ++member;
    }
    EXPECT_EQ(member, 3);
    // The elements of "a", the string with brackets and an escaped quote included.
    json_iter_start(&it, text.data(), text.size(), text.find('['));
    const json_value* a = json_at(whole.doc.root, 0);
    int32_t element = 0;
    while (json_iter_next(&it)) {
        ASSERT_LT(element, json_count(a));
        EXPECT_EQ(it.begin, json_offset(json_at(a, element)));
        ++element;
    }
    EXPECT_EQ(element, 5);
    json_iter_start(&it, text.data(), text.size(), text.find("{}"));
    EXPECT_EQ(json_iter_next(&it), 0);  // an empty object
}

TEST(JsonPieces, CheckFailsAsParseDoes) {
    const char* bad[] = {"", "[1,]", "{\"a\" 1}", "[\"\\u0041\"]", "[1] x", "{\"a\": tru}"};
    for (const char* text : bad) {
        parsed whole(text);
        ASSERT_NE(whole.rc, CVML_OK) << text;
        const std::string message = cvml_last_error();
        EXPECT_EQ(json_check(text, strlen(text)), whole.rc) << text;
        EXPECT_EQ(cvml_last_error(), message) << text;
    }
}
