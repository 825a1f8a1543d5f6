// ONNX import: ModelProto -> Graph. Parses straight from the file (no 64 MB limit, no second
// buffer), resolves external data, runs ONNX's shape inference, turns Constant nodes into
// initializers, and moves every weight's bytes out of the protobuf instead of copying them.

#include "core/graph/metatype.h"
#include "core/onnx/external_data.h"
#include "core/onnx/model_io.h"
#include "core/onnx/proto_convert.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace qs::onnx {
namespace fs = std::filesystem;
using graph::Graph;
using graph::NodeId;
using graph::ValueId;

namespace {

constexpr int64_t kMaxProtoBytes = std::numeric_limits<int32_t>::max();

Result<void> parseFromStream(google::protobuf::io::ZeroCopyInputStream& stream,
                             ::onnx::ModelProto& model) {
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));
    coded.SetRecursionLimit(256);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        return Error(Errc::InvalidModel,
                     "not a valid ONNX model (the protobuf is truncated or corrupt)");
    }
    return success();
}

Result<::onnx::ModelProto> parseFile(const fs::path& path) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        return Error(Errc::Io, "no such file");
    }
    if (fs::is_directory(status)) {
        return Error(Errc::Io, "is a directory, not a model file");
    }
    if (!fs::is_regular_file(status)) {
        return Error(Errc::Io, "is not a regular file");
    }
    const auto size = static_cast<int64_t>(fs::file_size(path, ec));
    if (ec) {
        return Error(Errc::Io, "cannot read the file size");
    }
    if (size == 0) {
        return Error(Errc::InvalidModel, "the file is empty");
    }
    if (size > kMaxProtoBytes) {
        return Error(Errc::Unsupported, "the file is over 2 GB; protobuf cannot hold it (store "
                                        "the weights as external data)");
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error(Errc::Io, std::string("cannot open: ") + std::strerror(errno));
    }
    ::onnx::ModelProto model;
    Result<void> parsed = [&]() -> Result<void> {
        google::protobuf::io::FileInputStream stream(fd, 1 << 20);
        QS_TRY(parseFromStream(stream, model));
        if (stream.GetErrno() != 0) {
            return Error(Errc::Io, std::string("cannot read: ") + std::strerror(stream.GetErrno()));
        }
        return success();
    }();
    ::close(fd);
    QS_TRY(std::move(parsed));
    return model;
}

Result<void> checkModelHeader(const ::onnx::ModelProto& model, bool allowOldOpsets) {
    if (!model.has_graph()) {
        return Error(Errc::InvalidModel, "not an ONNX model: it has no graph");
    }
    if (model.ir_version() <= 0) {
        return Error(Errc::InvalidModel, "not an ONNX model: ir_version is missing");
    }
    int64_t opset = -1;
    for (const auto& import : model.opset_import()) {
        if (import.domain().empty() || import.domain() == "ai.onnx") {
            opset = import.version();
        }
    }
    if (opset < 0) {
        // Legal when every op comes from another domain (e.g. ai.onnx.preview.training).
        for (const auto& node : model.graph().node()) {
            if (node.domain().empty() || node.domain() == "ai.onnx") {
                return Error(Errc::InvalidModel, "node '" + node.name() + "' (" + node.op_type() +
                                                     ") uses the default ONNX domain, which the "
                                                     "model does not import");
            }
        }
        return success();
    }
    if ((opset < kMinOpset && !allowOldOpsets) || opset > kMaxOpset) {
        return Error(Errc::Unsupported,
                     "opset " + std::to_string(opset) + " is not supported (supported: " +
                         std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
    }
    return success();
}

Result<void> checkDeclaredShape(const ::onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) {
        return success();
    }
    int64_t count = 1;
    for (const auto& dim : info.type().tensor_type().shape().dim()) {
        if (!dim.has_dim_value()) {
            continue;
        }
        const int64_t size = dim.dim_value();
        if (size < 0 || size > kMaxDimSize || __builtin_mul_overflow(count, size, &count) ||
            count > kMaxElements) {
            return Error(Errc::InvalidModel, "value '" + info.name() +
                                                 "' declares an impossible dimension " +
                                                 std::to_string(size));
        }
    }
    return success();
}

Result<void> checkDeclaredShapes(const ::onnx::GraphProto& graph) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
        for (const auto& info : *list) {
            QS_TRY(checkDeclaredShape(info));
        }
    }
    return success();
}

