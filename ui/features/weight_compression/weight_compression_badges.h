// Weight-compression badges on the graph: one pill per compressed weight on the top-left corner
// of its consumer's box ("INT4" / "INT8", or "F32" for a weight left in float), filled with the
// bit-width colour of the scene's theme (int4 red, int8 green; Okabe-Ito when colour-blind safe).
// The quantizer badges own the top-right corner, so both can show at once. The overlay follows
// the document's plan and is redrawn after every layout (populating the scene deletes items).
#pragma once

#include "core/compression/weight_compression.h"

#include <QGraphicsObject>
#include <QPointer>

#include <vector>

namespace qs::ui {

class GraphDocument;
class GraphPage;
struct GraphTheme;

/// The pill of one weight's compression mode.
class WeightModeBadgeItem : public QGraphicsObject {
    Q_OBJECT

public:
    enum { Type = UserType + 7 };

    WeightModeBadgeItem(compression::CompressionMode mode, const GraphTheme& theme,
                        QGraphicsItem* parent = nullptr);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    compression::CompressionMode mode() const { return m_mode; }

    /// "INT4", "INT8" or "F32".
    QString label() const;

    /// The fill: the theme's colour of the mode's bit width.
    QColor fillColor() const;

private:
    compression::CompressionMode m_mode;
    const GraphTheme& m_theme;
};

/// Keeps the graph page's scene showing the document's compression plan.
class WeightCompressionOverlay : public QObject {
    Q_OBJECT

public:
    explicit WeightCompressionOverlay(GraphPage& page, QObject* parent = nullptr);

    /// Follows `document`'s plan (nullptr: no badges).
    void setDocument(GraphDocument* document);

    /// The badges shown now (for tests), in plan order of the drawn ops.
    std::vector<WeightModeBadgeItem*> badges() const;

    /// Replaces the badges with the current plan's.
    void refresh();

private:
    void clear();

    GraphPage& m_page;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    std::vector<QPointer<WeightModeBadgeItem>> m_badges;
};

} // namespace qs::ui
