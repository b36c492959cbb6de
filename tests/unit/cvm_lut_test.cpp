/* cvm_lut (cvm-formalization.md "cvm_lut", FORMAT.md §6-§8): Y = take(table, data)
 * without an axis: each data value is an index into the flattened table, clipped to
 * [0, size - 1]. The output has data's shape and the table's precision; in_dim must
 * equal the table's size; gas base 1. */
#include <gtest/gtest.h>

#include <climits>

#include "elem_test_util.h"

using namespace elem_test;

namespace {

std::vector<int32_t> ref_lut(const std::vector<int32_t>& data, const std::vector<int32_t>& table) {
    const int64_t n = static_cast<int64_t>(table.size());
    std::vector<int32_t> y;
    for (int32_t i : data)
        y.push_back(table[static_cast<size_t>(i < 0 ? 0 : (i >= n ? n - 1 : i))]);
    return y;
}

Attrs in_dim(int64_t n) {
    return {{"in_dim", std::to_string(n)}};
}

const Operand kData{{1}, 8, {0}, false};
const Operand kTable{{2, 2}, 8, {1, 2, 3, 4}, true};

}  // namespace

TEST(CvmLut, IndicesAreClippedIntoTheTable) {
    Operand data{{2, 4}, 8, {0, 1, 3, -2, 4, 2, -127, 127}, false};
    Operand table{{4}, 11, {10, -20, 30, 1000}, true};
    OpResult r = run_op("cvm_lut", in_dim(4), {data, table});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 4}));
    EXPECT_EQ(r.outputs[0], ref_lut(data.values, table.values));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{10, -20, 1000, 10, 1000, 30, 10, 1000}));
    EXPECT_EQ(r.precisions[0], 11);  // the table's, not the data's
}

TEST(CvmLut, AMultiDimensionalTableIsReadFlat) {
    Operand data{{5}, 8, {0, 3, 5, 6, 100}, false};
    Operand table{{2, 3}, 16, {-7, 8, -9, 10, -11, 12}, true};
    OpResult r = run_op("cvm_lut", in_dim(6), {data, table});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-7, 10, 12, 12, 12}));
    EXPECT_EQ(r.precisions[0], 16);
    EXPECT_EQ(r.gas, unit_base_gas({data, table}, {5}));
}

TEST(CvmLut, RefusesATableOfAnotherSize) {
    for (int64_t n : {3, 5, 0, -4, 1, INT32_MAX})
        expect_refused("cvm_lut", in_dim(n), {kData, kTable}, CVML_ERR_LOGIC, "in_dim");
    EXPECT_EQ(run_op("cvm_lut", in_dim(4), {kData, kTable}).verify_rc, CVML_OK);
}

TEST(CvmLut, RefusesMissingUnknownAndHostileAttributesAndInputCounts) {
    expect_refused("cvm_lut", {}, {kData, kTable}, CVML_ERR_RUNTIME, "in_dim");
    expect_refused("cvm_lut", {{"in_dim", "4"}, {"axis", "0"}}, {kData, kTable}, CVML_ERR_RUNTIME,
                   "axis");
    expect_int_attr_refuses_hostile_text("cvm_lut", in_dim(4), "in_dim", {kData, kTable});
    EXPECT_EQ(run_op("cvm_lut", in_dim(4), {kData}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("cvm_lut", in_dim(4), {kData, kTable, kTable}).verify_rc, CVML_ERR_LOGIC);
}

TEST(CvmLutProperty, RandomTablesAndIndicesAgainstTake) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        size_t table_size = 1 + seed * 37 % 300;
        size_t n = 1 + seed * 397 % 2000;
        auto table = random_values(table_size, 8191, seed);
        auto data = random_values(n, 127, seed + 9);  // many clipped past either end
        for (int threads : {1, 3}) {
            OpResult r = run_op("cvm_lut", in_dim(static_cast<int64_t>(table_size)),
                                {Operand{{static_cast<int32_t>(n)}, 8, data, false},
                                 Operand{{static_cast<int32_t>(table_size)}, 14, table, true}},
                                1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], ref_lut(data, table)) << "seed " << seed;
        }
    }
}
