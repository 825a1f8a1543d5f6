#include "ui/features/pruning/pruning_panel.h"

#include "ui/features/pruning/pruning_overlay.h"
#include "ui/features/pruning/pruning_state.h"
#include "ui/graph_document.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace qs::ui {

namespace {
constexpr int kGaugeHeight = 40;
constexpr int kBarHeight = 14;
constexpr int kPad = 6;
constexpr int kChartMinWidth = 260;
constexpr int kChartMinHeight = 140;
constexpr double kLogScaleRange = 100.0;
const QColor kWithinTarget(46, 125, 50);
const QColor kOverTarget(198, 40, 40);

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

double percentOf(int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
} // namespace

MemoryGauge::MemoryGauge(QWidget* parent)
    : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void MemoryGauge::setValues(int64_t dense, int64_t target, int64_t minimum, int64_t pruned) {
    m_dense = dense;
    m_target = target;
    m_minimum = minimum;
    m_pruned = pruned;
    setToolTip(text());
    update();
}

QColor MemoryGauge::fillColor() const {
    return m_pruned <= m_target ? kWithinTarget : kOverTarget;
}

QString MemoryGauge::text() const {
    if (m_dense <= 0) {
        return tr("No pruning yet");
    }
    return tr("%1 of %2 dense (%3 %) · target %4 · minimum %5")
        .arg(formatBytes(m_pruned), formatBytes(m_dense))
        .arg(percentOf(m_pruned, m_dense), 0, 'f', 1)
        .arg(formatBytes(m_target), formatBytes(m_minimum));
}

QSize MemoryGauge::sizeHint() const {
    return {320, kGaugeHeight};
}

void MemoryGauge::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF track(kPad, 2, width() - 2 * kPad, kBarHeight);
    painter.setPen(palette().color(QPalette::Mid));
    painter.setBrush(palette().color(QPalette::Base));
    painter.drawRoundedRect(track, 3, 3);
    const int64_t scale = std::max({m_dense, m_pruned, m_target, int64_t{1}});
    const auto at = [&](int64_t bytes) {
        return track.left() +
               track.width() * static_cast<double>(bytes) / static_cast<double>(scale);
    };
    if (m_dense > 0) {
        QRectF fill = track;
        fill.setRight(at(m_pruned));
        painter.setPen(Qt::NoPen);
        painter.setBrush(fillColor());
        painter.drawRoundedRect(fill, 3, 3);
        // The minimum (dashed) and the target (solid) as ticks across the bar.
        painter.setPen(QPen(palette().color(QPalette::WindowText), 1.0, Qt::DashLine));
        painter.drawLine(QPointF(at(m_minimum), track.top() - 1),
                         QPointF(at(m_minimum), track.bottom() + 1));
        painter.setPen(QPen(palette().color(QPalette::WindowText), 2.0));
        painter.drawLine(QPointF(at(m_target), track.top() - 2),
                         QPointF(at(m_target), track.bottom() + 2));
    }
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(
        QRectF(kPad, track.bottom() + 2, width() - 2 * kPad, kGaugeHeight - kBarHeight),
        Qt::AlignLeft | Qt::AlignTop, text());
}

ChannelScoreChart::ChannelScoreChart(QWidget* parent)
    : QWidget(parent) {
    setMinimumSize(kChartMinWidth, kChartMinHeight);
}

void ChannelScoreChart::setChannels(const QString& title, const std::vector<double>& scores,
                                    const std::vector<uint8_t>& mask, const QColor& color) {
    m_title = title;
    m_color = color;
    m_bars.clear();
    for (size_t c = 0; c < scores.size(); ++c) {
        m_bars.push_back({static_cast<int>(c), scores[c], c >= mask.size() || mask[c] != 0});
    }
    // Largest first; kept before pruned on ties (a group's channels share a score).
    std::stable_sort(m_bars.begin(), m_bars.end(), [](const Bar& a, const Bar& b) {
        return a.score != b.score ? a.score > b.score : a.kept && !b.kept;
    });
    update();
}

void ChannelScoreChart::clear(const QString& message) {
    m_title = message;
    m_bars.clear();
    update();
}

QSize ChannelScoreChart::sizeHint() const {
    return {kChartMinWidth * 2, kChartMinHeight};
}

void ChannelScoreChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    const int line = fontMetrics().height();
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(kPad, kPad / 2, width() - 2 * kPad, line), Qt::AlignLeft, m_title);
    if (m_bars.empty()) {
        return;
    }
    const QRectF area(kPad, kPad + line, width() - 2 * kPad, height() - 2 * kPad - 2 * line);
    double high = 0.0;
    double low = std::numeric_limits<double>::infinity();
    for (const Bar& bar : m_bars) {
        high = std::max(high, bar.score);
        if (bar.score > 0.0) {
            low = std::min(low, bar.score);
        }
    }
    if (!(high > 0.0)) {
        high = 1.0;
    }
    // LFH scores span decades: past a range of 100 the bars are drawn on a log axis from the
    // decade below the smallest positive score, so the pruned tail stays visible.
    const bool logScale = std::isfinite(low) && high / low > kLogScaleRange;
    const double floorLog = logScale ? std::floor(std::log10(low)) : 0.0;
    const auto heightOf = [&](double score) {
        if (!logScale) {
            return std::clamp(score / high, 0.0, 1.0);
        }
        return score > 0.0
                   ? std::clamp((std::log10(score) - floorLog) / (std::log10(high) - floorLog), 0.0,
                                1.0)
                   : 0.0;
    };
    const double step = area.width() / static_cast<double>(m_bars.size());
    QColor grey = palette().color(QPalette::Mid);
    painter.setPen(Qt::NoPen);
    for (size_t i = 0; i < m_bars.size(); ++i) {
        const Bar& bar = m_bars[i];
        const double h = area.height() * heightOf(bar.score);
        const double gap = step > 3.0 ? 1.0 : 0.0;
        painter.setBrush(bar.kept ? m_color : grey);
        painter.drawRect(QRectF(area.left() + static_cast<double>(i) * step,
                                area.bottom() - std::max(h, 1.0), std::max(step - gap, 0.5),
                                std::max(h, 1.0)));
    }
    painter.setPen(palette().color(QPalette::WindowText));
    const auto kept =
        std::count_if(m_bars.begin(), m_bars.end(), [](const Bar& b) { return b.kept; });
    painter.drawText(
        QRect(kPad, static_cast<int>(area.bottom()) + 2, width() - 2 * kPad, line), Qt::AlignLeft,
        tr("%1 kept (coloured) · %2 pruned (grey) · max %3%4")
            .arg(kept)
            .arg(static_cast<qsizetype>(m_bars.size()) - kept)
            .arg(high, 0, 'g', 3)
            .arg(logScale ? tr(" · log scale from 1e%1").arg(floorLog, 0, 'f', 0) : QString()));
}

PruningPanel::PruningPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_prune(new QPushButton(tr("Prune…"), this))
    , m_gauge(new MemoryGauge(this))
    , m_target(new QDoubleSpinBox(this))
    , m_table(new QTableWidget(this))
    , m_chart(new ChannelScoreChart(this)) {
    m_summary->setWordWrap(true);
    m_target->setRange(0.1, 100.0);
    m_target->setDecimals(1);
    m_target->setSuffix(QStringLiteral(" %"));
    m_target->setToolTip(tr("Target weight memory, % of the dense FP32 bytes: the greedy re-runs "
                            "(one undo step)"));
    m_target->setKeyboardTracking(false);
    m_table->setColumnCount(ColumnCount);
    m_table->setHorizontalHeaderLabels({tr("Entry"), tr("Exit"), tr("Kept / channels"), tr("Saved"),
                                        tr("Constraint"), tr("Kept")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);

    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(new QLabel(tr("Target:"), this));
    top->addWidget(m_target);
    top->addWidget(m_prune);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_table);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(m_gauge);
    column->addWidget(split, 1);

    connect(m_prune, &QPushButton::clicked, this, &PruningPanel::pruneRequested);
    connect(m_target, &QDoubleSpinBox::valueChanged, this, [this](double percent) {
        if (!m_updating) {
            Q_EMIT targetEdited(pruning::TargetMemory{true, percent / 100.0});
        }
    });
    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (m_updating || row < 0) {
            return;
        }
        m_selected = row;
        showScores();
        Q_EMIT sectionActivated(row);
    });
    refresh();
}

