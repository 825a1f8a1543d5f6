// The op registry: one accessor per op file, listed in a file CMake generates from the contents
// of core/runtime/ops/. Calling each accessor here references every op's object file, so the
// linker keeps them all.

#include "core/runtime/op.h"

#include <algorithm>

namespace qs::runtime {

namespace registered {
#define QS_OP(stem) const OpDef& stem();
#include "qs_runtime_op_list.inc"
#undef QS_OP
} // namespace registered

namespace {
bool isDefaultDomain(std::string_view domain) {
    return domain.empty() || domain == "ai.onnx";
}
} // namespace

const std::vector<const OpDef*>& allOps() {
    static const std::vector<const OpDef*> ops = [] {
        std::vector<const OpDef*> list = {
#define QS_OP(stem) &registered::stem(),
#include "qs_runtime_op_list.inc"
#undef QS_OP
        };
        std::sort(list.begin(), list.end(), [](const OpDef* a, const OpDef* b) {
            return std::pair(a->domain, a->opType) < std::pair(b->domain, b->opType);
        });
        return list;
    }();
    return ops;
}

const OpDef* findOp(std::string_view opType, std::string_view domain) {
    for (const OpDef* def : allOps()) {
        if (def->opType == opType && isDefaultDomain(def->domain) == isDefaultDomain(domain) &&
            (isDefaultDomain(domain) || def->domain == domain)) {
            return def;
        }
    }
    return nullptr;
}

Error OpContext::error(Errc code, const std::string& message) const {
    return Error(code, message).context(node.opType + " node '" + node.name + "'");
}

} // namespace qs::runtime
