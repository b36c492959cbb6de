/* elemwise_add (cvm-formalization.md "elemwise_add", FORMAT.md §6-§8): Y = A + B for
 * two inputs of the same shape (no broadcasting); the output precision is
 * max(p0, p1) + 1 and must stay within 32; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include "elemwise_binary_checks.h"

using namespace elem_test;

namespace {

const char kOp[] = "elemwise_add";

int64_t ref(int64_t a, int64_t b) {
    return a + b;
}

}  // namespace

TEST(ElemwiseAdd, FormalizationAndPrecision) {
    check_binary_formalization_and_precision(kOp, ref);
}

TEST(ElemwiseAdd, EitherOperandMayBeTheGraphInputAndGas) {
    check_binary_either_operand_input_and_gas(kOp, ref);
}

TEST(ElemwiseAdd, RefusesUnequalShapesWideInputsAndAttributes) {
    check_binary_refusals(kOp);
}

TEST(ElemwiseAddProperty, RandomSizesAndThreadsAgainstFormalization) {
    check_binary_random_against(kOp, ref);
}
