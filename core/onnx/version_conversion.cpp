// ONNX's version converter behind our graph: serialize, convert, re-import.

#include "core/onnx/version_conversion.h"

#include "core/onnx/model_io.h"

#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include <exception>
#include <string>

namespace qs::onnx {

Result<graph::Graph> convertOpsetWithOnnx(const graph::Graph& graph, int64_t target) {
    const int64_t from = graph.opsetVersion();
    if (target <= from || target > kConverterMaxOpset) {
        return Error(Errc::InvalidArgument,
                     "ONNX's version converter raises opset " + std::to_string(from) + " only to " +
                         std::to_string(from + 1) + ".." + std::to_string(kConverterMaxOpset) +
                         ", not " + std::to_string(target));
    }
    QS_ASSIGN_OR_RETURN(const std::string bytes, serializeModel(graph));
    ::onnx::ModelProto in;
    if (!in.ParseFromString(bytes)) {
        return Error(Errc::Internal, "cannot re-read the serialized model");
    }
    ::onnx::ModelProto out;
    try {
        out = ::onnx::version_conversion::ConvertVersion(in, static_cast<int>(target));
    } catch (const std::exception& e) {
        return Error(Errc::Unsupported, "ONNX's version converter cannot raise opset " +
                                            std::to_string(from) + " to " + std::to_string(target) +
                                            ": " + e.what());
    }
    std::string converted;
    if (!out.SerializeToString(&converted)) {
        return Error(Errc::Internal, "cannot serialize the converted model");
    }
    ImportOptions options;
    return importModelFromBytes(converted, options, {})
        .context("the model ONNX's version converter wrote");
}

} // namespace qs::onnx
