/* The checks shared by the same-shape binary operators elemwise_add and elemwise_sub
 * (cvm-formalization.md, FORMAT.md §6-§8): Y = ref(A, B) for two inputs of the same
 * shape (no broadcasting), output precision max(p0, p1) + 1 within 32, gas with base 1,
 * no attributes. Each operator's own test file names the operator and its formula. */
#pragma once

#include <stdint.h>

#include "elem_test_util.h"

namespace elem_test {

using BinaryRef = int64_t (*)(int64_t a, int64_t b);

inline void check_binary_formalization_and_precision(const char* op, BinaryRef ref) {
    for (int pa : {1, 8, 16, 31})
        for (int pb : {1, 4, 31}) {
            int32_t ma = static_cast<int32_t>(precision_max(pa));
            int32_t mb = static_cast<int32_t>(precision_max(pb));
            Operand a{{2, 3}, pa, {ma, -ma, 0, ma, -ma, ma / 2}, false};
            Operand b{{2, 3}, pb, {mb, mb, -mb, -mb, 0, -(mb / 3)}, true};
            OpResult r = run_op(op, {}, {a, b});
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.precisions[0], (pa > pb ? pa : pb) + 1);
            EXPECT_EQ(r.shapes[0], (Shape{2, 3}));
            for (size_t i = 0; i < 6; ++i)
                EXPECT_EQ(r.outputs[0][i], ref(a.values[i], b.values[i])) << pa << " " << pb;
        }
}

inline void check_binary_either_operand_input_and_gas(const char* op, BinaryRef ref) {
    Operand a{{4}, 8, {1, -2, 127, -127}, true};
    Operand b{{4}, 8, {-7, 7, 127, 127}, false};
    OpResult r = run_op(op, {}, {a, b});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.outputs[0][i], ref(a.values[i], b.values[i]));
    EXPECT_EQ(r.gas, unit_base_gas({a, b}, {4}));
}

inline void check_binary_refusals(const char* op) {
    Operand a{{3}, 8, {1, 2, 3}, false};
    // Equal shapes are required (upstream ElemwiseShape VERIFY): no broadcasting.
    EXPECT_EQ(run_op(op, {}, {a, Operand{{1}, 8, {1}, true}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {a, Operand{{3, 1}, 8, {1, 2, 3}, true}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {a, Operand{{1, 3}, 8, {1, 2, 3}, true}}).verify_rc, CVML_ERR_LOGIC);
    // Two 32-bit inputs give precision 33, outside 1..32 (FORMAT.md §5).
    EXPECT_EQ(run_op(op, {}, {Operand{{1}, 32, {1}, false}, Operand{{1}, 32, {1}, true}}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {Operand{{1}, 8, {1}, false}, Operand{{1}, 32, {1}, true}}).verify_rc,
              CVML_ERR_LOGIC);
    // One input or three.
    EXPECT_EQ(run_op(op, {}, {a}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(
        run_op(op, {}, {a, Operand{{3}, 8, {1, 2, 3}, true}, Operand{{3}, 8, {1, 2, 3}, true}})
            .verify_rc,
        CVML_ERR_LOGIC);
    expect_no_attributes(op, {a, Operand{{3}, 8, {1, 2, 3}, true}});
}

/* Random lengths at 31 bits, 1 and 3 threads, either operand the graph input. */
inline void check_binary_random_against(const char* op, BinaryRef ref) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        size_t n = 1 + seed * 733 % 4000;
        auto a = random_values(n, (1 << 30) - 1, seed);
        auto b = random_values(n, (1 << 30) - 1, seed + 100);
        Shape shape = {static_cast<int32_t>(n)};
        for (int threads : {1, 3}) {
            bool a_is_input = (seed + threads) % 2 == 0;
            OpResult r = run_op(
                op, {}, {Operand{shape, 31, a, !a_is_input}, Operand{shape, 31, b, a_is_input}}, 1,
                threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(r.outputs[0][i], ref(a[i], b[i]));
        }
    }
}

}  // namespace elem_test
