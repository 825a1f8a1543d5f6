#include "core/runtime/batching.h"

#include <cstring>
#include <random>

namespace qs::runtime {

Tensor sliceBatch(const Tensor& tensor, int64_t begin, int64_t end) {
    Shape shape = tensor.shape();
    const int64_t rowElems = tensor.numElements() / std::max<int64_t>(1, shape[0]);
    shape[0] = end - begin;
    Tensor out = Tensor::allocate(tensor.dtype(), shape);
    const size_t elem = runtimeElementSize(tensor.dtype());
    if (out.byteSize() > 0) {
        std::memcpy(out.mutableRawData(),
                    static_cast<const std::byte*>(tensor.rawData()) +
                        static_cast<size_t>(begin * rowElems) * elem,
                    out.byteSize());
    }
    return out;
}

Result<Tensor> concatBatches(const std::vector<Tensor>& parts) {
    QS_CHECK(!parts.empty(), "nothing to concatenate");
    Shape shape = parts[0].shape();
    if (shape.empty()) {
        return Error(Errc::InvalidArgument, "cannot batch a scalar output");
    }
    shape[0] = 0;
    for (const Tensor& part : parts) {
        Shape rest = part.shape();
        if (rest.size() != shape.size() || part.dtype() != parts[0].dtype()) {
            return Error(Errc::InvalidModel, "batch outputs differ in rank or type");
        }
        shape[0] += rest[0];
        rest[0] = 0;
        Shape expect = shape;
        expect[0] = 0;
        if (rest != expect) {
            return Error(Errc::InvalidModel, "batch outputs differ beyond axis 0");
        }
    }
    Tensor out = Tensor::allocate(parts[0].dtype(), shape);
    auto* dst = static_cast<std::byte*>(out.mutableRawData());
    for (const Tensor& part : parts) {
        std::memcpy(dst, part.rawData(), part.byteSize());
        dst += part.byteSize();
    }
    return out;
}

Tensor randomNormal(Shape shape, uint64_t seed) {
    Tensor out = Tensor::allocate(graph::DataType::Float, std::move(shape));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0F, 1.0F);
    float* data = out.mutableData<float>();
    for (int64_t i = 0; i < out.numElements(); ++i) {
        data[i] = dist(rng);
    }
    return out;
}

Result<Shape> concreteInputShape(const graph::Value& input, int64_t batch) {
    if (!input.shape.rankKnown) {
        return Error(Errc::InvalidArgument,
                     "input '" + input.name + "' has an unknown rank; give --input-shape");
    }
    Shape shape;
    for (size_t d = 0; d < input.shape.rank(); ++d) {
        const graph::Dim& dim = input.shape.dims[d];
        shape.push_back(dim.isKnown() ? dim.size : (d == 0 ? batch : 1));
    }
    return shape;
}

} // namespace qs::runtime