Result<void> applyInputShapes(::onnx::GraphProto& graph,
                              const std::vector<InputShapeOverride>& overrides) {
    for (const InputShapeOverride& item : overrides) {
        ::onnx::ValueInfoProto* target = nullptr;
        for (auto& input : *graph.mutable_input()) {
            if (input.name() == item.inputName) {
                target = &input;
            }
        }
        if (target == nullptr) {
            return Error(Errc::Usage, "--input-shape names '" + item.inputName +
                                          "', which is not a graph input");
        }
        auto* shape = target->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (const int64_t dim : item.dims) {
            auto* protoDim = shape->add_dim();
            if (dim >= 0) {
                protoDim->set_dim_value(dim);
            }
        }
    }
    return success();
}

/// Names read inside a subgraph that the subgraph does not define (its outer-scope inputs).
void collectOuterScopeNames(const ::onnx::GraphProto& subgraph,
                            std::unordered_set<std::string>& names) {
    std::unordered_set<std::string> defined;
    for (const auto& input : subgraph.input()) {
        defined.insert(input.name());
    }
    for (const auto& init : subgraph.initializer()) {
        defined.insert(init.name());
    }
    for (const auto& node : subgraph.node()) {
        for (const auto& output : node.output()) {
            defined.insert(output);
        }
    }
    auto use = [&](const std::string& name) {
        if (!name.empty() && !defined.contains(name)) {
            names.insert(name);
        }
    };
    for (const auto& node : subgraph.node()) {
        std::for_each(node.input().begin(), node.input().end(), use);
        for (const auto& attr : node.attribute()) {
            std::unordered_set<std::string> inner;
            if (attr.has_g()) {
                collectOuterScopeNames(attr.g(), inner);
            }
            for (const auto& g : attr.graphs()) {
                collectOuterScopeNames(g, inner);
            }
            std::for_each(inner.begin(), inner.end(), use);
        }
    }
    std::for_each(subgraph.output().begin(), subgraph.output().end(),
                  [&](const auto& out) { use(out.name()); });
}

/// Builds the Graph from a validated, shape-inferred ModelProto, moving tensor bytes out of it.
class GraphBuilder {
public:
    explicit GraphBuilder(::onnx::ModelProto& model)
        : m_model(model)
        , m_proto(*model.mutable_graph()) {}

    Result<Graph> build() {
        copyMetadata();
        collectTypes();
        QS_TRY(addInitializers());
        QS_TRY(addGraphInputs());
        QS_TRY(addNodes());
        QS_TRY(addGraphOutputs());
        return std::move(m_graph);
    }

private:
    void copyMetadata() {
        graph::ModelMetadata& meta = m_graph.metadata();
        meta.irVersion = m_model.ir_version();
        for (const auto& import : m_model.opset_import()) {
            meta.opsetImports.push_back({import.domain(), import.version()});
        }
        meta.producerName = m_model.producer_name();
        meta.producerVersion = m_model.producer_version();
        meta.domain = m_model.domain();
        meta.modelVersion = m_model.model_version();
        meta.docString = m_model.doc_string();
        meta.graphName = m_proto.name();
        meta.graphDocString = m_proto.doc_string();
        for (const auto& prop : m_model.metadata_props()) {
            meta.metadataProps.emplace_back(prop.key(), prop.value());
        }
        for (const auto& function : m_model.functions()) {
            meta.serializedFunctions.push_back(function.SerializeAsString());
        }
    }

    void collectTypes() {
        for (const auto* list : {&m_proto.input(), &m_proto.output(), &m_proto.value_info()}) {
            for (const auto& info : *list) {
                TypeInfo typeInfo;
                typeInfo.docString = info.doc_string();
                if (!detail::readTensorType(info.type(), typeInfo.dtype, typeInfo.shape) &&
                    info.has_type()) {
                    typeInfo.opaqueType = info.type().SerializeAsString();
                }
                m_types[info.name()] = std::move(typeInfo);
            }
        }
    }

