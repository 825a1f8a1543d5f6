#include "ui/welcome_page.h"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace qs::ui {

namespace {
constexpr int kColumnWidth = 720;
constexpr int kTitlePointScale = 2;
constexpr int kButtonWidth = 160;
constexpr int kButtonHeight = 36;

enum RecentColumn { NameColumn, FolderColumn, ColumnCount };

/// Makes `list` exactly as tall as its rows, so the page stays compact.
void fitListHeight(QTreeWidget& list) {
    const int rows = list.topLevelItemCount();
    const int rowHeight = rows > 0 ? list.sizeHintForRow(0) : 0;
    list.setFixedHeight(rows * rowHeight + 2 * list.frameWidth());
}

QLabel* makeTitle(const QString& text, double scale, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont font = label->font();
    font.setPointSizeF(font.pointSizeF() * scale);
    font.setBold(true);
    label->setFont(font);
    return label;
}
} // namespace

WelcomePage::WelcomePage(QWidget* parent)
    : QWidget(parent)
    , m_openButton(new QPushButton(tr("Open Model…"), this))
    , m_recentTitle(makeTitle(tr("Recent models"), 1.15, this))
    , m_recentList(new QTreeWidget(this))
    , m_noRecent(new QLabel(tr("Models you open appear here."), this)) {
    m_openButton->setDefault(true);
    m_openButton->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    m_openButton->setMinimumSize(kButtonWidth, kButtonHeight);
    m_recentList->setColumnCount(ColumnCount);
    m_recentList->setHeaderHidden(true);
    m_recentList->setRootIsDecorated(false);
    m_recentList->setUniformRowHeights(true);
    m_recentList->header()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
    m_recentList->setCursor(Qt::PointingHandCursor);
    m_recentList->setStyleSheet(QStringLiteral("QTreeView::item { padding: 4px 6px; }"));
    m_noRecent->setEnabled(false);

    auto* column = new QWidget(this);
    column->setMaximumWidth(kColumnWidth);
    auto* columnLayout = new QVBoxLayout(column);
    columnLayout->addWidget(makeHeader());
    columnLayout->addSpacing(16);
    columnLayout->addWidget(m_openButton);
    columnLayout->addSpacing(24);
    columnLayout->addWidget(m_recentTitle);
    columnLayout->addWidget(m_recentList);
    columnLayout->addWidget(m_noRecent);
    columnLayout->addSpacing(16);
    auto* hint = new QLabel(tr("You can also drop an .onnx file anywhere on this window."), column);
    hint->setEnabled(false);
    columnLayout->addWidget(hint);
    columnLayout->addStretch(1);

    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(32, 64, 32, 32);
    outer->addStretch(1);
    outer->addWidget(column, 4);
    outer->addStretch(1);

    connect(m_openButton, &QPushButton::clicked, this, &WelcomePage::openRequested);
    const auto activate = [this](QTreeWidgetItem* item) {
        Q_EMIT recentFileActivated(item->data(NameColumn, Qt::UserRole).toString());
    };
    connect(m_recentList, &QTreeWidget::itemActivated, this, activate);
    if (!style()->styleHint(QStyle::SH_ItemView_ActivateItemOnSingleClick, nullptr, this)) {
        connect(m_recentList, &QTreeWidget::itemClicked, this, activate);
    }
    setRecentFiles({});
}

void WelcomePage::setRecentFiles(const QStringList& files) {
    m_recentList->clear();
    for (const QString& path : files) {
        const QFileInfo info(path);
        auto* item = new QTreeWidgetItem(m_recentList);
        item->setText(NameColumn, info.fileName());
        item->setText(FolderColumn, QDir::toNativeSeparators(info.absolutePath()));
        item->setData(NameColumn, Qt::UserRole, path);
        item->setToolTip(NameColumn, path);
        item->setToolTip(FolderColumn, path);
        item->setForeground(FolderColumn, palette().brush(QPalette::Disabled, QPalette::Text));
    }
    fitListHeight(*m_recentList);
    m_recentList->setVisible(!files.isEmpty());
    m_noRecent->setVisible(files.isEmpty());
}

QWidget* WelcomePage::makeHeader() {
    auto* header = new QWidget(this);
    auto* layout = new QVBoxLayout(header);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(makeTitle(tr("Quantscope"), kTitlePointScale, header));
    auto* tagline = new QLabel(tr("See where quantizers go, choose bitwidths, and export "
                                  "compressed ONNX models."),
                               header);
    tagline->setWordWrap(true);
    layout->addWidget(tagline);
    return header;
}

} // namespace qs::ui
