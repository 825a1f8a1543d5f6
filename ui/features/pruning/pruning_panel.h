// The "Pruning" dock: a summary line (sections, importance, SIMD, target), a memory gauge (the
// pruned weight bytes against the target, with the dense size and the reachable minimum), the
// target as an editable percentage, a table with one row per pruning section (entry, exit,
// channels kept/total, memory saved, the constraint — free, lock, keep — and the kept count, both
// editable: every edit asks the controller to re-run the greedy, one undo step), and the
// per-channel scores S_c of the selected section's entry as bars sorted from the most to the
// least important (the greedy keeps a prefix of that order), pruned channels greyed. Selecting a
// row selects the entry on the graph and back.
#pragma once

#include "core/pruning/greedy_mask.h"
#include "core/pruning/pruning_workflow.h"

#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace qs::ui {

class GraphDocument;
struct PruningRun;

/// The pruned weight bytes on a bar from 0 to the dense size, with the target and minimum marked.
class MemoryGauge : public QWidget {
    Q_OBJECT

public:
    explicit MemoryGauge(QWidget* parent = nullptr);

    void setValues(int64_t dense, int64_t target, int64_t minimum, int64_t pruned);

    int64_t pruned() const { return m_pruned; }

    int64_t target() const { return m_target; }

    /// The fill: green at or below the target, red above it.
    QColor fillColor() const;

    /// The line under the bar ("48.7 MiB of 97.5 MiB (50.0 %) · target …").
    QString text() const;

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    int64_t m_dense = 0;
    int64_t m_target = 0;
    int64_t m_minimum = 0;
    int64_t m_pruned = 0;
};

/// The per-channel scores of one entry, sorted, pruned channels grey.
class ChannelScoreChart : public QWidget {
    Q_OBJECT

public:
    struct Bar {
        int channel = 0;
        double score = 0.0;
        bool kept = true;
    };

    explicit ChannelScoreChart(QWidget* parent = nullptr);

    /// Sorts the channels of `scores` by score, largest first; `mask[c]` = 1 keeps channel c.
    void setChannels(const QString& title, const std::vector<double>& scores,
                     const std::vector<uint8_t>& mask, const QColor& color);

    void clear(const QString& message);

    const std::vector<Bar>& bars() const { return m_bars; }

    const QString& title() const { return m_title; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_title;
    std::vector<Bar> m_bars;
    QColor m_color;
};

class PruningPanel : public QWidget {
    Q_OBJECT

public:
    enum Column {
        EntryColumn,
        ExitColumn,
        ChannelsColumn,
        SavedColumn,
        ConstraintColumn,
        KeptColumn,
        ColumnCount
    };

    explicit PruningPanel(QWidget* parent = nullptr);

    void setDocument(GraphDocument* document);

    /// Rebuilds the table, the gauge and the chart from the document's pruning.
    void refresh();

    /// Selects section `section`'s row and shows its scores (-1: none).
    void selectSection(int section);

    int selectedSection() const { return m_selected; }

    QString summary() const;

    QTableWidget& table() const { return *m_table; }

    /// The constraint and kept-count editors of row `section`.
    QComboBox* constraintBox(int section) const;

    QSpinBox* keptBox(int section) const;

    QDoubleSpinBox& targetBox() const { return *m_target; }

    MemoryGauge& gauge() const { return *m_gauge; }

    ChannelScoreChart& chart() const { return *m_chart; }

    QPushButton& pruneButton() const { return *m_prune; }

Q_SIGNALS:
    /// The user changed section `section`'s constraint (queued: the table may be rebuilt).
    void constraintEdited(int section, pruning::EntryConstraint constraint);

    /// The user changed the target percentage.
    void targetEdited(pruning::TargetMemory target);

    /// The user selected section `section`'s row.
    void sectionActivated(int section);

    void pruneRequested();

private:
    void buildRows();

    void updateRows();

    void showScores();

    void editConstraint(int section, int kind);

    void editKept(int section);

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QLabel* m_summary;
    QPushButton* m_prune;
    MemoryGauge* m_gauge;
    QDoubleSpinBox* m_target;
    QTableWidget* m_table;
    ChannelScoreChart* m_chart;
    std::shared_ptr<const PruningRun> m_rowsOf; ///< the run the rows were built for
    int m_selected = -1;
    bool m_updating = false;
};

} // namespace qs::ui