    Result<ValueId> newValue(const std::string& name) {
        if (name.empty()) {
            return Error(Errc::InvalidModel, "a value has an empty name");
        }
        if (m_graph.findValue(name)) {
            return Error(Errc::InvalidModel, "value '" + name + "' is defined more than once");
        }
        const auto it = m_types.find(name);
        if (it == m_types.end()) {
            return m_graph.addValue(name, graph::DataType::Undefined);
        }
        const ValueId id = m_graph.addValue(name, it->second.dtype, it->second.shape);
        m_graph.value(id).docString = it->second.docString;
        m_graph.value(id).opaqueType = it->second.opaqueType;
        return id;
    }

    Result<void> addInitializers() {
        for (auto& init : *m_proto.mutable_initializer()) {
            QS_ASSIGN_OR_RETURN(graph::TensorPtr tensor, detail::takeTensor(init));
            if (init.name().empty()) {
                return Error(Errc::InvalidModel, "an initializer has no name");
            }
            if (m_graph.findValue(init.name())) {
                return Error(Errc::InvalidModel,
                             "initializer '" + init.name() + "' is defined more than once");
            }
            const ValueId id = m_graph.addInitializer(init.name(), std::move(tensor));
            m_graph.value(id).docString = init.doc_string();
        }
        return success();
    }

    Result<void> addGraphInputs() {
        for (const auto& input : m_proto.input()) {
            if (const auto existing = m_graph.findValue(input.name())) {
                m_graph.addInput(*existing); // an initializer listed as input (IR < 4 style)
                continue;
            }
            QS_ASSIGN_OR_RETURN(const ValueId id, newValue(input.name()));
            m_graph.addInput(id);
        }
        return success();
    }

    /// A Constant node whose value is a dense tensor or a scalar/list attribute.
    static bool isFoldableConstant(const ::onnx::NodeProto& node) {
        if (node.op_type() != "Constant" ||
            !(node.domain().empty() || node.domain() == "ai.onnx") || node.output_size() != 1 ||
            node.attribute_size() != 1) {
            return false;
        }
        const std::string& attr = node.attribute(0).name();
        return attr == "value" || attr == "value_float" || attr == "value_floats" ||
               attr == "value_int" || attr == "value_ints";
    }

    static Result<graph::TensorPtr> constantTensor(::onnx::NodeProto& node) {
        auto& attr = *node.mutable_attribute(0);
        const std::string& name = attr.name();
        using graph::DataType;
        using graph::TensorData;
        if (name == "value") {
            return detail::takeTensor(*attr.mutable_t());
        }
        if (name == "value_float") {
            const float v = attr.f();
            return TensorData::fromValues<float>(DataType::Float, {}, std::span(&v, 1));
        }
        if (name == "value_int") {
            const int64_t v = attr.i();
            return TensorData::fromValues<int64_t>(DataType::Int64, {}, std::span(&v, 1));
        }
        if (name == "value_floats") {
            const std::vector<float> v(attr.floats().begin(), attr.floats().end());
            return TensorData::fromValues<float>(DataType::Float, {static_cast<int64_t>(v.size())},
                                                 v);
        }
        const std::vector<int64_t> v(attr.ints().begin(), attr.ints().end());
        return TensorData::fromValues<int64_t>(DataType::Int64, {static_cast<int64_t>(v.size())},
                                               v);
    }

    Result<void> addNodes() {
        auto& nodes = *m_proto.mutable_node();
        // Every output gets its value first, so files with unsorted nodes still link up.
        std::vector<std::vector<ValueId>> outputs(static_cast<size_t>(nodes.size()));
        for (int nodeIdx = 0; nodeIdx < nodes.size(); ++nodeIdx) {
            QS_ASSIGN_OR_RETURN(outputs[static_cast<size_t>(nodeIdx)],
                                declareOutputs(nodes[nodeIdx], nodeIdx));
        }
        // Then the nodes, in file order (unnamed nodes are named as NNCF names them).
        for (int nodeIdx = 0; nodeIdx < nodes.size(); ++nodeIdx) {
            auto& node = nodes[nodeIdx];
            if (isFoldableConstant(node)) {
                continue;
            }
            const std::string name = node.name().empty()
                                         ? node.op_type() + "_nncf_" + std::to_string(nodeIdx)
                                         : node.name();
            QS_TRY(addNode(node, name, std::move(outputs[static_cast<size_t>(nodeIdx)]))
                       .context("node '" + name + "' (" + node.op_type() + ")"));
        }
        return success();
    }