void PruningPanel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    m_document = document;
    m_rowsOf.reset();
    m_selected = -1;
    if (document != nullptr) {
        m_connection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kPruningKey) {
                    refresh();
                }
            });
    }
    refresh();
}

QString PruningPanel::summary() const {
    return m_summary->text();
}

QComboBox* PruningPanel::constraintBox(int section) const {
    return qobject_cast<QComboBox*>(m_table->cellWidget(section, ConstraintColumn));
}

QSpinBox* PruningPanel::keptBox(int section) const {
    return qobject_cast<QSpinBox*>(m_table->cellWidget(section, KeptColumn));
}

void PruningPanel::refresh() {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    m_prune->setEnabled(!m_document.isNull());
    if (result == nullptr) {
        m_summary->setText(m_document.isNull() ? tr("No model open")
                                               : tr("Not pruned yet: Compress ▸ Prune…"));
        m_gauge->setValues(0, 0, 0, 0);
        m_table->setRowCount(0);
        m_rowsOf.reset();
        m_selected = -1;
        m_target->setEnabled(false);
        m_chart->clear(tr("Per-channel scores of the selected entry"));
        return;
    }
    const PruningRun& run = *result->run;
    const pruning::PruningOutcome& outcome = *result->outcome;
    // The pruned model is the document: the run is shown as it was applied, not edited.
    m_prune->setEnabled(!result->applied);
    const QString importance = qs(std::string(pruning::importanceName(run.analysis.metric)));
    QString source = importance;
    if (run.analysis.metric == pruning::ImportanceMetric::Lfh) {
        source += run.analysis.samples == 1 ? tr(" (1 sample)")
                                            : tr(" (%1 samples)").arg(run.analysis.samples);
    }
    m_summary->setText(tr("%1 sections · %2 · SIMD %3%4 · target %5 (%6)")
                           .arg(run.sections())
                           .arg(source)
                           .arg(run.analysis.simd)
                           .arg(run.analysis.simdPadding ? tr(", padded") : QString())
                           .arg(qs(result->target.describe()), formatBytes(outcome.targetBytes)) +
                       (result->applied ? tr(" · applied: the graph is the pruned model "
                                             "(Compress ▸ Back to Dense Model to edit)")
                                        : QString()));
    m_gauge->setValues(outcome.denseBytes, outcome.targetBytes, outcome.minimumBytes,
                       outcome.prunedBytes);
    {
        m_updating = true;
        const QSignalBlocker block(m_target);
        m_target->setEnabled(!result->applied);
        m_target->setValue(percentOf(outcome.targetBytes, outcome.denseBytes));
        m_updating = false;
    }
    if (m_rowsOf != result->run || m_table->rowCount() != run.sections()) {
        buildRows();
        m_rowsOf = result->run;
    }
    updateRows();
    if (m_selected >= run.sections()) {
        m_selected = -1;
    }
    if (m_selected < 0 && run.sections() > 0) {
        selectSection(0);
    } else {
        showScores();
    }
}

void PruningPanel::buildRows() {
    const PruningRun& run = *pruningResult(*m_document)->run;
    m_updating = true;
    m_table->setRowCount(run.sections());
    for (int s = 0; s < run.sections(); ++s) {
        const auto index = static_cast<size_t>(s);
        for (int c = 0; c < ColumnCount; ++c) {
            m_table->setItem(s, c, new QTableWidgetItem);
        }
        m_table->item(s, EntryColumn)->setText(qs(run.analysis.entryNames[index]));
        m_table->item(s, EntryColumn)->setForeground(pruningSectionColor(s).darker(140));
        m_table->item(s, ExitColumn)->setText(qs(run.analysis.exitNames[index]));
        auto* constraint = new QComboBox(m_table);
        constraint->addItems({tr("free"), tr("lock"), tr("keep")});
        constraint->setToolTip(tr("free: the greedy chooses; lock: never pruned; keep: exactly "
                                  "the kept count (its most important channels)"));
        m_table->setCellWidget(s, ConstraintColumn, constraint);
        auto* kept = new QSpinBox(m_table);
        kept->setRange(1, static_cast<int>(run.analysis.detection.sections[index].channels));
        kept->setKeyboardTracking(false);
        kept->setToolTip(tr("Channels kept: a new count fixes it (keep)"));
        m_table->setCellWidget(s, KeptColumn, kept);
        connect(constraint, &QComboBox::currentIndexChanged, this,
                [this, s](int kind) { editConstraint(s, kind); });
        connect(kept, &QSpinBox::valueChanged, this, [this, s] { editKept(s); });
    }
    m_updating = false;
}

