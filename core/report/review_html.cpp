// reviewHtml(): the page of a ReviewReport. The markup is written so that it parses both as HTML
// and as XML (every element closed, attribute values quoted, the scripts inside CDATA), which
// lets the tests check it with a strict XML parser as well as with an HTML one. The HAWQ plots and
// the pruning bars are small SVGs drawn here; the graph and the bit-width charts come from Qt.

#include "core/report/review_diff.h"
#include "core/report/review_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace qs::report {

namespace {
/// DESIGN.md's bit-width colours (the GUI's default palette, GraphTheme::bitwidthColor).
std::string_view bitsColor(int bits) {
    switch (bits) {
    case 8:
        return "#2e9d4a";
    case 6:
        return "#f28e1c";
    case 4:
        return "#d62728";
    case 2:
        return "#8e44ad";
    case 16:
        return "#1f5f9f";
    default:
        return "#6e6e6e";
    }
}

std::string fmt(double value, const char* format = "%.6g") {
    std::array<char, 48> buffer{};
    std::snprintf(buffer.data(), buffer.size(), format, value);
    return buffer.data();
}

std::string mib(int64_t bytes) {
    return fmt(static_cast<double>(bytes) / (1024.0 * 1024.0), "%.2f") + " MiB";
}

std::string grouped(int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out += ',';
        }
        out += digits[i];
    }
    return value < 0 ? "-" + out : out;
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 48px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 18px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
nav a { margin-right: 12px; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 8px 0; }
dl.facts dt { color: #666; }
dl.facts dd { margin: 0; }
.viewport { height: 520px; border: 1px solid #ccc; overflow: hidden; position: relative; cursor: grab; background: #fafafa; }
.viewport > div { transform-origin: 0 0; position: absolute; left: 0; top: 0; }
.hint { color: #666; font-size: 12px; }
pre { background: #f5f5f5; padding: 8px; overflow-x: auto; font-size: 12px; }
.charts svg { margin: 0 16px 16px 0; vertical-align: top; }
.tablewrap { max-height: 640px; overflow: auto; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { position: sticky; top: 0; background: #f0f0f0; cursor: pointer; user-select: none; }
th[data-dir="asc"]::after { content: " \25B2"; }
th[data-dir="desc"]::after { content: " \25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bits { color: #fff; font-weight: 600; text-align: center; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 6px; color: #fff; border-radius: 3px; }
)";

// Zoom (wheel, about the pointer), pan (drag) and fit (double-click) of the graph; sorting of
// every table by a click on a heading (numbers as numbers, empty cells last).
constexpr std::string_view kScript = R"(
(function () {
  var view = document.getElementById('graph-view');
  if (view) {
    var canvas = view.firstElementChild, svg = canvas.querySelector('svg');
    var s = 1, x = 0, y = 0, drag = null, w = 1, h = 1;
    if (svg && svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width > 0) {
      w = svg.viewBox.baseVal.width; h = svg.viewBox.baseVal.height;
      svg.setAttribute('width', w); svg.setAttribute('height', h);
    }
    var apply = function () {
      canvas.style.transform = 'translate(' + x + 'px,' + y + 'px) scale(' + s + ')';
    };
    var fit = function () {
      // Tall graphs fill the width and scroll by drag; wide ones fit.
      s = Math.min(view.clientWidth / w, Math.max(view.clientHeight / h, 0.5), 1);
      x = Math.max((view.clientWidth - w * s) / 2, 0); y = 0; apply();
    };
    view.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = view.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
      var k = e.deltaY < 0 ? 1.2 : 1 / 1.2;
      x = mx - (mx - x) * k; y = my - (my - y) * k; s *= k; apply();
    }, { passive: false });
    view.addEventListener('mousedown', function (e) { drag = [e.clientX - x, e.clientY - y]; });
    window.addEventListener('mousemove', function (e) {
      if (drag) { x = e.clientX - drag[0]; y = e.clientY - drag[1]; apply(); }
    });
    window.addEventListener('mouseup', function () { drag = null; });
    view.addEventListener('dblclick', fit);
    fit();
  }
  var tables = document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.addEventListener('click', function () {
        var numeric = th.getAttribute('data-numeric') === '1';
        var ascending = th.getAttribute('data-dir') !== 'asc';
        Array.prototype.forEach.call(heads, function (other) { other.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', ascending ? 'asc' : 'desc');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var key = function (row) {
          var text = row.cells[column].textContent;
          if (!numeric) { return text; }
          var value = parseFloat(text);
          return isNaN(value) ? null : value;
        };
        rows.sort(function (a, b) {
          var p = key(a), q = key(b);
          if (p === null || p === '') { return q === null || q === '' ? 0 : 1; }
          if (q === null || q === '') { return -1; }
          var order = numeric ? p - q : p.localeCompare(q);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
)";

void fact(std::ostream& out, std::string_view name, const std::string& value) {
    std::string text = htmlEscape(value);
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) {
        text.replace(at, 1, "<br/>");
    }
    out << "<dt>" << htmlEscape(name) << "</dt><dd>" << text << "</dd>\n";
}

void headerSection(std::ostream& out, const ReviewHeader& h) {
    out << "<dl class=\"facts\">\n";
    fact(out, "Model", h.modelPath);
    fact(out, "Opsets", h.opsets);
    if (!h.producer.empty()) {
        fact(out, "Producer", h.producer);
    }
    fact(out, "Nodes", grouped(h.nodes));
    fact(out, "Parameters", grouped(h.parameters));
    // As `info` says it: a model with dynamic dims counts them as 1 unless --input-shape fixes
    // them.
    fact(out, "MACs",
         grouped(h.macs) + (h.macsDynamicDimsAsOne ? " (dynamic dims counted as 1)" : ""));
    fact(out, "HW config", h.hw);
    fact(out, "Preset", h.preset);
    fact(out, "Propagation rule", h.rule);
    fact(out, "Setup from", h.source);
    fact(out, "Quantizers",
         std::to_string(h.activeQuantizers) + " active, " + std::to_string(h.requantizers) +
             " requantizers, " + std::to_string(h.mergedQuantizers) + " merged away, " +
             std::to_string(h.unifiedGroups) + " unified-scale groups");
    fact(out, "Weights: float vs compressed",
         mib(h.floatBytes) + " -> " + mib(h.compressedBytes) + " (" +
             fmt(h.compressedBytes > 0
                     ? static_cast<double>(h.floatBytes) / static_cast<double>(h.compressedBytes)
                     : 1.0,
                 "%.2f") +
             "x)");
    fact(out, "BitOps compression ratio", fmt(h.bitOpsRatio, "%.3f") + " (vs all 8-bit)");
    if (!h.dataset.empty()) {
        fact(out, "Calibration dataset", h.dataset);
    }
    for (const quantization::OutputMetrics& output : h.outputs) {
        std::string text = "cosine " + fmt(output.meanCosine, "%.6f") + " (min " +
                           fmt(output.minCosine, "%.6f") + "), max abs error " +
                           fmt(output.maxAbsError);
        if (output.top1Agreement) {
            text += ", top-1 agreement " + fmt(*output.top1Agreement, "%.4f");
        }
        fact(out, "Output '" + output.name + "'", text);
    }
    if (h.accuracy) {
        fact(out, "Accuracy", accuracyText(*h.accuracy));
    }
    fact(out, "Date", h.date);
    fact(out, "Tool", "Quantscope " + h.toolVersion);
    out << "</dl>\n";
}

void table(std::ostream& out, const ReviewTable& t, int bitsColumn = -1) {
    out << "<div class=\"tablewrap\"><table class=\"sortable\" id=\"table-" << htmlEscape(t.id)
        << "\"><thead><tr>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
        out << "<th data-numeric=\"" << (t.numeric.at(c) ? 1 : 0) << "\">"
            << htmlEscape(t.columns[c]) << "</th>";
    }
    out << "</tr></thead>\n<tbody>\n";
    for (const std::vector<std::string>& row : t.rows) {
        out << "<tr>";
        for (size_t c = 0; c < row.size(); ++c) {
            if (static_cast<int>(c) == bitsColumn) {
                int bits = 0;
                std::istringstream(row[c]) >> bits;
                out << "<td class=\"bits\" style=\"background:" << bitsColor(bits) << "\">"
                    << htmlEscape(row[c]) << "</td>";
            } else {
                out << (t.numeric.at(c) ? "<td class=\"num\">" : "<td>") << htmlEscape(row[c])
                    << "</td>";
            }
        }
        out << "</tr>\n";
    }
    out << "</tbody></table></div>\n";
}

int columnOf(const ReviewTable& t, std::string_view name) {
    const auto found = std::find(t.columns.begin(), t.columns.end(), name);
    return found == t.columns.end() ? -1 : static_cast<int>(found - t.columns.begin());
}

/// Average trace per layer on a log axis, each bar in its chosen bit width's colour.
void hawqTraces(std::ostream& out, const ReviewHawq& hawq) {
    const double width = 900;
    const double height = 240;
    const double left = 56;
    const double bottom = 24;
    double low = 1e300;
    double high = -1e300;
    for (const ReviewHawq::Layer& layer : hawq.layers) {
        if (layer.avgTrace > 0) {
            low = std::min(low, std::log10(layer.avgTrace));
            high = std::max(high, std::log10(layer.avgTrace));
        }
    }
    if (low > high) {
        low = -1;
        high = 0;
    }
    low = std::floor(low);
    high = std::max(std::ceil(high), low + 1);
    const double plotHeight = height - bottom - 8;
    const size_t n = std::max<size_t>(hawq.layers.size(), 1);
    const double step = (width - left - 8) / static_cast<double>(n);
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" viewBox=\"0 0 " << width << ' ' << height
        << "\" font-family=\"sans-serif\" font-size=\"10\"><title>Average Hessian trace per "
           "layer (log scale)</title>\n";
    for (double e = low; e <= high; e += 1) {
        const double y = 8 + plotHeight * (1 - (e - low) / (high - low));
        out << "<line x1=\"" << left << "\" x2=\"" << width - 8 << "\" y1=\"" << y << "\" y2=\""
            << y << "\" stroke=\"#ddd\"/><text x=\"" << left - 4 << "\" y=\"" << y + 3
            << "\" text-anchor=\"end\">1e" << static_cast<int>(e) << "</text>\n";
    }
    for (size_t i = 0; i < hawq.layers.size(); ++i) {
        const ReviewHawq::Layer& layer = hawq.layers[i];
        const double value =
            layer.avgTrace > 0 ? std::clamp(std::log10(layer.avgTrace), low, high) : low;
        const double barHeight = plotHeight * (value - low) / (high - low);
        out << "<rect x=\"" << fmt(left + step * static_cast<double>(i) + step * 0.1) << "\" y=\""
            << fmt(8 + plotHeight - barHeight) << "\" width=\"" << fmt(std::max(step * 0.8, 0.5))
            << "\" height=\"" << fmt(barHeight) << "\" fill=\"" << bitsColor(layer.weightBits)
            << "\"><title>" << htmlEscape(layer.node) << ": trace " << fmt(layer.avgTrace) << ", "
            << layer.weightBits << "-bit</title></rect>\n";
    }
    out << "<text x=\"" << left << "\" y=\"" << height - 6
        << "\">layers in HAWQ order (colour: chosen weight bits)</text></svg>\n";
}

/// Every candidate (ratio, metric), the front as a line, the chosen one ringed.
void hawqPareto(std::ostream& out, const ReviewHawq& hawq) {
    const double width = 520;
    const double height = 300;
    const double left = 64;
    const double bottom = 36;
    double minRatio = 1e300;
    double maxRatio = -1e300;
    double minMetric = 1e300;
    double maxMetric = -1e300;
    for (const mixed_precision::HawqCandidate& c : hawq.candidates) {
        minRatio = std::min(minRatio, c.ratio);
        maxRatio = std::max(maxRatio, c.ratio);
        minMetric = std::min(minMetric, c.metric);
        maxMetric = std::max(maxMetric, c.metric);
    }
    if (hawq.candidates.empty()) {
        return;
    }
    if (maxRatio <= minRatio) {
        maxRatio = minRatio + 1;
    }
    if (maxMetric <= minMetric) {
        maxMetric = minMetric + 1;
    }
    auto px = [&](double ratio) {
        return left + (width - left - 12) * (ratio - minRatio) / (maxRatio - minRatio);
    };
    auto py = [&](double metric) {
        return 8 + (height - bottom - 8) * (1 - (metric - minMetric) / (maxMetric - minMetric));
    };
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" viewBox=\"0 0 " << width << ' ' << height
        << "\" font-family=\"sans-serif\" font-size=\"10\"><title>HAWQ candidates: compression "
           "ratio vs metric</title>\n<rect x=\""
        << left << "\" y=\"8\" width=\"" << width - left - 12 << "\" height=\""
        << height - bottom - 8 << "\" fill=\"none\" stroke=\"#ccc\"/>\n";
    for (const mixed_precision::HawqCandidate& c : hawq.candidates) {
        out << "<circle cx=\"" << fmt(px(c.ratio)) << "\" cy=\"" << fmt(py(c.metric))
            << "\" r=\"2\" fill=\"#999\"/>\n";
    }
    std::vector<size_t> front = hawq.pareto;
    std::erase_if(front, [&](size_t i) { return i >= hawq.candidates.size(); });
    std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
        return hawq.candidates[a].ratio < hawq.candidates[b].ratio;
    });
    if (!front.empty()) {
        out << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
        for (size_t i : front) {
            out << fmt(px(hawq.candidates[i].ratio)) << ',' << fmt(py(hawq.candidates[i].metric))
                << ' ';
        }
        out << "\"/>\n";
    }
    if (hawq.chosen < hawq.candidates.size()) {
        const mixed_precision::HawqCandidate& c = hawq.candidates[hawq.chosen];
        out << "<circle cx=\"" << fmt(px(c.ratio)) << "\" cy=\"" << fmt(py(c.metric))
            << "\" r=\"6\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"><title>chosen: "
               "ratio "
            << fmt(c.ratio) << ", metric " << fmt(c.metric) << "</title></circle>\n";
    }
    out << "<text x=\"" << left << "\" y=\"" << height - 20 << "\">" << fmt(minRatio, "%.3f")
        << "</text><text x=\"" << width - 12 << "\" y=\"" << height - 20
        << "\" text-anchor=\"end\">" << fmt(maxRatio, "%.3f") << "</text><text x=\""
        << (left + width) / 2 << "\" y=\"" << height - 6
        << "\" text-anchor=\"middle\">BitOps compression ratio</text>"
        << "<text x=\"" << left - 4 << "\" y=\"14\" text-anchor=\"end\">" << fmt(maxMetric, "%.3g")
        << "</text><text x=\"" << left - 4 << "\" y=\"" << height - bottom
        << "\" text-anchor=\"end\">" << fmt(minMetric, "%.3g") << "</text></svg>\n";
}

void hawqSection(std::ostream& out, const ReviewReport& report, const ReviewTable& layers) {
    const ReviewHawq& hawq = *report.hawq;
    out << "<section id=\"hawq\"><h2>HAWQ mixed precision</h2>\n<dl class=\"facts\">\n";
    fact(out, "Target compression ratio", fmt(hawq.target, "%.3f"));
    fact(out, "Chosen ratio / metric", fmt(hawq.ratio, "%.4f") + " / " + fmt(hawq.metric));
    fact(out, "Mode, search", hawq.mode + ", " + hawq.search);
    std::string bits;
    for (int b : hawq.bits) {
        bits += (bits.empty() ? "" : ", ") + std::to_string(b);
    }
    fact(out, "Bits", bits);
    fact(out, "Samples, iterations",
         std::to_string(hawq.samples) + ", " + std::to_string(hawq.iterations));
    fact(out, "Candidates (on the front)",
         std::to_string(hawq.candidates.size()) + " (" + std::to_string(hawq.pareto.size()) + ")");
    out << "</dl>\n<div class=\"charts\">\n";
    hawqTraces(out, hawq);
    hawqPareto(out, hawq);
    out << "</div>\n";
    table(out, layers, columnOf(layers, "weight bits"));
    out << "</section>\n";
}

/// Kept / total channels per section as bars.
void pruningBars(std::ostream& out, const ReviewPruning& pruning) {
    const double rowHeight = 16;
    const double width = 640;
    const double label = 260;
    const double height = rowHeight * static_cast<double>(pruning.sections.size()) + 8;
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" viewBox=\"0 0 " << width << ' ' << height
        << "\" font-family=\"sans-serif\" font-size=\"10\"><title>Channels kept per "
           "section</title>\n";
    for (size_t i = 0; i < pruning.sections.size(); ++i) {
        const ReviewPruning::Section& s = pruning.sections[i];
        const double y = 4 + rowHeight * static_cast<double>(i);
        const double fraction =
            s.channels > 0 ? static_cast<double>(s.kept) / static_cast<double>(s.channels) : 1.0;
        out << "<text x=\"" << label - 6 << "\" y=\"" << y + 11 << "\" text-anchor=\"end\">"
            << htmlEscape(s.entry) << "</text><rect x=\"" << label << "\" y=\"" << y + 2
            << "\" width=\"" << width - label - 80 << "\" height=\"" << rowHeight - 4
            << "\" fill=\"#eee\"/><rect x=\"" << label << "\" y=\"" << y + 2 << "\" width=\""
            << fmt((width - label - 80) * fraction) << "\" height=\"" << rowHeight - 4
            << "\" fill=\"#1f77b4\"/><text x=\"" << width - 74 << "\" y=\"" << y + 11 << "\">"
            << s.channels << " -&gt; " << s.kept << "</text>\n";
    }
    out << "</svg>\n";
}

void pruningSection(std::ostream& out, const ReviewReport& report, const ReviewTable& sections) {
    const ReviewPruning& p = *report.pruning;
    out << "<section id=\"pruning\"><h2>Pruning</h2>\n<dl class=\"facts\">\n";
    fact(out, "Memory: dense / target / pruned",
         grouped(p.denseBytes) + " / " + grouped(p.targetBytes) + " / " + grouped(p.prunedBytes) +
             " bytes (" +
             fmt(p.denseBytes > 0 ? 100.0 * static_cast<double>(p.prunedBytes) /
                                        static_cast<double>(p.denseBytes)
                                  : 100.0,
                 "%.1f") +
             " % of dense)");
    fact(out, "Minimum reachable", grouped(p.minimumBytes) + " bytes");
    fact(out, "Importance, HW, SIMD",
         p.importance + ", " + p.hw + ", SIMD " +
             (p.simd > 0 ? std::to_string(p.simd) : std::string("from HW config")) +
             (p.simdPadding ? ", padded" : ""));
    out << "</dl>\n<div class=\"charts\">\n";
    pruningBars(out, p);
    out << "</div>\n";
    table(out, sections);
    out << "</section>\n";
}

void compressionSection(std::ostream& out, const ReviewReport& report, const ReviewTable& t) {
    const nlohmann::json& plan = *report.compressionPlan;
    out << "<section id=\"weight-compression\"><h2>Weight compression</h2>\n<dl class=\"facts\">\n";
    if (plan.contains("options") && plan.at("options").is_object()) {
        for (const auto& [key, value] : plan.at("options").items()) {
            fact(out, key, value.is_string() ? value.get<std::string>() : value.dump());
        }
    }
    int64_t before = 0;
    int64_t after = 0;
    const int beforeColumn = columnOf(t, "bytes before");
    const int afterColumn = columnOf(t, "bytes after");
    for (const std::vector<std::string>& row : t.rows) {
        before += std::stoll(row.at(static_cast<size_t>(beforeColumn)));
        after += std::stoll(row.at(static_cast<size_t>(afterColumn)));
    }
    fact(out, "Planned weights: before -> after (codes)", mib(before) + " -> " + mib(after));
    out << "</dl>\n";
    table(out, t);
    out << "</section>\n";
}

/// `svg` without an XML prolog or DOCTYPE before its root element.
std::string_view svgElement(std::string_view svg) {
    const size_t start = svg.find("<svg");
    return start == std::string_view::npos ? std::string_view{} : svg.substr(start);
}

/// The page's head, its title and heading.
void pageStart(std::ostream& out, const std::string& title, const std::string& version) {
    out << "<!DOCTYPE html>\n<html lang=\"en\" xmlns=\"http://www.w3.org/1999/xhtml\"><head>"
           "<meta charset=\"utf-8\"/><meta name=\"generator\" content=\"Quantscope "
        << htmlEscape(version) << "\"/><title>" << htmlEscape(title) << "</title>\n<style>"
        << kStyle << "</style></head>\n<body>\n<h1>" << htmlEscape(title) << "</h1>\n";
}

void pageEnd(std::ostream& out) {
    out << "<script>//<![CDATA[" << kScript << "//]]></script>\n</body></html>\n";
}

void graphSection(std::ostream& out, std::string_view svg) {
    if (svg.empty()) {
        return;
    }
    out << "<section id=\"graph\"><h2>Graph</h2>\n<div class=\"viewport\" "
           "id=\"graph-view\"><div>"
        << svg
        << "</div></div>\n<p class=\"hint\">Wheel: zoom; drag: pan; double-click: fit."
           "</p></section>\n";
}
} // namespace

std::string reviewDiffHtml(const ReviewDiff& diff, const std::string& graphSvg) {
    std::ostringstream out;
    pageStart(out, "Review diff: " + diff.b.modelName, diff.b.toolVersion);
    out << "<dl class=\"facts\">\n";
    fact(out, "A", diff.nameA);
    fact(out, "B", diff.nameB);
    fact(out, "Model", diff.b.modelPath);
    fact(out, "HW config A / B", diff.a.hw + " / " + diff.b.hw);
    fact(out, "Weights A / B",
         mib(diff.a.compressedBytes) + " / " + mib(diff.b.compressedBytes) + " (float " +
             mib(diff.b.floatBytes) + ")");
    fact(out, "BitOps ratio A / B",
         fmt(diff.a.bitOpsRatio, "%.3f") + " / " + fmt(diff.b.bitOpsRatio, "%.3f"));
    fact(out, "Quantizers A / B",
         std::to_string(diff.a.activeQuantizers + diff.a.requantizers) + " / " +
             std::to_string(diff.b.activeQuantizers + diff.b.requantizers));
    fact(out, "Changed / unchanged points",
         std::to_string(diff.quantizers.rows.size()) + " / " + std::to_string(diff.unchanged));
    if (diff.a.accuracy && diff.b.accuracy) {
        fact(out, "Top-1 A / B",
             fmt(100.0 * diff.a.accuracy->compressed.top1(), "%.2f") + " % / " +
                 fmt(100.0 * diff.b.accuracy->compressed.top1(), "%.2f") + " % (float " +
                 fmt(100.0 * diff.b.accuracy->floatModel.top1(), "%.2f") + " %)");
    }
    for (const auto& [name, value] : diff.facts) {
        fact(out, name, value);
    }
    fact(out, "Date", diff.b.date);
    out << "</dl>\n";
    graphSection(out, svgElement(graphSvg));
    for (const ReviewTable& t : diff.tables()) {
        out << "<section id=\"" << htmlEscape(t.id) << "\"><h2>" << htmlEscape(t.title) << " ("
            << t.rows.size() << ")</h2>\n";
        table(out, t, columnOf(t, "bits"));
        out << "</section>\n";
    }
    for (const std::string& note : diff.notes) {
        out << "<p class=\"hint\">" << htmlEscape(note) << "</p>\n";
    }
    pageEnd(out);
    return out.str();
}

std::string reviewHtml(const ReviewReport& report, const ReviewGraphics& graphics) {
    std::ostringstream out;
    const std::vector<ReviewTable> tables = report.tables();
    auto find = [&tables](std::string_view id) -> const ReviewTable* {
        for (const ReviewTable& t : tables) {
            if (t.id == id) {
                return &t;
            }
        }
        return nullptr;
    };
    pageStart(out, "Review report: " + report.header.modelName, report.header.toolVersion);
    out << "<nav><a href=\"#graph\">Graph</a><a href=\"#distribution\">Bit widths</a>"
           "<a href=\"#nncf\">NNCF table</a><a href=\"#quantizers\">Quantizers</a>";
    if (report.hawq) {
        out << "<a href=\"#hawq\">HAWQ</a>";
    }
    if (report.pruning) {
        out << "<a href=\"#pruning\">Pruning</a>";
    }
    if (report.compressionPlan) {
        out << "<a href=\"#weight-compression\">Weight compression</a>";
    }
    out << "</nav>\n";
    headerSection(out, report.header);
    out << "<p class=\"legend\">";
    for (int bits : {8, 6, 4, 2, 0}) {
        out << "<span style=\"background:" << bitsColor(bits) << "\">"
            << (bits > 0 ? std::to_string(bits) + "-bit" : std::string("float")) << "</span>";
    }
    out << "</p>\n";
    graphSection(out, svgElement(graphics.graphSvg));
    out << "<section id=\"distribution\"><h2>Bit-width distribution</h2>\n<div "
           "class=\"charts\">"
        << svgElement(graphics.bitwidthChartSvg) << svgElement(graphics.opTypeChartSvg)
        << "</div>\n";
    table(out, *find("bitwidths"), 0);
    out << "<h3>Per op type</h3>\n";
    table(out, *find("op_types"));
    out << "</section>\n<section id=\"nncf\"><h2>Statistics of the bitwidth distribution "
           "(NNCF)</h2>\n<pre>"
        << htmlEscape(report.nncfTable) << "</pre></section>\n";
    out << "<section id=\"quantizers\"><h2>Quantizers (" << report.quantizers.rows.size()
        << ")</h2>\n<p class=\"hint\">Click a heading to sort; the same rows are in "
           "quantizers.csv.</p>\n";
    table(out, report.quantizers, columnOf(report.quantizers, "bits"));
    out << "</section>\n";
    if (report.hawq) {
        hawqSection(out, report, *find("hawq_layers"));
    }
    if (report.pruning) {
        pruningSection(out, report, *find("pruning_sections"));
    }
    if (report.compressionPlan) {
        compressionSection(out, report, *find("weight_compression"));
    }
    for (const std::string& note : report.notes) {
        out << "<p class=\"hint\">" << htmlEscape(note) << "</p>\n";
    }
    pageEnd(out);
    return out.str();
}

} // namespace qs::report
