#include "core/hessian/hessian_scores.h"

#include <algorithm>
#include <numeric>

namespace qs::hessian {

std::vector<double> HessianTargetScores::mean() const {
    if (perSample.empty()) {
        return {};
    }
    std::vector<double> out(perSample[0].size(), 0.0);
    for (const std::vector<double>& sample : perSample) {
        for (size_t i = 0; i < out.size() && i < sample.size(); ++i) {
            out[i] += sample[i];
        }
    }
    for (double& v : out) {
        v /= static_cast<double>(perSample.size());
    }
    return out;
}

namespace {

Result<void> checkCompatible(const HessianScores& a, const HessianScores& b, size_t index) {
    const auto mismatch = [&](const std::string& what) {
        return Error(Errc::InvalidArgument,
                     "shard " + std::to_string(index + 1) + " differs from shard 1 in " + what);
    };
    if (a.mode != b.mode) {
        return mismatch("mode");
    }
    if (a.granularity != b.granularity) {
        return mismatch("granularity");
    }
    if (a.iterations != b.iterations) {
        return mismatch("iterations");
    }
    if (a.earlyStop != b.earlyStop || (a.earlyStop && a.tolerance != b.tolerance)) {
        return mismatch("early stop / tolerance");
    }
    if (a.earlyStop && a.batch != b.batch) { // early stop judges a whole batch
        return mismatch("batch (early stop depends on it)");
    }
    if (a.seed != b.seed) {
        return mismatch("seed");
    }
    if (a.outputs != b.outputs) {
        return mismatch("outputs");
    }
    if (a.targets.size() != b.targets.size()) {
        return mismatch("the number of targets");
    }
    for (size_t t = 0; t < a.targets.size(); ++t) {
        const HessianTargetScores& x = a.targets[t];
        const HessianTargetScores& y = b.targets[t];
        if (x.node != y.node || x.tensor != y.tensor || x.shape != y.shape) {
            return mismatch("target " + std::to_string(t + 1) + " ('" + x.node + "' vs '" + y.node +
                            "')");
        }
    }
    return success();
}

} // namespace

namespace {

/// Every (sample index, (shard, row)) of the shards, sorted by index; overlaps are errors.
using SampleOrder = std::vector<std::pair<int64_t, std::pair<size_t, size_t>>>;

Result<SampleOrder> sampleOrder(const std::vector<HessianScores>& shards) {
    SampleOrder order;
    for (size_t s = 0; s < shards.size(); ++s) {
        QS_TRY(checkCompatible(shards[0], shards[s], s));
        for (const HessianTargetScores& target : shards[s].targets) {
            if (target.perSample.size() != shards[s].sampleIndices.size()) {
                return Error(Errc::InvalidArgument,
                             "shard " + std::to_string(s + 1) + ": target '" + target.node +
                                 "' has " + std::to_string(target.perSample.size()) +
                                 " samples, the shard lists " +
                                 std::to_string(shards[s].sampleIndices.size()));
            }
        }
        for (size_t r = 0; r < shards[s].sampleIndices.size(); ++r) {
            order.push_back({shards[s].sampleIndices[r], {s, r}});
        }
    }
    std::sort(order.begin(), order.end());
    for (size_t i = 1; i < order.size(); ++i) {
        if (order[i].first == order[i - 1].first) {
            return Error(Errc::InvalidArgument,
                         "shards " + std::to_string(order[i - 1].second.first + 1) + " and " +
                             std::to_string(order[i].second.first + 1) +
                             " overlap: both hold sample " + std::to_string(order[i].first));
        }
    }
    return order;
}

} // namespace

Result<HessianScores> mergeHessianShards(const std::vector<HessianScores>& shards) {
    if (shards.empty()) {
        return Error(Errc::InvalidArgument, "no shards to merge");
    }
    QS_ASSIGN_OR_RETURN(const SampleOrder order, sampleOrder(shards));
    HessianScores merged = shards[0];
    merged.sampleIndices.clear();
    for (HessianTargetScores& target : merged.targets) {
        target.perSample.clear();
    }
    for (const auto& [index, where] : order) {
        merged.sampleIndices.push_back(index);
        for (size_t t = 0; t < merged.targets.size(); ++t) {
            merged.targets[t].perSample.push_back(
                shards[where.first].targets[t].perSample[where.second]);
        }
    }
    for (const HessianScores& shard : shards) {
        for (const std::string& note : shard.notes) {
            if (std::find(merged.notes.begin(), merged.notes.end(), note) == merged.notes.end()) {
                merged.notes.push_back(note);
            }
        }
    }
    return merged;
}

} // namespace qs::hessian