    /// Creates the output values of one node; a foldable Constant becomes an initializer.
    Result<std::vector<ValueId>> declareOutputs(::onnx::NodeProto& node, int nodeIdx) {
        const std::string where = "node '" + node.name() + "' (" + node.op_type() + ")";
        std::vector<ValueId> outputs;
        if (isFoldableConstant(node)) {
            QS_ASSIGN_OR_RETURN(graph::TensorPtr tensor, constantTensor(node).context(where));
            if (m_graph.findValue(node.output(0))) {
                return Error(Errc::InvalidModel,
                             "value '" + node.output(0) + "' is defined more than once")
                    .context(where);
            }
            const ValueId id = m_graph.addInitializer(node.output(0), std::move(tensor));
            m_graph.value(id).constantNodeName =
                node.name().empty() ? "Constant_nncf_" + std::to_string(nodeIdx) : node.name();
            return outputs;
        }
        for (const auto& output : node.output()) {
            if (output.empty()) {
                outputs.emplace_back(); // an omitted optional output keeps its port
                continue;
            }
            QS_ASSIGN_OR_RETURN(const ValueId id, newValue(output).context(where));
            outputs.push_back(id);
        }
        return outputs;
    }

    Result<ValueId> lookup(const std::string& name) const {
        const auto id = m_graph.findValue(name);
        if (!id) {
            return Error(Errc::InvalidModel, "consumes value '" + name +
                                                 "', which no node, input or initializer produces");
        }
        return *id;
    }

    Result<void> addNode(::onnx::NodeProto& node, const std::string& name,
                         std::vector<ValueId> outputs) {
        std::vector<ValueId> inputs;
        for (const auto& input : node.input()) {
            if (input.empty()) {
                inputs.emplace_back(); // an omitted optional input keeps its port
                continue;
            }
            QS_ASSIGN_OR_RETURN(const ValueId id, lookup(input));
            inputs.push_back(id);
        }
        std::vector<graph::Attribute> attributes;
        std::unordered_set<std::string> outerNames;
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_g()) {
                collectOuterScopeNames(attr.g(), outerNames);
            }
            for (const auto& g : attr.graphs()) {
                collectOuterScopeNames(g, outerNames);
            }
            QS_ASSIGN_OR_RETURN(graph::Attribute converted, detail::takeAttribute(attr));
            attributes.push_back(std::move(converted));
        }
        const NodeId id = m_graph.addNode(name, node.op_type(), std::move(inputs),
                                          std::move(outputs), std::move(attributes), node.domain());
        graph::Node& added = m_graph.node(id);
        added.docString = node.doc_string();
        for (const std::string& outer : outerNames) {
            if (const auto value = m_graph.findValue(outer)) {
                added.implicitInputs.push_back(*value);
            }
        }
        std::sort(added.implicitInputs.begin(), added.implicitInputs.end());
        return success();
    }

    Result<void> addGraphOutputs() {
        for (const auto& output : m_proto.output()) {
            QS_ASSIGN_OR_RETURN(
                const ValueId id,
                lookup(output.name()).context("graph output '" + output.name() + "'"));
            m_graph.addOutput(id);
        }
        return success();
    }

    struct TypeInfo {
        graph::DataType dtype = graph::DataType::Undefined;
        graph::TensorShape shape;
        std::string docString;
        std::string opaqueType;
    };

    ::onnx::ModelProto& m_model;
    ::onnx::GraphProto& m_proto;
    Graph m_graph;
    std::unordered_map<std::string, TypeInfo> m_types;
};

void inferShapes(::onnx::ModelProto& model, ImportNotes* notes) {
    try {
        // Data propagation lets shapes flow through Shape -> Gather -> Concat -> Reshape chains.
        const ::onnx::ShapeInferenceOptions options(false, 0, true);
        ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
        if (notes != nullptr) {
            notes->warnings.push_back(std::string("shape inference stopped early: ") + e.what());
        }
    }
}

void noteOpaqueNodes(const Graph& graph, ImportNotes& notes) {
    for (const NodeId id : graph.nodeIds()) {
        const graph::Node& n = graph.node(id);
        if (!n.isDefaultDomain() || !graph::isRegisteredOpType(n.opType) || n.hasSubgraph()) {
            notes.warnings.push_back("node '" + n.name + "' (" +
                                     (n.domain.empty() ? "" : n.domain + ".") + n.opType +
                                     ") is kept as an opaque node");
        }
    }
}

