// Normalisation over groups of contiguous elements, shared by LayerNormalization (groups = the
// trailing dims from `axis`, scale/bias per position in the group) and InstanceNormalization
// (groups = the spatial plane of one (n, c), scale/bias per channel):
//   y = (x - mean) / sqrt(var + eps) * scale + bias, var the biased (population) variance.
// The VJP is the standard one: with xhat = (x - mean) r, g = dy * scale,
//   dx = r (g - mean(g) - xhat mean(g xhat)), dscale = sum dy xhat, dbias = sum dy.
#pragma once

#include "core/runtime/op_util.h"

#include <cmath>
#include <functional>

namespace qs::runtime {

struct NormLayout {
    int64_t groups = 0;
    int64_t groupSize = 0;
    /// Index into scale/bias for element `i` of group `g`.
    std::function<int64_t(int64_t g, int64_t i)> paramIndex;
};

/// y, plus per-group mean and inverse standard deviation.
inline void normalizeForward(const NormLayout& l, const float* x, const float* scale,
                             const float* bias, float eps, float* y, float* meanOut,
                             float* invStdOut) {
    for (int64_t g = 0; g < l.groups; ++g) {
        const float* xg = x + g * l.groupSize;
        double sum = 0.0;
        for (int64_t i = 0; i < l.groupSize; ++i) {
            sum += xg[i];
        }
        const double mean = sum / static_cast<double>(l.groupSize);
        double sq = 0.0;
        for (int64_t i = 0; i < l.groupSize; ++i) {
            sq += (xg[i] - mean) * (xg[i] - mean);
        }
        const double invStd = 1.0 / std::sqrt(sq / static_cast<double>(l.groupSize) + eps);
        for (int64_t i = 0; i < l.groupSize; ++i) {
            const int64_t p = l.paramIndex(g, i);
            const double xhat = (xg[i] - mean) * invStd;
            y[g * l.groupSize + i] =
                static_cast<float>(xhat * scale[p] + (bias != nullptr ? bias[p] : 0.0F));
        }
        if (meanOut != nullptr) {
            meanOut[g] = static_cast<float>(mean);
        }
        if (invStdOut != nullptr) {
            invStdOut[g] = static_cast<float>(invStd);
        }
    }
}

inline void normalizeBackward(const NormLayout& l, const float* x, const float* scale, float eps,
                              const float* dy, float* dx, float* dscale, float* dbias) {
    std::vector<float> mean(static_cast<size_t>(l.groups));
    std::vector<float> invStd(static_cast<size_t>(l.groups));
    std::vector<float> scratch(static_cast<size_t>(l.groups * l.groupSize));
    normalizeForward(l, x, scale, nullptr, eps, scratch.data(), mean.data(), invStd.data());
    for (int64_t g = 0; g < l.groups; ++g) {
        double meanG = 0.0;
        double meanGX = 0.0;
        for (int64_t i = 0; i < l.groupSize; ++i) {
            const int64_t k = g * l.groupSize + i;
            const double xhat = (x[k] - mean[g]) * invStd[g];
            const double gk = static_cast<double>(dy[k]) * scale[l.paramIndex(g, i)];
            meanG += gk;
            meanGX += gk * xhat;
            dscale[l.paramIndex(g, i)] += static_cast<float>(dy[k] * xhat);
            dbias[l.paramIndex(g, i)] += dy[k];
        }
        meanG /= static_cast<double>(l.groupSize);
        meanGX /= static_cast<double>(l.groupSize);
        for (int64_t i = 0; i < l.groupSize; ++i) {
            const int64_t k = g * l.groupSize + i;
            const double xhat = (x[k] - mean[g]) * invStd[g];
            const double gk = static_cast<double>(dy[k]) * scale[l.paramIndex(g, i)];
            dx[k] = static_cast<float>(invStd[g] * (gk - meanG - xhat * meanGX));
        }
    }
}

} // namespace qs::runtime
