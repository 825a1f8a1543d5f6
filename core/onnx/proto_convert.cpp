#include "core/onnx/proto_convert.h"

#include <cstring>
#include <limits>

namespace qs::onnx::detail {

using graph::DataType;

namespace {

template <typename Dst, typename Src>
std::string packAs(const google::protobuf::RepeatedField<Src>& field) {
    std::string bytes(static_cast<size_t>(field.size()) * sizeof(Dst), '\0');
    auto* out = reinterpret_cast<Dst*>(bytes.data());
    for (int i = 0; i < field.size(); ++i) {
        out[i] = static_cast<Dst>(field.Get(i));
    }
    return bytes;
}

/// int4/uint4 values come one per int32 in int32_data; pack two per byte, low nibble first.
std::string packNibbles(const google::protobuf::RepeatedField<int32_t>& field, int64_t count) {
    std::string bytes(static_cast<size_t>((count + 1) / 2), '\0');
    for (int64_t i = 0; i < count && i < field.size(); ++i) {
        const auto nibble = static_cast<uint8_t>(field.Get(static_cast<int>(i)) & 0x0F);
        const auto shifted = static_cast<uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
        bytes[static_cast<size_t>(i / 2)] =
            static_cast<char>(static_cast<uint8_t>(bytes[static_cast<size_t>(i / 2)]) | shifted);
    }
    return bytes;
}

Result<std::string> typedFieldBytes(const ::onnx::TensorProto& proto, DataType dtype,
                                    int64_t count) {
    switch (dtype) {
    case DataType::Float:
        return packAs<float>(proto.float_data());
    case DataType::Double:
        return packAs<double>(proto.double_data());
    case DataType::Int64:
        return packAs<int64_t>(proto.int64_data());
    case DataType::UInt32:
        return packAs<uint32_t>(proto.uint64_data());
    case DataType::UInt64:
        return packAs<uint64_t>(proto.uint64_data());
    case DataType::Int32:
        return packAs<int32_t>(proto.int32_data());
    case DataType::Int16:
        return packAs<int16_t>(proto.int32_data());
    case DataType::UInt16:
    case DataType::Float16:
    case DataType::BFloat16:
        return packAs<uint16_t>(proto.int32_data());
    case DataType::Int8:
        return packAs<int8_t>(proto.int32_data());
    case DataType::UInt8:
    case DataType::Bool:
    case DataType::Float8E4M3FN:
    case DataType::Float8E4M3FNUZ:
    case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ:
        return packAs<uint8_t>(proto.int32_data());
    case DataType::Int4:
    case DataType::UInt4:
        return packNibbles(proto.int32_data(), count);
    default:
        return Error(Errc::Unsupported, "tensor type '" + std::string(graph::dataTypeName(dtype)) +
                                            "' is not supported");
    }
}

} // namespace

Result<graph::TensorPtr> takeTensor(::onnx::TensorProto& proto) {
    const std::string where = "tensor '" + proto.name() + "'";
    if (!graph::isKnownDataType(proto.data_type())) {
        return Error(Errc::InvalidModel, "unknown data type " + std::to_string(proto.data_type()))
            .context(where);
    }
    const auto dtype = static_cast<DataType>(proto.data_type());
    std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
    int64_t count = 1;
    for (const int64_t dim : dims) {
        if (dim < 0 || dim > kMaxDimSize || __builtin_mul_overflow(count, dim, &count) ||
            count > kMaxElements) {
            return Error(Errc::InvalidModel, "impossible dimension " + std::to_string(dim))
                .context(where);
        }
    }
    if (dtype == DataType::String) {
        // Strings keep their serialized form; nothing numeric reads them.
        std::string serialized = proto.SerializeAsString();
        return std::make_shared<const graph::TensorData>(dtype, std::move(dims),
                                                         std::move(serialized));
    }
    std::string bytes;
    if (proto.has_raw_data()) {
        bytes = std::move(*proto.mutable_raw_data());
        proto.clear_raw_data();
    } else {
        QS_ASSIGN_OR_RETURN(bytes, typedFieldBytes(proto, dtype, count).context(where));
    }
    auto tensor =
        std::make_shared<const graph::TensorData>(dtype, std::move(dims), std::move(bytes));
    if (tensor->bytes().size() != tensor->expectedByteSize()) {
        return Error(Errc::InvalidModel, "holds " + std::to_string(tensor->bytes().size()) +
                                             " bytes but its type and shape need " +
                                             std::to_string(tensor->expectedByteSize()))
            .context(where);
    }
    return tensor;
}

void fillTensorProto(const graph::TensorData& tensor, ::onnx::TensorProto& proto) {
    if (tensor.dtype() == DataType::String) {
        const std::string name = proto.name();
        proto.ParseFromString(tensor.bytes());
        proto.set_name(name);
        return;
    }
    proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
    for (const int64_t dim : tensor.dims()) {
        proto.add_dims(dim);
    }
    proto.set_raw_data(tensor.bytes());
}

Result<graph::Attribute> takeAttribute(::onnx::AttributeProto& proto) {
    using AP = ::onnx::AttributeProto;
    graph::Attribute attr;
    attr.name = proto.name();
    attr.docString = proto.doc_string();
    switch (proto.type()) {
    case AP::FLOAT:
        attr.value = proto.f();
        break;
    case AP::INT:
        attr.value = static_cast<int64_t>(proto.i());
        break;
    case AP::STRING:
        attr.value = proto.s();
        break;
    case AP::TENSOR: {
        QS_ASSIGN_OR_RETURN(graph::TensorPtr tensor, takeTensor(*proto.mutable_t()));
        attr.value = std::move(tensor);
        break;
    }
    case AP::FLOATS:
        attr.value = std::vector<float>(proto.floats().begin(), proto.floats().end());
        break;
    case AP::INTS:
        attr.value = std::vector<int64_t>(proto.ints().begin(), proto.ints().end());
        break;
    case AP::STRINGS:
        attr.value = std::vector<std::string>(proto.strings().begin(), proto.strings().end());
        break;
    case AP::TENSORS: {
        std::vector<graph::TensorPtr> tensors;
        for (auto& tensorProto : *proto.mutable_tensors()) {
            QS_ASSIGN_OR_RETURN(graph::TensorPtr tensor, takeTensor(tensorProto));
            tensors.push_back(std::move(tensor));
        }
        attr.value = std::move(tensors);
        break;
    }
    case AP::UNDEFINED:
        return Error(Errc::InvalidModel, "attribute '" + proto.name() + "' has no type");
    default:
        attr.value = graph::OpaqueAttribute{proto.SerializeAsString()};
        break;
    }
    return attr;
}

void fillAttributeProto(const graph::Attribute& attribute, ::onnx::AttributeProto& proto) {
    using AP = ::onnx::AttributeProto;
    if (const auto* opaque = std::get_if<graph::OpaqueAttribute>(&attribute.value)) {
        proto.ParseFromString(opaque->serializedProto);
        return;
    }
    proto.set_name(attribute.name);
    if (!attribute.docString.empty()) {
        proto.set_doc_string(attribute.docString);
    }
    std::visit(
        [&proto](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, float>) {
                proto.set_type(AP::FLOAT);
                proto.set_f(value);
            } else if constexpr (std::is_same_v<T, int64_t>) {
                proto.set_type(AP::INT);
                proto.set_i(value);
            } else if constexpr (std::is_same_v<T, std::string>) {
                proto.set_type(AP::STRING);
                proto.set_s(value);
            } else if constexpr (std::is_same_v<T, graph::TensorPtr>) {
                proto.set_type(AP::TENSOR);
                fillTensorProto(*value, *proto.mutable_t());
            } else if constexpr (std::is_same_v<T, std::vector<float>>) {
                proto.set_type(AP::FLOATS);
                proto.mutable_floats()->Add(value.begin(), value.end());
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                proto.set_type(AP::INTS);
                proto.mutable_ints()->Add(value.begin(), value.end());
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                proto.set_type(AP::STRINGS);
                for (const std::string& s : value) {
                    proto.add_strings(s);
                }
            } else if constexpr (std::is_same_v<T, std::vector<graph::TensorPtr>>) {
                proto.set_type(AP::TENSORS);
                for (const graph::TensorPtr& tensor : value) {
                    fillTensorProto(*tensor, *proto.add_tensors());
                }
            }
        },
        attribute.value);
}

