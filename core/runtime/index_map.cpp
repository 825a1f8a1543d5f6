#include "core/runtime/index_map.h"

#include <cstring>

namespace qs::runtime {

Tensor gatherByIndex(const Tensor& src, Shape outShape, const std::vector<int64_t>& index,
                     const Tensor* fill) {
    Tensor out = Tensor::allocate(src.dtype(), std::move(outShape));
    const size_t size = runtimeElementSize(src.dtype());
    const auto* from = static_cast<const std::byte*>(src.rawData());
    auto* to = static_cast<std::byte*>(out.mutableRawData());
    std::byte zero[16] = {};
    const std::byte* fillBytes =
        fill != nullptr && fill->defined() ? static_cast<const std::byte*>(fill->rawData()) : zero;
    for (size_t i = 0; i < index.size(); ++i) {
        const std::byte* source =
            index[i] >= 0 ? from + static_cast<size_t>(index[i]) * size : fillBytes;
        std::memcpy(to + i * size, source, size);
    }
    return out;
}

Tensor scatterAddByIndex(const Tensor& grad, const Shape& srcShape,
                         const std::vector<int64_t>& index) {
    Tensor out = Tensor::zeros(graph::DataType::Float, srcShape);
    const float* g = grad.data<float>();
    float* dst = out.mutableData<float>();
    for (size_t i = 0; i < index.size(); ++i) {
        if (index[i] >= 0) {
            dst[index[i]] += g[i];
        }
    }
    return out;
}

} // namespace qs::runtime
