#include "core/runtime/batching.h"

#include "core/runtime/parallel.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstring>

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

Result<Shape> stackedShape(const std::vector<Tensor>& parts) {
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
    return shape;
}

Result<Tensor> concatBatches(const std::vector<Tensor>& parts) {
    QS_ASSIGN_OR_RETURN(Shape shape, stackedShape(parts));
    Tensor out = Tensor::allocate(parts[0].dtype(), std::move(shape));
    auto* dst = static_cast<std::byte*>(out.mutableRawData());
    for (const Tensor& part : parts) {
        if (part.byteSize() > 0) {
            std::memcpy(dst, part.rawData(), part.byteSize());
        }
        dst += part.byteSize();
    }
    return out;
}

BatchStacker::BatchStacker(int64_t samples)
    : m_samples(samples) {}

void BatchStacker::add(Tensor part, int64_t samples) {
    const bool first = m_parts.empty() && !m_whole.defined();
    if (first && part.rank() > 0 && samples > 0 && part.dim(0) > 0 && part.dim(0) % samples == 0 &&
        m_samples >= samples) {
        m_rowsPerSample = part.dim(0) / samples;
        Shape shape = part.shape();
        shape[0] = m_rowsPerSample * m_samples;
        m_whole = Tensor::allocate(part.dtype(), std::move(shape));
    }
    if (m_whole.defined()) {
        Shape rest = part.shape();
        Shape expect = m_whole.shape();
        const bool fits = part.dtype() == m_whole.dtype() && rest.size() == expect.size() &&
                          part.dim(0) == m_rowsPerSample * samples &&
                          m_rows + part.dim(0) <= expect[0];
        if (fits) {
            rest[0] = expect[0] = 0;
        }
        if (fits && rest == expect) {
            const size_t rowBytes = m_whole.byteSize() / static_cast<size_t>(m_whole.dim(0));
            if (part.byteSize() > 0) {
                std::memcpy(static_cast<std::byte*>(m_whole.mutableRawData()) +
                                static_cast<size_t>(m_rows) * rowBytes,
                            part.rawData(), part.byteSize());
            }
            m_rows += part.dim(0);
            return;
        }
        // Not the first batch's rows per sample or shape: concatBatches decides (and words the
        // error) from the parts.
        m_parts.push_back(sliceBatch(m_whole, 0, m_rows));
        m_whole = Tensor();
    }
    m_parts.push_back(std::move(part));
}

Result<Tensor> BatchStacker::take() {
    if (m_whole.defined()) {
        return m_rows == m_whole.dim(0) ? std::move(m_whole) : sliceBatch(m_whole, 0, m_rows);
    }
    return concatBatches(m_parts);
}

namespace {

/// splitmix64's output function: a well-mixed 64-bit value from any 64-bit input.
uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/// Pairs of normals per block: block b holds elements [2 kPairs b, 2 kPairs (b + 1)), the cosine
/// halves of its pairs first, then the sine halves.
constexpr int64_t kPairs = 512;

/// Block `block` of the stream of `key` into out[0, 2 kPairs).
void normalBlock(uint64_t key, int64_t block, float* out) {
    Eigen::Array<float, kPairs, 1> u1;
    Eigen::Array<float, kPairs, 1> u2;
    for (int64_t j = 0; j < kPairs; ++j) {
        const uint64_t bits = splitmix64(key + static_cast<uint64_t>(block * kPairs + j));
        constexpr float kScale = 1.0F / 16777216.0F; // 2^-24: 24-bit uniforms are exact floats
        u1[j] = static_cast<float>((bits >> 40) + 1) * kScale; // (0, 1]: log stays finite
        u2[j] = static_cast<float>(bits & 0xFFFFFFU) * kScale; // [0, 1)
    }
    constexpr float kTwoPi = 6.283185307179586F;
    const Eigen::Array<float, kPairs, 1> radius = (-2.0F * u1.log()).sqrt();
    const Eigen::Array<float, kPairs, 1> angle = kTwoPi * u2;
    Eigen::Map<Eigen::Array<float, kPairs, 1>> cosines(out);
    Eigen::Map<Eigen::Array<float, kPairs, 1>> sines(out + kPairs);
    cosines = radius * angle.cos();
    sines = radius * angle.sin();
}

} // namespace

Tensor randomNormal(Shape shape, uint64_t seed, int64_t firstElement) {
    Tensor out = Tensor::allocate(graph::DataType::Float, std::move(shape));
    float* data = out.mutableData<float>();
    const int64_t count = out.numElements();
    const uint64_t key = splitmix64(seed);
    constexpr int64_t kBlock = 2 * kPairs;
    const int64_t firstBlock = firstElement / kBlock;
    const int64_t endBlock = (firstElement + count + kBlock - 1) / kBlock;
    parallelFor(endBlock - firstBlock, 16, [&](int64_t first, int64_t last) {
        std::array<float, kBlock> part{};
        for (int64_t b = firstBlock + first; b < firstBlock + last; ++b) {
            const int64_t begin = std::max(b * kBlock, firstElement);
            const int64_t end = std::min((b + 1) * kBlock, firstElement + count);
            if (end - begin == kBlock) {
                normalBlock(key, b, data + (begin - firstElement));
            } else {
                normalBlock(key, b, part.data());
                std::copy(part.begin() + (begin - b * kBlock), part.begin() + (end - b * kBlock),
                          data + (begin - firstElement));
            }
        }
    });
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
