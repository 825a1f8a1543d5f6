// GraphBuilder: terse construction of small graphs in code — for unit tests, the demo model and
// passes that emit new graphs. Each op() call adds one node whose outputs are new values.
#pragma once

#include "core/graph/graph.h"

#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace qs::graph {

/// An attribute literal: `{"group", int64_t{16}}`, `{"pads", std::vector<int64_t>{1,1,1,1}}`.
using AttributeList = std::vector<Attribute>;

class GraphBuilder {
public:
    /// Starts a model importing `opset` of the default domain.
    explicit GraphBuilder(int64_t opset = 13, int64_t irVersion = 7);

    /// Adds a graph input; a dim of -1 becomes the symbol "batch" (first dim) or unknown.
    ValueId input(const std::string& name, const std::vector<int64_t>& dims,
                  DataType dtype = DataType::Float);

    /// Adds a float initializer with the given values (row-major).
    ValueId weight(const std::string& name, const std::vector<int64_t>& dims,
                   std::span<const float> values);

    /// Adds an int64 initializer (shapes, axes, indices).
    ValueId int64s(const std::string& name, const std::vector<int64_t>& values);

    /// Adds a node with one output named `name` + "_output_0"; returns that output.
    ValueId op(const std::string& opType, const std::string& name, std::vector<ValueId> inputs,
               AttributeList attributes = {});

    /// Adds a node with `outputCount` outputs; returns them.
    std::vector<ValueId> opMulti(const std::string& opType, const std::string& name,
                                 std::vector<ValueId> inputs, size_t outputCount,
                                 AttributeList attributes = {});

    /// Marks `value` as a graph output, optionally setting its dtype/shape (-1: dynamic dim).
    void output(ValueId value, DataType dtype = DataType::Float,
                const std::vector<int64_t>& dims = {});

    Graph& graph() { return m_graph; }

    /// Hands the graph over; the builder is empty afterwards.
    Graph take() { return std::move(m_graph); }

private:
    Graph m_graph;
};

} // namespace qs::graph