Result<void> loadAllExternalData(::onnx::GraphProto& graphProto, const fs::path& baseDir) {
    for (auto& init : *graphProto.mutable_initializer()) {
        if (detail::usesExternalData(init)) {
            QS_TRY(detail::loadExternalData(init, baseDir));
        }
    }
    return success();
}

Result<Graph> importProto(::onnx::ModelProto& model, const ImportOptions& options,
                          const fs::path& baseDir, ImportNotes* notes) {
    QS_TRY(checkModelHeader(model, options.allowOldOpsets));
    ::onnx::GraphProto& graphProto = *model.mutable_graph();
    QS_TRY(checkDeclaredShapes(graphProto));
    QS_TRY(loadAllExternalData(graphProto, baseDir));
    QS_TRY(applyInputShapes(graphProto, options.inputShapes));
    if (options.inferShapes) {
        inferShapes(model, notes);
        QS_TRY(checkDeclaredShapes(graphProto).context("after shape inference"));
    }
    QS_ASSIGN_OR_RETURN(Graph graph, GraphBuilder(model).build());
    QS_TRY(graph::verify(graph));
    if (notes != nullptr) {
        noteOpaqueNodes(graph, *notes);
    }
    return graph;
}

} // namespace

Result<graph::TensorPtr> readTensorFile(const fs::path& path) {
    const std::string where = "file '" + path.string() + "'";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error(Errc::Io, std::string("cannot open: ") + std::strerror(errno)).context(where);
    }
    ::onnx::TensorProto proto;
    bool parsed = false;
    {
        google::protobuf::io::FileInputStream stream(fd, 1 << 20);
        google::protobuf::io::CodedInputStream coded(&stream);
        coded.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));
        parsed = proto.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
    }
    ::close(fd);
    if (!parsed) {
        return Error(Errc::InvalidModel, "not a valid TensorProto").context(where);
    }
    return detail::takeTensor(proto).context(where);
}

Result<InputShapeOverride> parseInputShapeOverride(std::string_view text) {
    const auto eq = text.rfind('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 >= text.size()) {
        return Error(Errc::Usage, "expects NAME=D1,D2,... (e.g. input=1,3,224,224), got '" +
                                      std::string(text) + "'");
    }
    InputShapeOverride out;
    out.inputName = std::string(text.substr(0, eq));
    std::string_view dims = text.substr(eq + 1);
    while (!dims.empty()) {
        const auto comma = dims.find(',');
        const std::string_view item = dims.substr(0, comma);
        int64_t dim = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), dim);
        if (ec != std::errc() || end != item.data() + item.size() || dim < -1 ||
            dim > kMaxDimSize) {
            return Error(Errc::Usage, "'" + std::string(item) +
                                          "' is not a dimension (a size, or -1 for dynamic)");
        }
        out.dims.push_back(dim);
        if (comma == std::string_view::npos) {
            break;
        }
        dims.remove_prefix(comma + 1);
    }
    return out;
}

Result<Graph> importModelFromBytes(std::string_view bytes, const ImportOptions& options,
                                   const fs::path& baseDir, ImportNotes* notes) {
    if (bytes.empty()) {
        return Error(Errc::InvalidModel, "the model is empty");
    }
    if (bytes.size() > static_cast<size_t>(kMaxProtoBytes)) {
        return Error(Errc::Unsupported, "the model is over 2 GB");
    }
    ::onnx::ModelProto model;
    try {
        google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
        QS_TRY(parseFromStream(stream, model));
        return importProto(model, options, baseDir, notes);
    } catch (const std::exception& e) {
        return Error(Errc::InvalidModel, std::string("cannot import: ") + e.what());
    }
}

Result<Graph> importModel(const fs::path& path, const ImportOptions& options, ImportNotes* notes) {
    const std::string where = "file '" + path.string() + "'";
    try {
        QS_ASSIGN_OR_RETURN(::onnx::ModelProto model, parseFile(path).context(where));
        const fs::path baseDir = path.has_parent_path() ? path.parent_path() : fs::path(".");
        return importProto(model, options, baseDir, notes).context(where);
    } catch (const std::exception& e) {
        return Error(Errc::InvalidModel, std::string("cannot import: ") + e.what()).context(where);
    }
}

} // namespace qs::onnx
