#include "tests/support/bad_models.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <random>

namespace qs::testing {
namespace fs = std::filesystem;

namespace {

void writeBytes(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

::onnx::ModelProto baseModel() {
    ::onnx::ModelProto model;
    model.set_ir_version(7);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("g");
    auto addIo = [](::onnx::ValueInfoProto* info, const std::string& name) {
        info->set_name(name);
        auto* type = info->mutable_type()->mutable_tensor_type();
        type->set_elem_type(::onnx::TensorProto::FLOAT);
        type->mutable_shape()->add_dim()->set_dim_value(1);
        type->mutable_shape()->add_dim()->set_dim_value(4);
    };
    addIo(graph->add_input(), "x");
    addIo(graph->add_output(), "y");
    return model;
}

void addNode(::onnx::GraphProto* graph, const std::string& op, const std::string& name,
             std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* node = graph->add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (const auto& in : inputs) {
        node->add_input(in);
    }
    for (const auto& out : outputs) {
        node->add_output(out);
    }
}

::onnx::TensorProto* addFloatInitializer(::onnx::GraphProto* graph, const std::string& name,
                                         int count) {
    auto* init = graph->add_initializer();
    init->set_name(name);
    init->set_data_type(::onnx::TensorProto::FLOAT);
    init->add_dims(count);
    return init;
}

void setExternal(::onnx::TensorProto* tensor, const std::string& location, int64_t offset,
                 int64_t length) {
    tensor->set_data_location(::onnx::TensorProto::EXTERNAL);
    auto add = [tensor](const std::string& key, const std::string& value) {
        auto* entry = tensor->add_external_data();
        entry->set_key(key);
        entry->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
}

/// Relu(x) + w, with `w` an initializer the caller fills in.
::onnx::ModelProto reluAddModel(::onnx::TensorProto** weight) {
    ::onnx::ModelProto model = baseModel();
    auto* graph = model.mutable_graph();
    *weight = addFloatInitializer(graph, "w", 4);
    addNode(graph, "Relu", "relu", {"x"}, {"r"});
    addNode(graph, "Add", "add", {"r", "w"}, {"y"});
    return model;
}

std::string externalModel(const std::string& location, int64_t offset, int64_t length) {
    ::onnx::TensorProto* weight = nullptr;
    ::onnx::ModelProto model = reluAddModel(&weight);
    setExternal(weight, location, offset, length);
    return model.SerializeAsString();
}

} // namespace

std::string validModelBytes() {
    ::onnx::ModelProto model = baseModel();
    auto* graph = model.mutable_graph();
    addNode(graph, "Relu", "relu", {"x"}, {"r"});
    auto* constant = graph->add_node();
    constant->set_op_type("Constant");
    constant->set_name("bias_const");
    constant->add_output("bias");
    auto* attr = constant->add_attribute();
    attr->set_name("value");
    attr->set_type(::onnx::AttributeProto::TENSOR);
    auto* tensor = attr->mutable_t();
    tensor->set_data_type(::onnx::TensorProto::FLOAT);
    tensor->add_dims(4);
    for (int i = 0; i < 4; ++i) {
        tensor->add_float_data(0.5F * static_cast<float>(i));
    }
    addNode(graph, "Add", "add", {"r", "bias"}, {"y"});
    return model.SerializeAsString();
}

void writeExternalDataModel(const fs::path& dir, const std::string& fileName) {
    std::string data(16, '\0');
    const float values[4] = {1.0F, -2.0F, 3.0F, -4.0F};
    std::memcpy(data.data(), values, sizeof values);
    writeBytes(dir / "weights.bin", data);
    writeBytes(dir / fileName, externalModel("weights.bin", 0, 16));
}

std::vector<BadModel> writeBadModels(const fs::path& dir) {
    fs::create_directories(dir);
    std::vector<BadModel> cases;
    auto add = [&](const std::string& name, const std::string& bytes, const std::string& expect) {
        writeBytes(dir / name, bytes);
        cases.push_back({name, expect});
    };

    add("empty.onnx", "", "empty");
    std::mt19937 rng(7);
    std::string noise(4096, '\0');
    for (char& c : noise) {
        c = static_cast<char>(rng() & 0xFF);
    }
    add("random.onnx", noise, "not");

    ::onnx::TensorProto* weight = nullptr;
    ::onnx::ModelProto big = reluAddModel(&weight);
    weight->clear_dims();
    weight->add_dims(4096);
    weight->set_raw_data(std::string(4096 * 4, '\x01'));
    const std::string full = big.SerializeAsString();
    add("truncated.onnx", full.substr(0, full.size() * 6 / 10), "truncated");

    ::onnx::ModelProto dangling = baseModel();
    addNode(dangling.mutable_graph(), "Add", "add", {"x", "ghost"}, {"y"});
    add("dangling_input.onnx", dangling.SerializeAsString(), "'ghost'");

    ::onnx::ModelProto cycle = baseModel();
    addNode(cycle.mutable_graph(), "Add", "a", {"x", "b_out"}, {"y"});
    addNode(cycle.mutable_graph(), "Relu", "b", {"y"}, {"b_out"});
    add("cycle.onnx", cycle.SerializeAsString(), "cycle");

    ::onnx::ModelProto huge = baseModel();
    addNode(huge.mutable_graph(), "Relu", "relu", {"x"}, {"y"});
    huge.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(int64_t{1} << 60);
    add("huge_dim.onnx", huge.SerializeAsString(), "impossible dimension");

    ::onnx::ModelProto hugeInit = baseModel();
    auto* hugeTensor = addFloatInitializer(hugeInit.mutable_graph(), "w", 1);
    hugeTensor->set_dims(0, int64_t{1} << 45);
    addNode(hugeInit.mutable_graph(), "Add", "add", {"x", "w"}, {"y"});
    add("huge_initializer.onnx", hugeInit.SerializeAsString(), "impossible dimension");

    ::onnx::ModelProto shortInit = baseModel();
    auto* shortTensor = addFloatInitializer(shortInit.mutable_graph(), "w", 4);
    shortTensor->set_raw_data(std::string(3, '\0'));
    addNode(shortInit.mutable_graph(), "Add", "add", {"x", "w"}, {"y"});
    add("short_initializer.onnx", shortInit.SerializeAsString(), "holds 3 bytes");

    ::onnx::ModelProto noGraph;
    noGraph.set_ir_version(7);
    add("no_graph.onnx", noGraph.SerializeAsString(), "no graph");

    ::onnx::ModelProto newOpset = baseModel();
    newOpset.mutable_opset_import(0)->set_version(99);
    addNode(newOpset.mutable_graph(), "Relu", "relu", {"x"}, {"y"});
    add("opset99.onnx", newOpset.SerializeAsString(), "opset 99 is not supported");

    writeBytes(dir / "weights.bin", std::string(16, '\0'));
    add("external_escape.onnx", externalModel("../outside.bin", 0, 16), "escapes");
    add("external_absolute.onnx", externalModel("/etc/hostname", 0, 4), "absolute");
    add("external_past_end.onnx", externalModel("weights.bin", 8, 64), "past the end");
    std::error_code ec;
    fs::remove(dir / "link.bin", ec);
    fs::create_symlink("/etc/hostname", dir / "link.bin", ec);
    add("external_symlink.onnx", externalModel("link.bin", 0, 4), "outside the model's folder");

    fs::create_directories(dir / "folder.onnx");
    cases.push_back({"folder.onnx", "directory"});
    cases.push_back({"missing.onnx", "no such file"});
    return cases;
}

} // namespace qs::testing
