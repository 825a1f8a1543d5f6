// RuleHintBar: the non-modal bar above the graph that appears when the user gives a quantizer
// serving several branches its own bit width under a branch-merging propagation rule (core's
// mergedBranchChoices): every branch gets that width, so the bar offers switching to
// MERGE_WITH_POTENTIAL_REQUANTIZATION (one undoable step), which keeps a quantizer per branch.
#pragma once

#include <QFrame>
#include <QList>
#include <QPointer>

class QLabel;
class QPushButton;

namespace qs::ui {

class GraphDocument;

/// Offers the requantization rule for per-branch bit widths.
class RuleHintBar : public QFrame {
    Q_OBJECT

public:
    explicit RuleHintBar(QWidget* parent = nullptr);

    /// Shows the offer for the branch-serving quantizers `ids` of `document`.
    void offer(GraphDocument& document, const QList<int>& ids);

    /// Switches the offered document to MERGE_WITH_POTENTIAL_REQUANTIZATION and hides the bar.
    void acceptOffer();

    /// Hides the bar (the user declined, or the document changed).
    void dismiss();

    /// What the bar says.
    QString text() const;

    QPushButton& switchButton() const { return *m_switch; }

private:
    QPointer<GraphDocument> m_document;
    QLabel* m_text;
    QPushButton* m_switch;
    QPushButton* m_close;
};

} // namespace qs::ui
