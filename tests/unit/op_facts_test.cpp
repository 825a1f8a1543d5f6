#include "core/graph/op_facts.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace qs::graph {
namespace {

TEST(OpFacts, OneRowPerOpType) {
    std::set<std::string> seen;
    for (const OpFacts& facts : opFactsTable()) {
        EXPECT_TRUE(seen.insert(std::string(facts.opType)).second) << facts.opType;
    }
}

TEST(OpFacts, OpsWithMacsAreComputeThatPruningCanEnter) {
    int withMacs = 0;
    for (const OpFacts& facts : opFactsTable()) {
        if (facts.macs == MacRule::None) {
            continue;
        }
        ++withMacs;
        EXPECT_EQ(facts.family, OpFamily::Compute) << facts.opType;
        EXPECT_EQ(facts.pruningRole, PruningRole::Mixes) << facts.opType;
    }
    EXPECT_EQ(withMacs, 4); // Conv, ConvTranspose, Gemm, MatMul
}

TEST(OpFacts, NncfPatternListsAndPruningWhitelist) {
    // NNCF's ARITHMETIC alternatives and a sample of ATOMIC_ACTIVATIONS.
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
        EXPECT_TRUE(opFacts(op).arithmetic) << op;
    }
    for (const char* op : {"Relu", "Clip", "HardSwish", "Gelu", "Mish", "PRelu"}) {
        EXPECT_TRUE(opFacts(op).atomicActivation) << op;
    }
    EXPECT_FALSE(opFacts("Softmax").atomicActivation);
    // The intermediates a pruning section may hold; Concat and Softmax end one.
    for (const char* op :
         {"BatchNormalization", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
          "PRelu", "Mul", "Add", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
          "Dropout", "Identity"}) {
        EXPECT_EQ(opFacts(op).pruningRole, PruningRole::PerChannel) << op;
    }
    EXPECT_EQ(opFacts("Concat").pruningRole, PruningRole::Blocks);
    EXPECT_EQ(opFacts("Softmax").pruningRole, PruningRole::Blocks);
}

TEST(OpFacts, UnknownOpGetsTheDefaults) {
    const OpFacts& facts = opFacts("NoSuchOp");
    EXPECT_EQ(facts.family, OpFamily::Other);
    EXPECT_EQ(facts.macs, MacRule::None);
    EXPECT_EQ(facts.pruningRole, PruningRole::Blocks);
}

} // namespace
} // namespace qs::graph
