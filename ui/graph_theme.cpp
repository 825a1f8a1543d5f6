#include "ui/graph_theme.h"

#include "core/graph/op_facts.h"

#include <QFontDatabase>

#include <array>

namespace qs::ui {

namespace {
constexpr int kTitlePointSize = 9;
constexpr int kDetailPointSize = 8;
constexpr int kBadgePointSize = 7;

void setFonts(GraphTheme& theme) {
    theme.titleFont = QFontDatabase::systemFont(QFontDatabase::GeneralFont);
    theme.titleFont.setPointSize(kTitlePointSize);
    theme.titleFont.setBold(true);
    theme.detailFont = QFontDatabase::systemFont(QFontDatabase::GeneralFont);
    theme.detailFont.setPointSize(kDetailPointSize);
    theme.badgeFont = theme.detailFont;
    theme.badgeFont.setFamilies(
        {QStringLiteral("QuantscopeBadge"), theme.detailFont.families().value(0)});
    theme.badgeFont.setPointSize(kBadgePointSize);
    theme.badgeFont.setBold(true);
}

using Family = graph::OpFamily;

Family familyOf(const QString& opType) {
    return graph::opFacts(opType.toStdString()).family;
}
} // namespace

GraphTheme GraphTheme::light() {
    GraphTheme theme;
    theme.background = QColor(0xf6, 0xf7, 0xf9);
    theme.grid = QColor(0xe6, 0xe8, 0xec);
    theme.nodeFill = QColor(0xff, 0xff, 0xff);
    theme.nodeBorder = QColor(0xa9, 0xb0, 0xbb);
    theme.ioFill = QColor(0xe9, 0xee, 0xf5);
    theme.text = QColor(0x1d, 0x22, 0x2b);
    theme.secondaryText = QColor(0x5d, 0x66, 0x73);
    theme.edge = QColor(0x8a, 0x93, 0xa0);
    theme.edgeHover = QColor(0x1f, 0x6f, 0xd1);
    theme.port = QColor(0x56, 0x60, 0x6d);
    theme.weightPort = QColor(0xb3, 0x8a, 0x3a);
    theme.selection = QColor(0x1f, 0x6f, 0xd1);
    theme.inputHighlight = QColor(0x0b, 0x8a, 0x8a);
    theme.outputHighlight = QColor(0xc2, 0x4e, 0x00);
    theme.searchMatch = QColor(0xff, 0xd8, 0x4d);
    theme.minimapViewport = QColor(0x1f, 0x6f, 0xd1);
    setFonts(theme);
    return theme;
}

GraphTheme GraphTheme::dark() {
    GraphTheme theme;
    theme.isDark = true;
    theme.background = QColor(0x1e, 0x21, 0x26);
    theme.grid = QColor(0x2a, 0x2e, 0x35);
    theme.nodeFill = QColor(0x2b, 0x30, 0x38);
    theme.nodeBorder = QColor(0x4b, 0x53, 0x5f);
    theme.ioFill = QColor(0x23, 0x2f, 0x3d);
    theme.text = QColor(0xe3, 0xe6, 0xea);
    theme.secondaryText = QColor(0x9a, 0xa3, 0xae);
    theme.edge = QColor(0x6b, 0x74, 0x80);
    theme.edgeHover = QColor(0x5a, 0xa9, 0xff);
    theme.port = QColor(0xa7, 0xb0, 0xbc);
    theme.weightPort = QColor(0xd9, 0xb2, 0x5f);
    theme.selection = QColor(0x5a, 0xa9, 0xff);
    theme.inputHighlight = QColor(0x3c, 0xc8, 0xc8);
    theme.outputHighlight = QColor(0xff, 0x9a, 0x4d);
    theme.searchMatch = QColor(0xe0, 0xb5, 0x2a);
    theme.minimapViewport = QColor(0x5a, 0xa9, 0xff);
    setFonts(theme);
    return theme;
}

QColor GraphTheme::familyColor(const QString& opType) const {
    // Muted hues, one per family; the dark variant is a little darker and less saturated.
    const auto pick = [this](QColor lightColor, QColor darkColor) {
        return isDark ? darkColor : lightColor;
    };
    switch (familyOf(opType)) {
    case Family::Compute:
        return pick(QColor(0x4a, 0x78, 0xb0), QColor(0x4f, 0x7c, 0xb3));
    case Family::Activation:
        return pick(QColor(0x8a, 0x6f, 0x4e), QColor(0x9b, 0x80, 0x5d));
    case Family::Normalization:
        return pick(QColor(0x6d, 0x6a, 0x9c), QColor(0x7a, 0x77, 0xa8));
    case Family::Pooling:
        return pick(QColor(0x3d, 0x8a, 0x86), QColor(0x4a, 0x95, 0x90));
    case Family::Elementwise:
        return pick(QColor(0x7b, 0x84, 0x90), QColor(0x80, 0x89, 0x95));
    case Family::Shape:
        return pick(QColor(0xa4, 0xab, 0xb5), QColor(0x5c, 0x64, 0x6f));
    case Family::Other:
        break;
    }
    return pick(QColor(0x9a, 0x7a, 0x9a), QColor(0x8a, 0x6c, 0x8a));
}

QColor GraphTheme::bitwidthColor(int bits) const {
    if (colorBlindSafe) {
        switch (bits) { // Okabe & Ito, "Color Universal Design" (2008)
        case 8:
            return {0x00, 0x9E, 0x73};
        case 6:
            return {0xE6, 0x9F, 0x00};
        case 4:
            return {0xD5, 0x5E, 0x00};
        case 2:
            return {0xCC, 0x79, 0xA7};
        case 16:
            return {0x00, 0x72, 0xB2}; // dark enough for the white label
        default:
            return {0x66, 0x66, 0x66};
        }
    }
    switch (bits) {
    case 8:
        return {0x2E, 0x9D, 0x4A};
    case 6:
        return {0xF2, 0x8E, 0x1C};
    case 4:
        return {0xD6, 0x27, 0x28};
    case 2:
        return {0x8E, 0x44, 0xAD};
    case 16:
        return {0x1F, 0x5F, 0x9F}; // a deep blue: white text stays readable, unlike pale grey
    default:
        return {0x6E, 0x6E, 0x6E};
    }
}

QColor GraphTheme::groupColor(int group) {
    static const std::array<QColor, 6> kRings = {
        QColor(0x1F, 0x77, 0xB4), QColor(0xE3, 0x77, 0xC2), QColor(0x17, 0xBE, 0xCF),
        QColor(0x8C, 0x56, 0x4B), QColor(0xBC, 0xBD, 0x22), QColor(0x00, 0x3F, 0x5C)};
    return kRings[static_cast<size_t>(group) % kRings.size()];
}

} // namespace qs::ui
