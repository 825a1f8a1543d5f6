#include "core/pruning/channel_importance.h"

#include "core/pruning/axis_split.h"

#include <algorithm>
#include <numeric>

namespace qs::pruning {

std::string_view importanceName(ImportanceMetric metric) {
    switch (metric) {
    case ImportanceMetric::Lfh:
        return "lfh";
    case ImportanceMetric::L2:
        return "l2";
    case ImportanceMetric::Random:
        return "random";
    }
    return "lfh";
}

Result<ImportanceMetric> parseImportance(std::string_view text) {
    if (text == "lfh") {
        return ImportanceMetric::Lfh;
    }
    if (text == "l2") {
        return ImportanceMetric::L2;
    }
    if (text == "random") {
        return ImportanceMetric::Random;
    }
    return Error(Errc::InvalidArgument,
                 "unknown importance '" + std::string(text) + "' (lfh, l2 or random)");
}

int64_t EntryImportance::channelsInGroups(int64_t g) const {
    return std::min(channels(), g * simd);
}

std::vector<double> EntryImportance::unrolledScores() const {
    std::vector<double> scores(order.size(), 0.0);
    for (size_t i = 0; i < order.size(); ++i) {
        scores[static_cast<size_t>(order[i])] = groupScores[i / static_cast<size_t>(simd)];
    }
    return scores;
}

std::vector<double> squaredNormsAlong(const graph::TensorData& weight, int64_t axis) {
    const auto [outer, size, inner] = splitAt(weight.dims(), axis);
    std::vector<double> norms(static_cast<size_t>(size), 0.0);
    const std::span<const float> w = weight.as<float>();
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < size; ++c) {
            const size_t base = static_cast<size_t>((o * size + c) * inner);
            double sum = 0.0;
            for (int64_t i = 0; i < inner; ++i) {
                const double v = w[base + static_cast<size_t>(i)];
                sum += v * v;
            }
            norms[static_cast<size_t>(c)] += sum;
        }
    }
    return norms;
}

Result<EntryImportance> entryImportance(const graph::Graph& graph, const PruningSection& section,
                                        ImportanceMetric metric, const std::vector<double>& hessian,
                                        int64_t simd, std::mt19937_64& rng) {
    const ChannelParameter& kernel = section.parameters.front();
    const graph::TensorData& weight = *graph.value(kernel.value).initializer;
    const int64_t channels = section.channels;
    const std::vector<double> norms = squaredNormsAlong(weight, kernel.axis);
    const double perChannel =
        static_cast<double>(weight.numElements()) / static_cast<double>(channels); // n_c
    if (metric == ImportanceMetric::Lfh && static_cast<int64_t>(hessian.size()) != channels) {
        return Error(Errc::InvalidArgument, "Hessian scores of '" + graph.node(section.entry).name +
                                                "' have " + std::to_string(hessian.size()) +
                                                " channels, the node has " +
                                                std::to_string(channels));
    }
    EntryImportance out;
    out.simd = std::max<int64_t>(1, simd);
    out.channelScores.resize(static_cast<size_t>(channels));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
        switch (metric) {
        case ImportanceMetric::Lfh:
            out.channelScores[c] = hessian[c] * norms[c] / perChannel;
            break;
        case ImportanceMetric::L2:
            out.channelScores[c] = norms[c];
            break;
        case ImportanceMetric::Random:
            out.channelScores[c] = uniform(rng);
            break;
        }
    }
    out.order.resize(static_cast<size_t>(channels));
    std::iota(out.order.begin(), out.order.end(), int64_t{0});
    std::stable_sort(out.order.begin(), out.order.end(), [&](int64_t a, int64_t b) {
        return out.channelScores[static_cast<size_t>(a)] >
               out.channelScores[static_cast<size_t>(b)];
    });
    for (int64_t begin = 0; begin < channels; begin += out.simd) {
        const int64_t end = std::min(channels, begin + out.simd);
        double sumH = 0.0;
        double sumNorm = 0.0;
        double sumScore = 0.0;
        for (int64_t i = begin; i < end; ++i) {
            const auto c = static_cast<size_t>(out.order[static_cast<size_t>(i)]);
            sumH += metric == ImportanceMetric::Lfh ? hessian[c] : 0.0;
            sumNorm += norms[c];
            sumScore += out.channelScores[c];
        }
        const auto count = static_cast<double>(end - begin);
        out.groupScores.push_back(metric == ImportanceMetric::Lfh
                                      ? sumH * sumNorm / (count * perChannel)
                                      : sumScore / count);
    }
    return out;
}

} // namespace qs::pruning
