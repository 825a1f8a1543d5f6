// Node attributes. The common ONNX kinds are held as values; graph-valued (If/Loop/Scan bodies),
// sparse-tensor and type-proto attributes are kept as the serialized AttributeProto, so opaque
// nodes survive a round trip unchanged.
#pragma once

#include "core/graph/tensor.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace qs::graph {

/// An attribute kept verbatim: its serialized ONNX AttributeProto.
struct OpaqueAttribute {
    std::string serializedProto;

    bool operator==(const OpaqueAttribute&) const = default;
};

using AttributeValue =
    std::variant<float, int64_t, std::string, TensorPtr, std::vector<float>, std::vector<int64_t>,
                 std::vector<std::string>, std::vector<TensorPtr>, OpaqueAttribute>;

struct Attribute {
    std::string name;
    AttributeValue value;
    std::string docString;
};

/// Deep equality (tensors by content).
bool attributeValuesEqual(const AttributeValue& a, const AttributeValue& b);

bool tensorsEqual(const TensorData& a, const TensorData& b);

} // namespace qs::graph
