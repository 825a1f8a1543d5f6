// The Compare overlay (Quantize ▸ Compare With…): another setup, session or compressed export of
// the open model is laid over its graph. Every badge whose point differs on the other side gets an
// amber ring (dashed: the other side has no quantizer there) and the other side's config in its
// tooltip; a legend in the view names the other side and counts the changed points, those only
// here and those only there. It follows the open document: a change of a bit width here is
// compared again at once.
#pragma once

#include "core/quantization/quantization_state.h"
#include "core/report/review_diff.h"

#include <QGraphicsItem>
#include <QPointer>
#include <QWidget>

#include <map>
#include <string>
#include <vector>

namespace qs::ui {

class GraphDocument;
class GraphPage;
class QuantizerBadgeItem;

/// The ring around a badge whose point changed (a child of the badge).
class CompareHaloItem : public QGraphicsItem {
public:
    enum { Type = UserType + 21 };

    CompareHaloItem(QuantizerBadgeItem* badge, bool removed);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    bool removed() const { return m_removed; }

private:
    bool m_weight;
    bool m_removed;
};

/// Which side is compared, and how many points differ.
class CompareLegend : public QWidget {
    Q_OBJECT

public:
    explicit CompareLegend(QWidget* parent = nullptr);

    void setText(const QString& text);

    const QString& text() const { return m_text; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_text;
};

class CompareOverlay : public QObject {
    Q_OBJECT

public:
    explicit CompareOverlay(GraphPage& page, QObject* parent = nullptr);

    /// Follows `document`; a new document ends the comparison.
    void setDocument(GraphDocument* document);

    /// Compares with `marks` (the other side, named `name`) until clear().
    void compareWith(const QString& name, std::vector<quantization::QuantizerMark> marks);

    void clear();

    bool isActive() const { return m_active; }

    /// The changes shown now, by insertion point text.
    const std::map<std::string, report::MarkChange>& changes() const { return m_changes; }

    /// Badges carrying a ring now.
    int haloCount() const;

    CompareLegend& legend() const { return *m_legend; }

    /// Recomputes the changes against the document and redraws rings, tooltips and legend.
    void refresh();

Q_SIGNALS:
    void activeChanged(bool active);

private:
    GraphPage& m_page;
    CompareLegend* m_legend;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_quantizationConnection;
    QString m_name;
    std::vector<quantization::QuantizerMark> m_other;
    std::map<std::string, report::MarkChange> m_changes;
    bool m_active = false;
};

} // namespace qs::ui
