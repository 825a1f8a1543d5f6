#include "core/pass/pass.h"

#include <chrono>

namespace qs::pass {

const std::vector<Pass>& allPasses() {
    static const std::vector<Pass> passes = {
        {"remove-identity", "remove Identity and inference Dropout nodes", removeIdentity},
        {"fold-batch-norm", "fold BatchNormalization into the preceding Conv, Gemm or MatMul + Add",
         foldBatchNorm},
        {"fold-constants", "evaluate nodes whose inputs are all constant", foldConstants},
    };
    return passes;
}

Result<bool> runPipeline(graph::Graph& graph, std::string_view pipeline, PassContext& context) {
    bool changed = false;
    size_t start = 0;
    while (start <= pipeline.size()) {
        const size_t comma = std::min(pipeline.find(',', start), pipeline.size());
        const std::string_view name = pipeline.substr(start, comma - start);
        start = comma + 1;
        if (name.empty()) {
            continue;
        }
        const Pass* found = nullptr;
        for (const Pass& pass : allPasses()) {
            if (pass.name == name) {
                found = &pass;
            }
        }
        if (found == nullptr) {
            return Error(Errc::InvalidArgument, "unknown pass '" + std::string(name) + "'");
        }
        const auto passStart = std::chrono::steady_clock::now();
        QS_ASSIGN_OR_RETURN(const bool passChanged,
                            found->run(graph, context).context("pass " + std::string(name)));
        context.timings.push_back(
            {std::string(name),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - passStart).count(),
             passChanged});
        QS_TRY(graph::verify(graph).context("after pass " + std::string(name)));
        changed = changed || passChanged;
    }
    return changed;
}

} // namespace qs::pass
