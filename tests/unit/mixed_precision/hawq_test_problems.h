// Hand-built HAWQ problems: layers with given MACs and allowed bits, each fed by its own activation
// quantizer (or grouped), so every measure can be computed by hand.
#pragma once

#include "core/mixed_precision/hawq_problem.h"

#include <vector>

namespace qs::mixed_precision::testing {

/// `layers` layers with MACs `macs[i]` (default 1), all allowing `layerBits`; layer i is fed by
/// activation i allowing `activationBits`; groups[i] names each layer's adjacency group (default
/// one group per layer). The group of a layer also holds its activation.
inline HawqProblem handProblem(size_t layers, std::vector<int> layerBits,
                               std::vector<int> activationBits, std::vector<int64_t> macs = {},
                               std::vector<size_t> groups = {}) {
    HawqProblem problem;
    size_t groupCount = 0;
    for (size_t i = 0; i < layers; ++i) {
        const size_t g = groups.empty() ? i : groups[i];
        groupCount = std::max(groupCount, g + 1);
    }
    problem.groups.resize(groupCount);
    for (size_t i = 0; i < layers; ++i) {
        const size_t g = groups.empty() ? i : groups[i];
        WeightLayer layer;
        layer.weightQp = static_cast<int>(100 + i);
        layer.node = "conv" + std::to_string(i);
        layer.weight = "w" + std::to_string(i);
        layer.numel = 10;
        layer.macs = macs.empty() ? 1 : macs[i];
        layer.bitsAllowed = layerBits;
        layer.activation = i;
        layer.group = g;
        problem.layers.push_back(layer);
        ActivationQuantizer activation;
        activation.qp = static_cast<int>(i);
        activation.bitsAllowed = activationBits;
        activation.group = g;
        problem.activations.push_back(activation);
        problem.groups[g].layers.push_back(i);
        problem.groups[g].activations.push_back(i);
    }
    problem.bits = layerBits;
    return problem;
}

} // namespace qs::mixed_precision::testing
