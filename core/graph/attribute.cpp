#include "core/graph/attribute.h"

namespace qs::graph {

bool tensorsEqual(const TensorData& a, const TensorData& b) {
    return a.dtype() == b.dtype() && a.dims() == b.dims() && a.bytes() == b.bytes();
}

namespace {
bool tensorPtrsEqual(const TensorPtr& a, const TensorPtr& b) {
    if (!a || !b) {
        return a == b;
    }
    return tensorsEqual(*a, *b);
}
} // namespace

bool attributeValuesEqual(const AttributeValue& a, const AttributeValue& b) {
    if (a.index() != b.index()) {
        return false;
    }
    if (const auto* ta = std::get_if<TensorPtr>(&a)) {
        return tensorPtrsEqual(*ta, std::get<TensorPtr>(b));
    }
    if (const auto* la = std::get_if<std::vector<TensorPtr>>(&a)) {
        const auto& lb = std::get<std::vector<TensorPtr>>(b);
        if (la->size() != lb.size()) {
            return false;
        }
        for (size_t i = 0; i < la->size(); ++i) {
            if (!tensorPtrsEqual((*la)[i], lb[i])) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

} // namespace qs::graph