void PruningPanel::updateRows() {
    const PruningResult& result = *pruningResult(*m_document);
    const PruningRun& run = *result.run;
    const pruning::PruningOutcome& outcome = *result.outcome;
    m_updating = true;
    for (int s = 0; s < run.sections(); ++s) {
        const auto index = static_cast<size_t>(s);
        const int64_t channels = run.analysis.detection.sections[index].channels;
        m_table->item(s, ChannelsColumn)
            ->setText(QStringLiteral("%1 / %2").arg(outcome.kept[index]).arg(channels));
        m_table->item(s, SavedColumn)
            ->setText(
                formatBytes(outcome.sectionBytesBefore[index] - outcome.sectionBytesAfter[index]));
        const pruning::EntryConstraint& constraint = result.constraint(s);
        if (QComboBox* box = constraintBox(s)) {
            const QSignalBlocker block(box);
            box->setCurrentIndex(static_cast<int>(constraint.kind));
            box->setEnabled(!result.applied);
        }
        if (QSpinBox* box = keptBox(s)) {
            const QSignalBlocker block(box);
            box->setValue(static_cast<int>(outcome.kept[index]));
            box->setEnabled(!result.applied &&
                            constraint.kind != pruning::EntryConstraint::Kind::Lock);
        }
    }
    m_updating = false;
}

void PruningPanel::editConstraint(int section, int kind) {
    if (m_updating || m_document.isNull() || pruningResult(*m_document) == nullptr) {
        return;
    }
    const PruningResult& result = *pruningResult(*m_document);
    const auto index = static_cast<size_t>(section);
    pruning::EntryConstraint constraint;
    constraint.kind = static_cast<pruning::EntryConstraint::Kind>(kind);
    constraint.kept = constraint.kind == pruning::EntryConstraint::Kind::Lock
                          ? result.run->analysis.detection.sections[index].channels
                          : result.outcome->kept[index];
    // Queued: the edit replaces the document's pruning, which rebuilds these widgets.
    QMetaObject::invokeMethod(
        this, [this, section, constraint] { Q_EMIT constraintEdited(section, constraint); },
        Qt::QueuedConnection);
}

void PruningPanel::editKept(int section) {
    QSpinBox* box = keptBox(section);
    if (m_updating || box == nullptr) {
        return;
    }
    const pruning::EntryConstraint constraint{pruning::EntryConstraint::Kind::Keep, box->value()};
    QMetaObject::invokeMethod(
        this, [this, section, constraint] { Q_EMIT constraintEdited(section, constraint); },
        Qt::QueuedConnection);
}

void PruningPanel::selectSection(int section) {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr || section >= result->run->sections()) {
        return;
    }
    m_selected = section;
    m_updating = true;
    if (section >= 0) {
        m_table->selectRow(section);
        m_table->setCurrentCell(section, EntryColumn);
    } else {
        m_table->clearSelection();
    }
    m_updating = false;
    showScores();
}

void PruningPanel::showScores() {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr || m_selected < 0) {
        m_chart->clear(tr("Per-channel scores of the selected entry"));
        return;
    }
    const auto s = static_cast<size_t>(m_selected);
    const PruningRun& run = *result->run;
    const pruning::PruningOutcome& outcome = *result->outcome;
    m_chart->setChannels(tr("%1: %2 of %3 channels kept (%4 scores, sorted)")
                             .arg(qs(run.analysis.entryNames[s]))
                             .arg(outcome.kept[s])
                             .arg(run.analysis.detection.sections[s].channels)
                             .arg(qs(std::string(pruning::importanceName(run.analysis.metric)))),
                         run.analysis.importance[s].channelScores, outcome.info.masks[s],
                         pruningSectionColor(m_selected));
}

} // namespace qs::ui