bool readTensorType(const ::onnx::TypeProto& type, graph::DataType& dtype,
                    graph::TensorShape& shape) {
    if (!type.has_tensor_type()) {
        return false;
    }
    const auto& tensorType = type.tensor_type();
    dtype = graph::isKnownDataType(tensorType.elem_type())
                ? static_cast<DataType>(tensorType.elem_type())
                : DataType::Undefined;
    shape = {};
    if (!tensorType.has_shape()) {
        return true;
    }
    shape.rankKnown = true;
    for (const auto& dim : tensorType.shape().dim()) {
        if (dim.has_dim_value()) {
            shape.dims.push_back(graph::Dim::known(dim.dim_value()));
        } else {
            shape.dims.push_back(graph::Dim::symbolic(dim.dim_param()));
        }
    }
    return true;
}

void fillTensorType(graph::DataType dtype, const graph::TensorShape& shape,
                    ::onnx::TypeProto& type) {
    auto* tensorType = type.mutable_tensor_type();
    tensorType->set_elem_type(static_cast<int32_t>(dtype));
    if (!shape.rankKnown) {
        return;
    }
    auto* protoShape = tensorType->mutable_shape();
    for (const graph::Dim& dim : shape.dims) {
        auto* protoDim = protoShape->add_dim();
        if (dim.isKnown()) {
            protoDim->set_dim_value(dim.size);
        } else if (!dim.symbol.empty()) {
            protoDim->set_dim_param(dim.symbol);
        }
    }
}

} // namespace qs::onnx::detail
