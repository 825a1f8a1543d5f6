#include "core/runtime/tensor.h"

#include "core/runtime/type_dispatch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unistd.h>

namespace qs::runtime {

using graph::DataType;

int64_t shapeNumElements(const Shape& shape) {
    int64_t count = 1;
    for (const int64_t dim : shape) {
        count *= dim;
    }
    return count;
}

std::string shapeToString(const Shape& shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

size_t runtimeElementSize(DataType dtype) {
    switch (dtype) {
    case DataType::Bool:
        return 1;
    default:
        return static_cast<size_t>(graph::dataTypeBits(dtype) / 8);
    }
}

namespace {
// 64-byte alignment suits AVX-512 loads; Eigen maps do not require it but run faster with it.
constexpr size_t kAlignment = 64;

// Freed tensor buffers are kept for reuse: a model allocates the same sizes on every run, and
// reusing a buffer avoids the page faults of fresh mmap'd memory, which otherwise cost as much as a
// cheap kernel (a Relu) itself. A request takes the smallest free buffer that holds it and wastes
// at most a third of it (best fit), so one cached buffer serves layers of nearby sizes: keyed by
// exact size, the cache grew to hold every distinct size a forward allocates at once, far above
// the forward's peak of live buffers (efficientnet_b0 and mobilenet_v2 at batch 8 held more
// resident memory than ONNX Runtime).
class BufferPool {
public:
    struct Buffer {
        void* ptr = nullptr;
        size_t bytes = 0; ///< the buffer's capacity, at least what was asked for
    };

    Buffer take(size_t bytes) {
        {
            const std::lock_guard lock(m_mutex);
            auto it = m_free.lower_bound(bytes);
            if (it != m_free.end() && it->first - bytes <= it->first / 3) {
                const Buffer found{it->second, it->first};
                m_free.erase(it);
                m_cachedBytes -= found.bytes;
                return found;
            }
        }
        return {std::aligned_alloc(kAlignment, bytes), bytes};
    }

    void give(void* ptr, size_t bytes) {
        {
            const std::lock_guard lock(m_mutex);
            if (m_cachedBytes + bytes <= m_maxCachedBytes) {
                // Before its equals: the most recently freed buffer is taken first (its lines
                // may still be in cache).
                m_free.emplace_hint(m_free.lower_bound(bytes), bytes, ptr);
                m_cachedBytes += bytes;
                return;
            }
        }
        std::free(ptr);
    }

private:
    /// An eighth of the physical memory, within [512 MiB, 4 GiB]: a forward at batch 8 of a
    /// 640 x 640 detector frees more than 512 MiB per run, and buffers freed past the cap came
    /// back as fresh pages on the next run (twice the forward's time in page faults).
    static size_t maxCachedBytes() {
        const auto pages = sysconf(_SC_PHYS_PAGES);
        const auto pageSize = sysconf(_SC_PAGE_SIZE);
        const size_t physical = pages > 0 && pageSize > 0
                                    ? static_cast<size_t>(pages) * static_cast<size_t>(pageSize)
                                    : 0;
        return std::clamp(physical / 8, size_t{512} << 20, size_t{4096} << 20);
    }

    const size_t m_maxCachedBytes = maxCachedBytes();
    std::mutex m_mutex;
    std::multimap<size_t, void*> m_free;
    size_t m_cachedBytes = 0;
};

BufferPool& bufferPool() {
    // Never destroyed: tensors in other static objects may be released after main returns.
    static auto* pool = new BufferPool();
    return *pool;
}
} // namespace

Tensor Tensor::allocate(DataType dtype, Shape shape) {
    Tensor out;
    out.m_dtype = dtype;
    out.m_shape = std::move(shape);
    out.m_count = shapeNumElements(out.m_shape);
    const size_t bytes = out.byteSize();
    const size_t rounded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment;
    const size_t size = rounded == 0 ? kAlignment : rounded;
    const BufferPool::Buffer buffer = bufferPool().take(size);
    QS_CHECK(buffer.ptr != nullptr, "out of memory allocating a tensor");
    out.m_holder = std::shared_ptr<void>(
        buffer.ptr, [capacity = buffer.bytes](void* p) { bufferPool().give(p, capacity); });
    out.m_data = static_cast<std::byte*>(buffer.ptr);
    out.m_writable = true;
    return out;
}

Tensor Tensor::zeros(DataType dtype, Shape shape) {
    Tensor out = allocate(dtype, std::move(shape));
    std::memset(out.m_data, 0, out.byteSize());
    return out;
}

Tensor Tensor::withoutData(DataType dtype, Shape shape) {
    Tensor out;
    out.m_dtype = dtype;
    out.m_shape = std::move(shape);
    out.m_count = shapeNumElements(out.m_shape);
    return out;
}

Tensor Tensor::wrap(graph::TensorPtr data) {
    if (data->dtype() == DataType::Int4 || data->dtype() == DataType::UInt4) {
        // ONNX packs two 4-bit elements per byte, low nibble first; kernels want one per byte.
        const bool isSigned = data->dtype() == DataType::Int4;
        Tensor out = allocate(isSigned ? DataType::Int8 : DataType::UInt8, data->dims());
        const auto* packed = reinterpret_cast<const uint8_t*>(data->data());
        for (int64_t i = 0; i < out.numElements(); ++i) {
            uint8_t nibble = (packed[i / 2] >> ((i % 2) * 4)) & 0x0F;
            int8_t value = isSigned && nibble >= 8 ? static_cast<int8_t>(nibble - 16)
                                                   : static_cast<int8_t>(nibble);
            reinterpret_cast<int8_t*>(out.m_data)[i] = value;
        }
        return out;
    }
    Tensor out;
    out.m_dtype = data->dtype();
    out.m_shape = data->dims();
    out.m_count = shapeNumElements(out.m_shape);
    out.m_data = const_cast<std::byte*>(reinterpret_cast<const std::byte*>(data->data()));
    out.m_holder = std::move(data);
    out.m_writable = false;
    return out;
}

int64_t Tensor::dim(int64_t axis) const {
    const auto rankValue = static_cast<int64_t>(m_shape.size());
    if (axis < 0) {
        axis += rankValue;
    }
    QS_ASSERT(axis >= 0 && axis < rankValue, "dim axis out of range");
    return m_shape[static_cast<size_t>(axis)];
}

size_t Tensor::byteSize() const {
    return static_cast<size_t>(numElements()) * runtimeElementSize(m_dtype);
}

Tensor Tensor::reshaped(Shape shape) const {
    QS_ASSERT(shapeNumElements(shape) == numElements(), "reshape changes the element count");
    Tensor out = *this;
    out.m_shape = std::move(shape);
    out.m_count = shapeNumElements(out.m_shape);
    return out;
}

Tensor Tensor::clone() const {
    Tensor out = allocate(m_dtype, m_shape);
    if (byteSize() > 0) {
        std::memcpy(out.m_data, m_data, byteSize());
    }
    return out;
}

double Tensor::elementAsDouble(int64_t index) const {
    double result = 0.0;
    dispatchAllTypes(m_dtype, [&]<typename T>() {
        result = static_cast<double>(reinterpret_cast<const T*>(m_data)[index]);
    });
    return result;
}

graph::TensorPtr Tensor::toTensorData() const {
    std::string bytes(byteSize(), '\0');
    if (!bytes.empty()) {
        std::memcpy(bytes.data(), m_data, bytes.size());
    }
    return std::make_shared<const graph::TensorData>(m_dtype, m_shape, std::move(bytes));
}

Tensor castTensor(const Tensor& input, DataType dtype) {
    Tensor out = Tensor::allocate(dtype, input.shape());
    const int64_t count = input.numElements();
    dispatchAllTypes(input.dtype(), [&]<typename From>() {
        const auto* src = static_cast<const From*>(input.rawData());
        dispatchAllTypes(dtype, [&]<typename To>() {
            To* dst = out.mutableData<To>();
            for (int64_t i = 0; i < count; ++i) {
                dst[i] = castValue<To>(src[i]);
            }
        });
    });
    return out;
}

std::vector<int64_t> toInt64Vector(const Tensor& tensor) {
    std::vector<int64_t> out(static_cast<size_t>(tensor.numElements()));
    // Exact for int64 (Slice uses INT64_MAX as "to the end"), so no detour through double.
    dispatchAllTypes(tensor.dtype(), [&]<typename T>() {
        const auto* src = static_cast<const T*>(tensor.rawData());
        for (size_t i = 0; i < out.size(); ++i) {
            out[i] = castValue<int64_t>(src[i]);
        }
    });
    return out;
}

} // namespace qs::runtime
