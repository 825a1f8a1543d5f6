#include "core/graph/graph_builder.h"

namespace qs::graph {

GraphBuilder::GraphBuilder(int64_t opset, int64_t irVersion) {
    m_graph.metadata().irVersion = irVersion;
    m_graph.metadata().opsetImports.push_back({"", opset});
    m_graph.metadata().producerName = "quantscope";
    m_graph.metadata().graphName = "graph";
}

ValueId GraphBuilder::input(const std::string& name, const std::vector<int64_t>& dims,
                            DataType dtype) {
    TensorShape shape;
    shape.rankKnown = true;
    for (size_t dimIdx = 0; dimIdx < dims.size(); ++dimIdx) {
        if (dims[dimIdx] >= 0) {
            shape.dims.push_back(Dim::known(dims[dimIdx]));
        } else {
            shape.dims.push_back(Dim::symbolic(dimIdx == 0 ? "batch" : ""));
        }
    }
    const ValueId id = m_graph.addValue(name, dtype, std::move(shape));
    m_graph.addInput(id);
    return id;
}

ValueId GraphBuilder::weight(const std::string& name, const std::vector<int64_t>& dims,
                             std::span<const float> values) {
    return m_graph.addInitializer(name, TensorData::fromValues(DataType::Float, dims, values));
}

ValueId GraphBuilder::int64s(const std::string& name, const std::vector<int64_t>& values) {
    return m_graph.addInitializer(
        name, TensorData::fromValues<int64_t>(DataType::Int64,
                                              {static_cast<int64_t>(values.size())}, values));
}

ValueId GraphBuilder::op(const std::string& opType, const std::string& name,
                         std::vector<ValueId> inputs, AttributeList attributes) {
    return opMulti(opType, name, std::move(inputs), 1, std::move(attributes)).front();
}

std::vector<ValueId> GraphBuilder::opMulti(const std::string& opType, const std::string& name,
                                           std::vector<ValueId> inputs, size_t outputCount,
                                           AttributeList attributes) {
    std::vector<ValueId> outputs;
    for (size_t outIdx = 0; outIdx < outputCount; ++outIdx) {
        outputs.push_back(
            m_graph.addValue(name + "_output_" + std::to_string(outIdx), DataType::Undefined));
    }
    m_graph.addNode(name, opType, std::move(inputs), outputs, std::move(attributes));
    return outputs;
}

void GraphBuilder::output(ValueId value, DataType dtype, const std::vector<int64_t>& dims) {
    Value& v = m_graph.value(value);
    v.dtype = dtype;
    if (!dims.empty()) {
        v.shape = TensorShape::ofDims(dims);
        for (size_t dimIdx = 0; dimIdx < dims.size(); ++dimIdx) {
            if (dims[dimIdx] < 0) {
                v.shape.dims[dimIdx] = Dim::symbolic(dimIdx == 0 ? "batch" : "");
            }
        }
    }
    m_graph.addOutput(value);
}

} // namespace qs::graph
