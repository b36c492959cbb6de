/* elemwise_sub (cvm-formalization.md "elemwise_sub", FORMAT.md §6-§8): Y = A - B for
 * two inputs of the same shape (no broadcasting); the output precision is
 * max(p0, p1) + 1 and must stay within 32; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include "elemwise_binary_checks.h"

using namespace elem_test;

namespace {

const char kOp[] = "elemwise_sub";

int64_t ref(int64_t a, int64_t b) {
    return a - b;
}

}  // namespace

TEST(ElemwiseSub, FormalizationAndPrecision) {
    check_binary_formalization_and_precision(kOp, ref);
}

TEST(ElemwiseSub, EitherOperandMayBeTheGraphInputAndGas) {
    check_binary_either_operand_input_and_gas(kOp, ref);
}

TEST(ElemwiseSub, RefusesUnequalShapesWideInputsAndAttributes) {
    check_binary_refusals(kOp);
}

TEST(ElemwiseSubProperty, RandomSizesAndThreadsAgainstFormalization) {
    check_binary_random_against(kOp, ref);
}
