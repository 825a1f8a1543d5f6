#include "core/pruning/greedy_mask.h"

#include <queue>

#include <algorithm>

namespace qs::pruning {

namespace {

std::string bytesText(int64_t bytes) {
    return std::to_string(bytes) + " bytes";
}

} // namespace

std::vector<uint8_t> channelMask(const EntryImportance& importance, int64_t kept) {
    std::vector<uint8_t> mask(importance.order.size(), 0);
    for (int64_t i = 0; i < kept && i < importance.channels(); ++i) {
        mask[static_cast<size_t>(importance.order[static_cast<size_t>(i)])] = 1;
    }
    return mask;
}

Result<GreedyMasks> greedyMasks(MemoryCalculator& memory,
                                const std::vector<EntryImportance>& importance,
                                const std::vector<EntryConstraint>& constraints,
                                int64_t targetBytes) {
    const size_t sections = importance.size();
    if (!constraints.empty() && constraints.size() != sections) {
        return Error(Errc::Internal, "one constraint per section expected");
    }
    std::vector<int64_t> kept(sections);
    std::vector<int64_t> groupsKept(sections, 1);
    std::vector<bool> free(sections, true);
    for (size_t s = 0; s < sections; ++s) {
        const EntryImportance& entry = importance[s];
        const EntryConstraint constraint = constraints.empty() ? EntryConstraint{} : constraints[s];
        switch (constraint.kind) {
        case EntryConstraint::Kind::Free:
            kept[s] = entry.channelsInGroups(1);
            break;
        case EntryConstraint::Kind::Lock:
            kept[s] = entry.channels();
            free[s] = false;
            break;
        case EntryConstraint::Kind::Keep:
            if (constraint.kept < 1 || constraint.kept > entry.channels()) {
                return Error(Errc::InvalidArgument,
                             "kept channel count " + std::to_string(constraint.kept) +
                                 " is outside 1.." + std::to_string(entry.channels()))
                    .context("section " + std::to_string(s));
            }
            kept[s] = constraint.kept;
            free[s] = false;
            break;
        }
    }
    const bool constrained = std::find(free.begin(), free.end(), false) != free.end();
    memory.reset(kept);
    GreedyMasks out;
    out.minimumParameters = memory.current();
    const int64_t target = targetBytes / kFp32BytesPerParameter; // params, rounded down
    if (out.minimumParameters * kFp32BytesPerParameter > targetBytes) {
        return Error(Errc::Usage, "insufficient memory for the target: " + bytesText(targetBytes) +
                                      " is below the minimum of " +
                                      bytesText(out.minimumParameters * kFp32BytesPerParameter) +
                                      " (one SIMD group per entry" +
                                      (constrained ? std::string(" and the locks and kept counts")
                                                   : std::string()) +
                                      ")");
    }
    // Max-heap of (group score of the next pruned group, -section): ties go to the earlier entry.
    using Candidate = std::pair<double, int64_t>;
    std::priority_queue<Candidate> heap;
    const auto push = [&](size_t s) {
        if (free[s] && groupsKept[s] < importance[s].groups()) {
            heap.emplace(importance[s].groupScores[static_cast<size_t>(groupsKept[s])],
                         -static_cast<int64_t>(s));
        }
    };
    for (size_t s = 0; s < sections; ++s) {
        push(s);
    }
    int last = -1;
    int64_t lastKept = 0;
    while (memory.current() < target && !heap.empty()) {
        const auto s = static_cast<size_t>(-heap.top().second);
        heap.pop();
        last = static_cast<int>(s);
        lastKept = memory.kept()[s];
        ++groupsKept[s];
        memory.setKept(last, importance[s].channelsInGroups(groupsKept[s]));
        ++out.steps;
        push(s);
    }
    if (memory.current() > target && last >= 0) {
        memory.setKept(last, lastKept);
        --out.steps;
    }
    out.kept = memory.kept();
    out.parameters = memory.current();
    return out;
}

} // namespace qs::pruning
