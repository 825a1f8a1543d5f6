// Conversions between ONNX protobuf messages and Graph types, shared by import and export.
// Internal to core/onnx/: the only place outside it that sees protobuf types is nowhere.
#pragma once

#include "core/graph/attribute.h"
#include "core/graph/graph.h"
#include "core/onnx/model_io.h"
#include "core/support/result.h"

#include <onnx/onnx_pb.h>

namespace qs::onnx::detail {

/// Takes the tensor's data out of `proto` (raw bytes are moved, not copied). External data must
/// have been loaded into raw_data before.
Result<graph::TensorPtr> takeTensor(::onnx::TensorProto& proto);

/// Writes a tensor into `proto` (name set by the caller).
void fillTensorProto(const graph::TensorData& tensor, ::onnx::TensorProto& proto);

/// Converts an attribute; graph-valued, sparse and type attributes stay serialized.
Result<graph::Attribute> takeAttribute(::onnx::AttributeProto& proto);

void fillAttributeProto(const graph::Attribute& attribute, ::onnx::AttributeProto& proto);

/// dtype and shape of a ValueInfoProto's tensor type; false when it is not a tensor type.
bool readTensorType(const ::onnx::TypeProto& type, graph::DataType& dtype,
                    graph::TensorShape& shape);

void fillTensorType(graph::DataType dtype, const graph::TensorShape& shape,
                    ::onnx::TypeProto& type);

} // namespace qs::onnx::detail
