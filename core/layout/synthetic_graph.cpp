#include "core/layout/synthetic_graph.h"

#include "core/graph/graph_builder.h"

#include <string>
#include <vector>

namespace qs::layout {

namespace {
constexpr int64_t kChannels = 16;
constexpr int64_t kSide = 32;
constexpr size_t kBlockOps = 4;
constexpr size_t kBlocksPerStage = 16;
} // namespace

graph::Graph makeSkipChainGraph(size_t opCount) {
    graph::GraphBuilder builder;
    const std::vector<int64_t> dims{1, kChannels, kSide, kSide};
    graph::ValueId current = builder.input("input", dims);
    const std::vector<float> weights(static_cast<size_t>(kChannels * kChannels), 0.01F);
    const graph::ValueId weight =
        builder.weight("conv_weight", {kChannels, kChannels, 1, 1}, weights);
    graph::ValueId blockInput = current;
    for (size_t i = 0; i < opCount; ++i) {
        const size_t block = i / kBlockOps;
        const std::string scope = "/stage" + std::to_string(block / kBlocksPerStage) + "/block" +
                                  std::to_string(block % kBlocksPerStage) + "/";
        switch (i % kBlockOps) {
        case 0:
            blockInput = current;
            current = builder.op("Conv", scope + "conv1/Conv", {current, weight});
            break;
        case 1:
            current = builder.op("Relu", scope + "relu/Relu", {current});
            break;
        case 2:
            current = builder.op("Conv", scope + "conv2/Conv", {current, weight});
            break;
        default:
            current = builder.op("Add", scope + "add/Add", {current, blockInput});
            break;
        }
        builder.graph().value(current).shape = graph::TensorShape::ofDims(dims);
        builder.graph().value(current).dtype = graph::DataType::Float;
    }
    builder.output(current, graph::DataType::Float, dims);
    return builder.take();
}

} // namespace qs::layout
