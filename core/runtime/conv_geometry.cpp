#include "core/runtime/conv_geometry.h"

namespace qs::runtime {

Result<ConvGeometry> convGeometry(const OpContext& ctx, const std::vector<int64_t>& inputSpatial,
                                  const std::vector<int64_t>& kernel, bool ceilMode) {
    const size_t rank = inputSpatial.size();
    ConvGeometry geo;
    geo.input = inputSpatial;
    geo.kernel = kernel;
    geo.strides = ctx.intsAttr("strides");
    geo.dilations = ctx.intsAttr("dilations");
    std::vector<int64_t> pads = ctx.intsAttr("pads");
    if (geo.strides.empty()) {
        geo.strides.assign(rank, 1);
    }
    if (geo.dilations.empty()) {
        geo.dilations.assign(rank, 1);
    }
    if (pads.empty()) {
        pads.assign(2 * rank, 0);
    }
    if (kernel.size() != rank || geo.strides.size() != rank || geo.dilations.size() != rank ||
        pads.size() != 2 * rank) {
        return ctx.error(Errc::InvalidModel,
                         "kernel, strides, dilations or pads do not match the " +
                             std::to_string(rank) + " spatial dims of the input");
    }
    const std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
    geo.padsBegin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
    geo.padsEnd.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
    geo.output.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t in = inputSpatial[d];
        const int64_t stride = geo.strides[d];
        const int64_t span = (kernel[d] - 1) * geo.dilations[d] + 1;
        if (stride <= 0 || geo.dilations[d] <= 0 || kernel[d] <= 0) {
            return ctx.error(Errc::InvalidModel, "strides, dilations and kernel must be positive");
        }
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            const int64_t out = (in + stride - 1) / stride;
            const int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
            const int64_t small = total / 2;
            geo.padsBegin[d] = autoPad == "SAME_UPPER" ? small : total - small;
            geo.padsEnd[d] = total - geo.padsBegin[d];
            geo.output[d] = out;
            continue;
        }
        if (autoPad == "VALID") {
            geo.padsBegin[d] = 0;
            geo.padsEnd[d] = 0;
        } else if (autoPad != "NOTSET") {
            return ctx.error(Errc::InvalidModel, "unknown auto_pad '" + autoPad + "'");
        }
        const int64_t padded = in + geo.padsBegin[d] + geo.padsEnd[d] - span;
        if (padded < 0) {
            return ctx.error(Errc::InvalidModel, "the kernel is larger than the padded input");
        }
        int64_t out = (ceilMode ? (padded + stride - 1) / stride : padded / stride) + 1;
        if (ceilMode && (out - 1) * stride >= in + geo.padsBegin[d]) {
            --out;
        }
        geo.output[d] = out;
    }
    return geo;
}

} // namespace qs::runtime
