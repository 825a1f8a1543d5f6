// GraphTheme: the colours and fonts the graph scene paints with, in a light and a dark variant,
// plus the muted colour of the stripe that tells op families apart (convolutions, activations,
// normalization, pooling, element-wise, shape ops). Stripes stay desaturated so the bitwidth
// colours of quantizer badges (green, orange, red, purple, grey) remain the loudest thing.
#pragma once

#include <QColor>
#include <QFont>
#include <QString>

namespace qs::ui {

/// Colours and fonts of the graph scene.
struct GraphTheme {
    bool isDark = false;
    QColor background;
    QColor grid;
    QColor nodeFill;
    QColor nodeBorder;
    QColor ioFill; ///< graph input and output boxes
    QColor text;
    QColor secondaryText;
    QColor edge;
    QColor edgeHover;
    QColor port;
    QColor weightPort; ///< input ports fed by an initializer
    QColor selection;
    QColor inputHighlight;  ///< edges and nodes feeding the selection
    QColor outputHighlight; ///< edges and nodes fed by the selection
    QColor searchMatch;
    QColor minimapViewport;
    QFont titleFont;  ///< op type
    QFont detailFont; ///< name and output shape
    QFont badgeFont; ///< quantizer badge labels (family "QuantscopeBadge" first, then the system's)
    bool colorBlindSafe = false; ///< bit widths in the Okabe-Ito palette instead of NNCF's

    /// Badge fill for `bits` (8 green, 6 orange, 4 red, 2 purple, 16 blue, other/float grey).
    QColor bitwidthColor(int bits) const;

    /// The ring colour of unified-scale group `group`.
    static QColor groupColor(int group);

    static GraphTheme light();

    static GraphTheme dark();

    /// The stripe colour of `opType`'s family.
    QColor familyColor(const QString& opType) const;
};

} // namespace qs::ui
