/* Upstream's aliases verify and charge gas like their targets but have no kernel, so
 * running fails with a logic error; pad and sqrt are not registered at all
 * (conformance cases 136-148). */
#include <gtest/gtest.h>

#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

TEST(Aliases, VerifyWithTargetRulesButDoNotRun) {
    // Case 136: 'add' on (3,) + (1,), precisions 27 and 9 -> gas 38.
    auto r = run_op("add", {}, {Operand{{3}, 27, {1, 2, 3}, false}, Operand{{1}, 9, {4}, true}});
    EXPECT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.gas, 38u);
    EXPECT_EQ(r.precisions[0], 28);
    EXPECT_EQ(r.run_rc, CVML_ERR_LOGIC);
    // Case 138: 'multiply' broadcasts (4,1,5) x (1,3,1) -> gas 475.
    r = run_op("multiply", {},
               {Operand{{4, 1, 5}, 5, std::vector<int32_t>(20, 1), false},
                Operand{{1, 3, 1}, 2, {1, 0, -1}, true}});
    EXPECT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.gas, 475u);
    EXPECT_EQ(r.precisions[0], 7);
    EXPECT_EQ(r.run_rc, CVML_ERR_LOGIC);
    // Case 141: 'nn.relu' -> gas 528.
    r = run_op("nn.relu", {}, {Operand{{1, 4, 4, 3}, 4, std::vector<int32_t>(48, 1), false}});
    EXPECT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.gas, 528u);
    EXPECT_EQ(r.run_rc, CVML_ERR_LOGIC);
    for (const char* op : {"subtract", "__add_symbol___", "__sub_symbol___", "__mul_symbol___",
                           "__div_symbol___", "__max_symbol___", "__greater_symbol___"}) {
        r = run_op(op, {}, {Operand{{2}, 8, {1, 2}, false}, Operand{{2}, 8, {3, 4}, true}});
        EXPECT_EQ(r.verify_rc, CVML_OK) << op << ": " << r.error;
        EXPECT_EQ(r.run_rc, CVML_ERR_LOGIC) << op;
    }
    // Alias rules are the target's: a broadcast mismatch is still a logic error.
    r = run_op("subtract", {}, {Operand{{2}, 8, {1, 2}, false}, Operand{{3}, 8, {3, 4, 5}, true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC);
}

TEST(Aliases, SuffixStripAndUnregisteredNames) {
    // Case 137/140: '__add_symbol__' strips to '__add_symbol_', not registered.
    auto r =
        run_op("__add_symbol__", {}, {Operand{{1}, 8, {1}, false}, Operand{{1}, 8, {1}, true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME);
    r = run_op("__div_symbol__", {}, {Operand{{1}, 8, {1}, false}, Operand{{1}, 8, {1}, true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME);
    // Cases 143/144: sqrt and pad are not registered.
    EXPECT_EQ(run_op("sqrt", {}, {Operand{{1}, 8, {1}, false}}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("pad", {}, {Operand{{1}, 8, {1}, false}}).verify_rc, CVML_ERR_RUNTIME);
    // Cases 145/146: relu_7 -> relu and abs_ -> abs run normally.
    r = run_op("abs_", {}, {Operand{{2}, 8, {-3, 3}, false}});
    EXPECT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, 3}));
}
