// ONNX export: Graph -> ModelProto. Nodes are written in the graph's stable topological order;
// every value with a known type gets a value_info, so a re-import needs no shape inference to
// see the same graph. Files are written atomically.

#include "core/onnx/model_io.h"
#include "core/onnx/proto_convert.h"
#include "core/support/atomic_file.h"

#include <onnx/checker.h>

#include <algorithm>
#include <exception>
#include <unordered_set>

namespace qs::onnx {
using graph::Graph;
using graph::NodeId;
using graph::ValueId;

namespace {

void fillValueInfo(const graph::Value& value, ::onnx::ValueInfoProto& info) {
    info.set_name(value.name);
    if (!value.docString.empty()) {
        info.set_doc_string(value.docString);
    }
    if (value.dtype != graph::DataType::Undefined) {
        detail::fillTensorType(value.dtype, value.shape, *info.mutable_type());
    } else if (!value.opaqueType.empty()) {
        info.mutable_type()->ParseFromString(value.opaqueType);
    }
}

void fillNode(const Graph& graph, const graph::Node& node, ::onnx::NodeProto& proto) {
    proto.set_name(node.name);
    proto.set_op_type(node.opType);
    if (!node.domain.empty()) {
        proto.set_domain(node.domain);
    }
    if (!node.docString.empty()) {
        proto.set_doc_string(node.docString);
    }
    for (const ValueId input : node.inputs) {
        proto.add_input(input.valid() ? graph.value(input).name : std::string());
    }
    for (const ValueId output : node.outputs) {
        proto.add_output(output.valid() ? graph.value(output).name : std::string());
    }
    for (const graph::Attribute& attr : node.attributes) {
        detail::fillAttributeProto(attr, *proto.add_attribute());
    }
}

Result<::onnx::ModelProto> toProto(const Graph& graph) {
    ::onnx::ModelProto model;
    const graph::ModelMetadata& meta = graph.metadata();
    model.set_ir_version(meta.irVersion);
    for (const graph::OpsetImport& opset : meta.opsetImports) {
        auto* import = model.add_opset_import();
        import->set_domain(opset.domain);
        import->set_version(opset.version);
    }
    model.set_producer_name(meta.producerName);
    model.set_producer_version(meta.producerVersion);
    model.set_domain(meta.domain);
    model.set_model_version(meta.modelVersion);
    model.set_doc_string(meta.docString);
    for (const auto& [key, value] : meta.metadataProps) {
        auto* prop = model.add_metadata_props();
        prop->set_key(key);
        prop->set_value(value);
    }
    for (const std::string& function : meta.serializedFunctions) {
        model.add_functions()->ParseFromString(function);
    }

    ::onnx::GraphProto& proto = *model.mutable_graph();
    proto.set_name(meta.graphName.empty() ? "graph" : meta.graphName);
    proto.set_doc_string(meta.graphDocString);
    QS_ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.topologicalOrder());
    std::unordered_set<uint32_t> listed;
    for (const ValueId id : graph.inputs()) {
        fillValueInfo(graph.value(id), *proto.add_input());
        listed.insert(id.index());
    }
    for (const ValueId id : graph.outputs()) {
        fillValueInfo(graph.value(id), *proto.add_output());
        listed.insert(id.index());
    }
    for (const ValueId id : graph.initializers()) {
        const graph::Value& value = graph.value(id);
        auto* tensor = proto.add_initializer();
        tensor->set_name(value.name);
        if (!value.docString.empty()) {
            tensor->set_doc_string(value.docString);
        }
        detail::fillTensorProto(*value.initializer, *tensor);
        listed.insert(id.index());
    }
    for (const NodeId id : order) {
        fillNode(graph, graph.node(id), *proto.add_node());
    }
    for (const NodeId id : order) {
        for (const ValueId out : graph.node(id).outputs) {
            if (out.valid() && !listed.contains(out.index()) &&
                (graph.value(out).dtype != graph::DataType::Undefined ||
                 !graph.value(out).opaqueType.empty())) {
                fillValueInfo(graph.value(out), *proto.add_value_info());
            }
        }
    }
    return model;
}

} // namespace

Result<std::string> serializeModel(const Graph& graph) {
    QS_ASSIGN_OR_RETURN(const ::onnx::ModelProto model, toProto(graph));
    if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
        return Error(Errc::Unsupported, "the model is over 2 GB; protobuf cannot hold it");
    }
    std::string bytes;
    if (!model.SerializeToString(&bytes)) {
        return Error(Errc::Internal, "cannot serialize the model");
    }
    return bytes;
}

Result<void> exportModel(const Graph& graph, const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(const std::string bytes, serializeModel(graph));
    return writeFileAtomically(path, bytes);
}

Result<void> checkModel(const Graph& graph) {
    QS_ASSIGN_OR_RETURN(::onnx::ModelProto model, toProto(graph));
    // The checker of our ONNX headers knows IR versions up to its own; newer models are checked
    // against the rules it knows.
    model.set_ir_version(std::min<int64_t>(model.ir_version(), ::onnx::IR_VERSION));
    try {
        ::onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        return Error(Errc::InvalidModel, std::string("onnx::checker: ") + e.what());
    }
    return success();
}

bool checkerCanJudge(const Graph& graph) {
    if (graph.opsetVersion() > kCheckerMaxOpset) {
        return false;
    }
    for (const graph::ValueId id : graph.valueIds()) {
        const graph::DataType dtype = graph.value(id).dtype;
        if (dtype == graph::DataType::Int4 || dtype == graph::DataType::UInt4) {
            return false;
        }
    }
    return true;
}

} // namespace qs::onnx
